"""Export then import reproduces a memory; backups are whole while the app writes; old ones rotate out."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.clock import FixedClock, iso
from nexus_ark.errors import NexusArkError
from nexus_ark.memory import retention
from nexus_ark.memory.backups import backup, backup_if_due, verify_backup
from nexus_ark.memory.components import Episode, Goal, Insight
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.db import connect
from nexus_ark.memory.portability import TABLES, export_memory, import_memory
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.state import history
from nexus_ark.paths import WINDOWS_RESERVED


def _fill(store: MemoryStore) -> None:
    store.messages.add(speaker="user", role="user", content="おはよう、アリア")
    store.messages.add(speaker="aria", role="assistant", content="Good morning!", meta={"tokens": 3})
    index_turns(
        store.archive,
        [Turn(speaker="Mika", text="Luna is twelve.", created_at="2026-01-01T10:00:00", source_id="m1")],
    )
    c = store.components
    c.set_core_memory("I am Aria.")
    c.set_notepad("Dentist on Friday.")
    c.write_entity("Luna", "Mika's cat.", ["m1"])
    c.put_episode(Episode(date="2026-01-01", summary="Talked about Luna.", key_events=["cat"]))
    c.put_goal(Goal(term="long", goal="Be a good friend to Mika"))
    c.add_insight(
        Insight(
            trigger_topic="Luna",
            insight="Mika loves her cat.",
            strategy="Ask about Luna.",
            log_entry="A cat walked through my dream.",
        )
    )


def test_export_then_import_reproduces_the_memory(tmp_path: Path) -> None:
    source = MemoryStore(tmp_path / "a.db")
    _fill(source)
    export_memory(source, tmp_path / "export", "Aria")
    md = (tmp_path / "export" / "memory.md").read_text(encoding="utf-8")
    assert "I am Aria." in md and "Be a good friend to Mika" in md and "Ask about Luna." in md
    assert "Mika's cat." in (tmp_path / "export" / "entities" / "Luna.md").read_text(encoding="utf-8")
    assert "おはよう" in (tmp_path / "export" / "conversations.md").read_text(encoding="utf-8")

    target = MemoryStore(tmp_path / "b.db")
    import_memory(target, tmp_path / "export")
    for table in TABLES:
        query = f"select * from {table} order by rowid"
        assert list(target.db.query(query)) == list(source.db.query(query)), table
    assert target.archive.search("Luna", None, mode="fts"), "the full-text index was rebuilt"
    timeline = [(e.time, e.kind, e.summary) for e in source.activity.query()]
    assert timeline and [(e.time, e.kind, e.summary) for e in target.activity.query()] == timeline
    with pytest.raises(NexusArkError) as err:
        import_memory(target, tmp_path / "export")
    assert "already holds memories" in str(err.value)
    source.close()
    target.close()


def test_the_drive_plot_older_than_the_window_moves_with_the_export(tmp_path: Path) -> None:
    """Past the 14 days of detail a persona's drives are one point a day (drive_daily, memory/retention.py):
    an export and import keeps them, so the plot on the new machine reaches as far back as the old one."""
    start = datetime(2026, 10, 1, 12, tzinfo=UTC)
    clock = FixedClock(start)
    source = MemoryStore(tmp_path / "a.db", clock)
    for day in range(40):
        for hour in (0, 8, 16):
            when = start + timedelta(days=day, hours=hour)
            source.db.execute(
                "insert into drive_history (time, trigger, boredom, curiosity, goal_achievement, devotion, "
                "dominant, narrative, inputs) "
                "values (?, 'schedule', ?, 0.2, 0.3, 0.4, 'devotion', 'n', '{}')",
                [iso(when), 0.01 * day],
            )
    clock.advance(40 * 86400)
    assert retention.apply(source.db, clock.now().astimezone()).drive_rolled > 0
    before = history(source)
    assert [p for p in before if p.trigger == "daily"], "older days are daily points"
    export_memory(source, tmp_path / "export", "Aria")
    target = MemoryStore(tmp_path / "b.db", clock)
    import_memory(target, tmp_path / "export")
    assert [(p.time, p.trigger, p.levels) for p in history(target)] == [
        (p.time, p.trigger, p.levels) for p in before
    ]
    source.close()
    target.close()


def test_backup_while_writing_is_whole(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    writer = MemoryStore(tmp_path / "memory.db")  # a second connection, as the app's worker would be
    stop = threading.Event()

    def keep_writing() -> None:
        while not stop.is_set():
            writer.messages.add(speaker="user", role="user", content="still typing")

    thread = threading.Thread(target=keep_writing)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while store.messages.count() < 20:  # the writer is well under way
            assert time.monotonic() < deadline, "the writer never got going"
            time.sleep(0.01)
        path = backup(store, tmp_path / "backups")
    finally:
        stop.set()
        thread.join()
    assert verify_backup(path) > 0
    store.close()
    writer.close()


def test_backups_rotate_and_run_once_a_day(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    store = MemoryStore(tmp_path / "memory.db")
    folder = tmp_path / "backups"
    for _ in range(10):
        assert backup_if_due(store, folder, keep=3, clock=clock) is not None
        assert backup_if_due(store, folder, keep=3, clock=clock) is None  # same day: not again
        clock.advance(86400)
    assert [p.name for p in sorted(folder.glob("*.db"))] == [
        "memory-20261108-090000.db",
        "memory-20261109-090000.db",
        "memory-20261110-090000.db",
    ]
    store.close()


def test_the_newest_backup_holds_the_day_after_close(tmp_path: Path) -> None:
    """The backup taken when memory opens comes before that day's talk; the one at close holds it."""
    clock = FixedClock(datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    folder = tmp_path / "backups"
    for day in range(1, 11):
        store = MemoryStore(tmp_path / "memory.db", clock)
        backup_if_due(store, folder, clock=clock)  # as the app does when it opens memory
        clock.advance(3600)
        store.messages.add(speaker="user", role="user", content=f"what we said on day {day}")
        clock.advance(3600)
        assert backup_if_due(store, folder, clock=clock, after_writes=True) is not None
        assert backup_if_due(store, folder, clock=clock, after_writes=True) is None, "nothing new: no copy"
        store.close()
        newest = sorted(folder.glob("memory-*.db"))[-1]
        db = connect(newest)
        try:
            said = [r[0] for r in db.execute("select content from messages order by id")]
        finally:
            db.close()
        assert said[-1] == f"what we said on day {day}"
        clock.advance(86400 - 7200)
    backups = sorted(p.name for p in folder.glob("memory-*.db"))
    assert len(backups) == 7, "one a day, seven days kept"
    assert backups[-1] == "memory-20261110-110000.db" and backups[0] == "memory-20261104-110000.db"


def test_a_second_backup_in_the_same_second_replaces_the_first_whole_and_leaves_no_partial_file(
    tmp_path: Path,
) -> None:
    clock = FixedClock(datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    store = MemoryStore(tmp_path / "memory.db", clock)
    folder = tmp_path / "backups"
    first = backup(store, folder, clock=clock)
    (folder / ".partial-memory-20261031-230000.db").write_bytes(b"cut short by a crash")
    store.messages.add(speaker="user", role="user", content="said a moment later")
    second = backup(store, folder, clock=clock)
    assert second == first
    assert sorted(p.name for p in folder.iterdir()) == [first.name], "one whole copy, nothing beside it"
    assert verify_backup(second) == 1
    db = connect(second, read_only=True)
    try:
        assert [r[0] for r in db.execute("select content from messages")] == ["said a moment later"]
    finally:
        db.close()
    store.close()


def test_every_entity_gets_a_file_every_os_can_create_and_none_overwrites_another(tmp_path: Path) -> None:
    """A lore entry named "con" exported as entities/con.md, a name Windows refuses; "Mika" and "Mika!"
    (or "Café!" and "Café?") wrote one file, the second entity overwriting the first."""
    store = MemoryStore(tmp_path / "m.db")
    for name, text in [
        ("con", "A lore entry."),
        ("Mika", "The person."),
        ("Mika!", "A town."),
        ("x" * 300, "Long."),
    ]:
        store.components.write_entity(name, text, [])
    export_memory(store, tmp_path / "export")
    files = sorted((tmp_path / "export" / "entities").iterdir())
    stems = [f.stem.casefold() for f in files]
    assert len(files) == 4 and len(set(stems)) == 4, [f.name for f in files]
    assert not set(stems) & WINDOWS_RESERVED and all(len(f.name.encode()) <= 255 for f in files)
    texts = "".join(f.read_text(encoding="utf-8") for f in files)
    assert all(t in texts for t in ("A lore entry.", "The person.", "A town.", "Long."))
    store.close()
