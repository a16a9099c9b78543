"""Strict owner mode (the test suite's NEXUS_ARK_STRICT_OWNER=1): a persona's owner connection refuses
statements from any thread but its queue's (and threads that borrowed it), in Python, before SQLite is
entered. SQLite's authorizer did it before and could deadlock two threads on one connection."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.owner_trace import OwnerThreadError
from tests.conftest import subprocess_env


def _scripted(config: ModelConfig) -> ScriptedBackend:
    return ScriptedBackend(["Hello."], model_id=config.spec)


def test_the_owner_connection_refuses_a_statement_from_another_thread_and_names_it(data_dir: Path) -> None:
    app = NexusApp(data_dir, backend_factory=_scripted).open()
    try:
        runtime = app.personas.runtime("aria")
        memory = runtime.memory  # the owner connection itself, not borrowed: this thread is a stranger
        with pytest.raises(OwnerThreadError) as caught:
            memory.messages.add(speaker="user", role="user", content="written from the wrong thread")
        message = str(caught.value)
        assert "'MainThread'" in message and "persona aria's" in message and "'persona-aria'" in message
        with pytest.raises(OwnerThreadError):
            memory.messages.count()
        # A cursor made on the queue's thread and run again here is refused too.
        cursor = runtime.queue.call(
            "a cursor", lambda: memory.db.conn.execute("select count(*) from messages")
        )
        with pytest.raises(OwnerThreadError):
            cursor.execute("select count(*) from messages")
        with pytest.raises(OwnerThreadError), memory.db.conn:
            pass
        # Nothing was written; on its queue's thread the same connection works.
        assert app.personas.change_memory("aria", "count", lambda owner: owner.messages.count()) == 0
    finally:
        app.close()


# Two borrowed threads and the owner's read the owner connection at once. Under SQLite's authorizer this
# froze the whole process within a second (one thread held the interpreter lock waiting for the connection's
# mutex, the other held the mutex waiting for the interpreter lock in the callback), so no join timeout
# could fire: the child process is bounded from outside as well.
_CONCURRENT = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from nexus_ark.memory.store import MemoryStore
    from nexus_ark.runtime.owner_trace import borrow, guard_owner

    folder = Path(sys.argv[1]) / "aria"
    folder.mkdir(parents=True)
    memory = MemoryStore(folder / "memory.db")
    guard_owner(memory)
    for n in range(200):
        memory.messages.add(speaker="user", role="user", content=f"message {n}")
    counts, failures = [], []

    def read(borrowing):
        try:
            if borrowing:
                borrow(memory)
            for _ in range(2000):
                rows = memory.db.conn.execute("select id from messages where id <= ?", (50,)).fetchall()
                counts.append(len(rows))
        except BaseException as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=read, args=(True,), daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    read(False)
    for thread in threads:
        thread.join(60)
    alive = sum(thread.is_alive() for thread in threads)
    print(f"alive={alive} reads={len(counts)} rows={sorted(set(counts))} failures={failures[:3]}")
    memory.close()
    """
)


def test_threads_sharing_a_borrowed_owner_connection_do_not_deadlock(tmp_path: Path) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CONCURRENT, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            env=subprocess_env(NEXUS_ARK_STRICT_OWNER="1"),
            encoding="utf-8",
        )
    except subprocess.TimeoutExpired:
        pytest.fail("three threads on the borrowed owner connection deadlocked (no answer in 120 s)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alive=0 reads=6000 rows=[50] failures=[]", done.stderr
