"""Proof that one thread drives a persona's memory, and a guard that makes it so in tests.

With NEXUS_ARK_TRACE_OWNER=FILE set, every statement the owner connection runs is written to FILE with the
name of the thread that ran it. Tests set it for a command run in a process of its own and check that every
line names the persona's queue thread. Off (and free) unless the variable is set."""

from __future__ import annotations

import os
import threading

from nexus_ark.memory.db import sqlite
from nexus_ark.memory.store import MemoryStore

TRACE_ENV = "NEXUS_ARK_TRACE_OWNER"


def trace_owner_statements(memory: MemoryStore) -> None:
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    lock = threading.Lock()

    def trace(statement: str) -> None:
        line = f"{threading.current_thread().name}\t{' '.join(statement.split())[:160]}\n"
        with lock, open(path, "a", encoding="utf-8") as out:
            out.write(line)

    memory.db.conn.set_trace_callback(trace)


# With NEXUS_ARK_STRICT_OWNER=1 (the test suite sets it), a statement on a persona's owner connection from
# any thread but its queue's (or one that borrowed it, below) is refused by SQLite itself: a write from the
# wrong thread fails loudly where it happens instead of racing the queue for the one transaction.
STRICT_ENV = "NEXUS_ARK_STRICT_OWNER"


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def guard_owner(memory: MemoryStore) -> None:
    """Refuse statements from other threads (strict mode only; free otherwise). Call on the owner's thread.
    The connection keeps no prepared statements in strict mode (db.connect), so each is checked anew."""
    if not strict():
        return
    allowed = {threading.get_ident()}
    memory.owner_threads = allowed

    def authorize(action: int, arg1: object, arg2: object, database: object, source: object) -> int:
        return sqlite.SQLITE_OK if threading.get_ident() in allowed else sqlite.SQLITE_DENY

    memory.db.conn.set_authorizer(authorize)


def borrow(memory: MemoryStore) -> None:
    """This thread may use the owner connection too: a test planting data while nothing else runs."""
    threads = getattr(memory, "owner_threads", None)
    if threads is not None:
        threads.add(threading.get_ident())
