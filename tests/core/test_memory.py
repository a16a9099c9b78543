from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.errors import DatabaseError
from nexus_ark.memory.db import connect, vec_version
from nexus_ark.memory.store import MemoryStore


def test_real_sqlite_vec_and_wal(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    try:
        assert vec_version(store.db).startswith("v0.1")
        assert store.db.execute("pragma journal_mode").fetchone()[0] == "wal"
        # sqlite-vec really works through this connection, not only loads.
        store.db.execute("create virtual table v using vec0(e float[3])")
        store.db.execute("insert into v(rowid, e) values (1, '[1,0,0]'), (2, '[0,1,0]')")
        nearest = store.db.execute("select rowid from v where e match '[0.9,0.1,0]' and k = 1").fetchone()[0]
        assert nearest == 1
    finally:
        store.close()


def test_messages_round_trip_and_survive_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = MemoryStore(path)
    a = store.messages.add(speaker="user", role="user", content="おはよう")
    b = store.messages.add(speaker="aria", role="assistant", content="Good morning", meta={"tokens": 3})
    store.close()
    store = MemoryStore(path)
    try:
        rows = store.messages.recent()
        assert [r.id for r in rows] == [a, b]
        assert rows[0].content == "おはよう" and rows[0].room == "main" and rows[0].speaker == "user"
        assert rows[1].meta == {"tokens": 3}
        assert store.messages.recent(limit=1)[0].id == b
    finally:
        store.close()


def test_streaming_reply_is_marked_interrupted_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = MemoryStore(path)
    reply = store.messages.add(speaker="aria", role="assistant", content="", status="streaming")
    store.messages.update_content(reply, "half a thought")
    store.db.conn.close()  # no clean shutdown
    store = MemoryStore(path)
    try:
        assert store.recovered == 1
        row = store.messages.get(reply)
        assert row.status == "interrupted" and row.content == "half a thought"
    finally:
        store.close()


def test_database_from_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    MemoryStore(path).close()
    db = connect(path)
    db["_sqlite_migrations"].insert(
        {"migration_set": "nexus_ark", "name": "m999_from_the_future", "applied_at": "2030-01-01"}
    )
    db.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseError) as err:
        MemoryStore(path)
    assert "newer version" in str(err.value) and str(path) in str(err.value)
    assert "m999_from_the_future" in str(err.value)
    assert path.read_bytes() == before


def test_corrupt_database_is_named_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    garbage = b"this is not sqlite at all" * 200
    path.write_bytes(garbage)
    with pytest.raises(DatabaseError) as err:
        MemoryStore(path)
    assert str(path) in str(err.value)
    assert path.read_bytes() == garbage
