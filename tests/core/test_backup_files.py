"""A backup is one file, and rotating it out deletes it whole (issue 23, defect 13): rotation used to leave
the -wal and -shm of every copy it deleted (68 pairs after ~80 imports), because each copy kept the live
database's WAL mode and every read-only look at it (the daily fingerprint, the backup list) made the pair."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.memory.backups import backup, backup_if_due, list_backups, verify_backup
from nexus_ark.memory.db import sqlite
from nexus_ark.memory.store import MemoryStore
from nexus_ark.paths import shipped_personas_dir

SIDECAR = ("-wal", "-shm", "-journal")


def _sidecars(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(SIDECAR))


def test_rotating_backups_out_leaves_no_wal_or_shm_files(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 1, 1, 9, 0, tzinfo=UTC))
    store = MemoryStore(tmp_path / "memory.db", clock)
    folder = tmp_path / "backups"
    for day in range(10):
        store.messages.add(speaker="user", role="user", content=f"day {day}")
        taken = backup_if_due(store, folder, keep=3, clock=clock)
        assert taken is not None
        assert verify_backup(taken) == day + 1
        assert list_backups(folder)[0].messages == day + 1  # read, as the settings page does
        clock.advance(86_400)
    assert sorted(os.listdir(folder)) == [
        "memory-20260108-090000.db",
        "memory-20260109-090000.db",
        "memory-20260110-090000.db",
    ]
    store.close()


def test_a_backup_is_one_file_that_a_read_leaves_alone(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    store.messages.add(speaker="user", role="user", content="hello")
    taken = backup(store, tmp_path / "backups")
    conn = sqlite.connect(f"file:{taken}?mode=ro", uri=True)  # any reader: a person's own sqlite3 shell
    try:
        assert conn.execute("pragma journal_mode").fetchone()[0] == "delete"
        assert conn.execute("select count(*) from messages").fetchone()[0] == 1
    finally:
        conn.close()
    assert _sidecars(tmp_path / "backups") == []
    store.close()


def test_the_pairs_older_rotations_left_are_removed_and_older_copies_become_one_file(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    store = MemoryStore(tmp_path / "memory.db", clock)
    store.messages.add(speaker="user", role="user", content="kept")
    folder = tmp_path / "backups"
    folder.mkdir()
    for name in ("memory-20251201-090000.db", "restoring-20251202-090000.tmp"):  # deleted long ago
        for suffix in ("-wal", "-shm"):
            (folder / (name + suffix)).write_bytes(b"\0" * 32)
    legacy = folder / "memory-20260104-090000.db"  # a copy in WAL mode, as this version made them
    conn = sqlite.connect(str(legacy))
    store.db.conn.backup(conn)
    conn.close()
    reader = sqlite.connect(f"file:{legacy}?mode=ro", uri=True)
    reader.execute("select count(*) from messages").fetchone()
    reader.close()
    assert _sidecars(folder) == [
        "memory-20251201-090000.db-shm",
        "memory-20251201-090000.db-wal",
        "memory-20260104-090000.db-shm",
        "memory-20260104-090000.db-wal",
        "restoring-20251202-090000.tmp-shm",
        "restoring-20251202-090000.tmp-wal",
    ]
    backup(store, folder, clock=clock)
    assert _sidecars(folder) == []
    assert verify_backup(legacy) == 1  # still whole, now one file
    list_backups(folder)
    assert _sidecars(folder) == []
    store.close()


def test_a_restored_backup_keeps_the_live_memory_in_wal_mode_and_leaves_no_files_behind(
    tmp_path: Path,
) -> None:
    clock = FixedClock(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    app = NexusApp(tmp_path / "data", clock=clock, shipped_personas=shipped_personas_dir()).open()
    try:
        memory = app.personas.memory("aria")
        memory.messages.add(speaker="user", role="user", content="before the backup")
        folder = app.layout.backups_dir / "aria"
        chosen = backup(memory, folder, clock=clock)
        memory.messages.add(speaker="user", role="user", content="after the backup")
        safety = app.admin.restore_backup("aria", chosen)
        assert safety is not None and verify_backup(safety) == 2
        restored = app.personas.memory("aria")
        assert [m.content for m in restored.messages.recent(limit=10)] == ["before the backup"]
        assert restored.db.execute("pragma journal_mode").fetchone()[0] == "wal"
        list_backups(folder)
        assert _sidecars(folder) == []
    finally:
        app.close()
