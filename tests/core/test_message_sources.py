"""A database from before imports were idempotent on (persona, source_id): its duplicates are merged on
upgrade, and re-importing completes what a killed import left half done."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.memory.db import connect, sqlite
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.migrations import migrations
from nexus_ark.memory.store import MemoryStore


def _old_database(path: Path) -> None:
    """Messages as an import killed before indexing and then run again left them (items were never
    written for a1 and a2, and a1 was written twice)."""
    db = connect(path)
    migrations.apply(db, stop_before="m005_messages_source_unique")
    rows = [
        ("a1", "Mika", "My sister Keiko visits on Sunday."),
        ("a2", "aria", "Lovely!"),
        (None, "Mika", "a chat message"),
        ("a1", "Mika", "My sister Keiko visits on Sunday."),
        (None, "Mika", "a chat message"),
    ]
    for source_id, speaker, text in rows:
        db.execute(
            "insert into messages (room, speaker, role, content, status, created_at, source_id) "
            "values ('main', ?, 'user', ?, 'complete', '2026-01-01T10:00:00', ?)",
            [speaker, text, source_id],
        )
    db.execute(
        "insert into emotion_log (timestamp, emotion, value, message_id) "
        "values ('2026-01-01T10:00:00', 'joy', 0.8, 4)"
    )
    db.close()


def test_upgrade_merges_duplicate_imported_messages_and_reimport_completes(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _old_database(path)
    store = MemoryStore(path)
    try:
        rows = store.db.execute("select id, source_id from messages order by id").fetchall()
        assert rows == [(1, "a1"), (2, "a2"), (3, None), (5, None)], (
            "first copy kept, chat messages untouched"
        )
        assert store.db.execute("select message_id from emotion_log").fetchall() == [(1,)]
        with pytest.raises(sqlite.IntegrityError):
            store.messages.add(speaker="Mika", role="user", content="again", source_id="a1")

        turns = tmp_path / "turns.jsonl"
        turns.write_text(
            '{"id": "a1", "speaker": "Mika", "text": "My sister Keiko visits on Sunday.", '
            '"timestamp": "2026-01-01T10:00:00"}\n'
            '{"id": "a2", "speaker": "aria", "text": "Lovely!", "timestamp": "2026-01-01T10:00:05"}\n'
            '{"id": "a3", "speaker": "Mika", "text": "She likes curry.", '
            '"timestamp": "2026-01-01T10:00:09"}\n',
            encoding="utf-8",
        )
        report = import_jsonl(turns, on_store(store), {"aria"})
        assert (report.imported, report.skipped_duplicates, report.errors) == (3, 0, [])
        again = import_jsonl(turns, on_store(store), {"aria"})
        assert (again.imported, again.skipped_duplicates) == (0, 3)
        messages = store.db.execute(
            "select source_id, count(*) from messages where source_id is not null group by source_id"
        ).fetchall()
        items = store.db.execute("select source_id, count(*) from items group by source_id").fetchall()
        assert messages == [("a1", 1), ("a2", 1), ("a3", 1)]
        assert items == [("a1", 1), ("a2", 1), ("a3", 1)]
    finally:
        store.close()
