"""Feelings read from history that came in without them (issue 21): an imported conversation has no
emotion readings, so devotion stayed 0.0 after days of worry and the emotion plot was empty. The person's
imported messages are read with the same detector as a live turn, each stamped with its own time."""

from __future__ import annotations

from datetime import datetime, timedelta

from nexus_ark.clock import iso
from nexus_ark.memory.components import EmotionEntry
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector

# What the drives (72 h) and the Inner life window's plot (a week, zoomable) look at, with room: the rest of
# a years-long export is not worth minutes of reading at import.
READ_DAYS = 30
READ_MAX = 2000


def _parsed(stamp: str) -> datetime:
    dt = datetime.fromisoformat(stamp)
    return dt.astimezone() if dt.tzinfo is None else dt


def read_unread_feelings(memory: MemoryStore, detector: EmotionDetector) -> int:
    """Log an emotion reading for each of the person's messages that has none, from the newest back over
    READ_DAYS (at most READ_MAX); returns how many were read."""
    rows = memory.db.execute(
        "select m.id, m.created_at, m.content from messages m where m.role = 'user' and m.hidden = 0 "
        "and m.content != '' and not exists (select 1 from emotion_log e where e.message_id = m.id) "
        "order by m.created_at desc limit ?",
        [READ_MAX],
    ).fetchall()
    if not rows:
        return 0
    newest = _parsed(rows[0][1])
    rows = [r for r in rows if _parsed(r[1]) >= newest - timedelta(days=READ_DAYS)]
    readings = detector.classify_many([text for _, _, text in rows])
    with memory.db.atomic():
        for (mid, stamp, text), feeling in zip(rows, readings, strict=True):
            memory.components.log_emotion(
                EmotionEntry(
                    timestamp=iso(_parsed(stamp)),
                    emotion=feeling.label,
                    value=feeling.value,
                    snippet=text,
                    message_id=mid,
                )
            )
    return len(rows)
