"""Feelings read from history that came in without them (issue 21): an imported conversation has no
emotion readings, so devotion stayed 0.0 after days of worry and the emotion plot was empty. The person's
imported messages are read with the same detector as a live turn, each stamped with its own time."""

from __future__ import annotations

from datetime import datetime, timedelta

from nexus_ark.clock import iso, stored_time
from nexus_ark.memory.components import EmotionEntry
from nexus_ark.memory.importer import WriteGate, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector, EmotionReading

# What the drives (72 h) and the Inner life window's plot (a week, zoomable) look at, with room: the rest of
# a years-long export is not worth minutes of reading at import.
READ_DAYS = 30
READ_MAX = 2000


def _parsed(stamp: str) -> datetime:
    parsed = stored_time(stamp)
    assert parsed is not None  # _unread keeps only messages with a usable time
    return parsed


def read_unread_feelings(memory: MemoryStore, detector: EmotionDetector) -> int:
    """Log an emotion reading for each of the person's messages that has none, from the newest back over
    READ_DAYS (at most READ_MAX); returns how many were read. The caller owns `memory`."""
    return read_feelings(on_store(memory), detector)


def read_feelings(write: WriteGate, detector: EmotionDetector) -> int:
    """The same through the memory's owner: the messages are picked and the readings logged in its line,
    the reading itself (the slow part, seconds for a long import) on the caller's thread."""
    rows = write(_unread)
    if not rows:
        return 0
    readings = detector.classify_many([text for _, _, text in rows])
    write(lambda memory: _log(memory, rows, readings))
    return len(rows)


def _unread(memory: MemoryStore) -> list[tuple[int, str, str]]:
    rows = memory.messages.unread_feelings(READ_MAX)
    # A message whose stored time is no usable time (a year-1 line an older version imported) has no
    # day to read a feeling for: left out, never a traceback.
    rows = [r for r in rows if stored_time(r[1]) is not None]
    if not rows:
        return []
    newest = _parsed(rows[0][1])
    return [r for r in rows if _parsed(r[1]) >= newest - timedelta(days=READ_DAYS)]


def _log(memory: MemoryStore, rows: list[tuple[int, str, str]], readings: list[EmotionReading]) -> None:
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
