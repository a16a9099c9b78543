"""Imported history gets the person's feelings read (issue 21): an imported conversation carried no
emotion readings, so devotion stayed 0.0 after days of worry. The real detector (the bundled e5 and its
trained head) reads the five days in tests/data."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from nexus_ark.clock import FixedClock
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind import state
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.mind.imported import read_unread_feelings

DAYS = Path(__file__).resolve().parents[1] / "data" / "dream_days.jsonl"
EVENING_AFTER = datetime(2026, 11, 22, 22, 0, tzinfo=UTC)


def test_imported_worry_is_read_and_moves_devotion(tmp_path: Path):
    memory = MemoryStore(tmp_path / "m.db", FixedClock(EVENING_AFTER))
    try:
        import_jsonl(DAYS, on_store(memory), {"Aria", "aria"})
        before = state.current(memory, EVENING_AFTER, dict(state.DEFAULT_THRESHOLDS), "en")
        assert before.drives["devotion"].level == 0.0, "nothing read: the worry does not count"

        person = memory.db.execute("select count(*) from messages where role = 'user'").fetchone()[0]
        assert read_unread_feelings(memory, EmotionDetector()) == person
        log = memory.components.emotions()
        assert len(log) == person and all(e.message_id for e in log)
        worried = [e for e in log if e.timestamp.startswith(("2026-11-21", "2026-11-22")) and e.value < 0]
        assert len(worried) >= 3, [(e.snippet, e.emotion) for e in log]
        after = state.current(memory, EVENING_AFTER, dict(state.DEFAULT_THRESHOLDS), "en")
        assert after.drives["devotion"].level > 0.3
        assert read_unread_feelings(memory, EmotionDetector()) == 0, "each message is read once"
    finally:
        memory.close()
