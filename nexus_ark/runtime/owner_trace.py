"""Proof that one thread drives a persona's memory, and a guard that makes it so in tests.

With NEXUS_ARK_TRACE_OWNER=FILE set, every statement the owner connection runs is written to FILE with the
name of the thread that ran it. Tests set it for a command run in a process of its own and check that every
line names the persona's queue thread. Off (and free) unless the variable is set. Like SQLite's authorizer,
the trace callback takes the interpreter lock inside the connection's mutex: two threads running statements
on a traced connection at once can deadlock, so trace only where one thread is expected."""

from __future__ import annotations

import os
import threading

from nexus_ark.memory.db import GuardedConnection, OwnerThreadError
from nexus_ark.memory.store import MemoryStore

__all__ = [
    "STRICT_ENV",
    "TRACE_ENV",
    "OwnerThreadError",
    "borrow",
    "guard_owner",
    "strict",
    "trace_owner_statements",
]

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
# any thread but its queue's (or one that borrowed it, below) is refused before it reaches SQLite
# (memory/db.GuardedConnection raises OwnerThreadError, naming the thread and the persona): a write from
# the wrong thread fails loudly where it happens instead of racing the queue for the one transaction.
STRICT_ENV = "NEXUS_ARK_STRICT_OWNER"


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def guard_owner(memory: MemoryStore) -> None:
    """Refuse statements from other threads (strict mode only; free otherwise). Call on the owner's thread."""
    if not strict():
        return
    conn = memory.db.conn
    if not isinstance(conn, GuardedConnection):
        raise TypeError(f"{memory.path} was not opened by memory.db.connect: its thread cannot be guarded")
    conn.owner_name = f"persona {memory.path.parent.name}'s owner connection ({memory.path})"
    conn.owner_thread_name = threading.current_thread().name
    conn.owner_threads = frozenset({threading.get_ident()})


def borrow(memory: MemoryStore) -> None:
    """This thread may use the owner connection too, from now on: a test planting data while nothing else
    runs (app.personas.memory). Free where the connection is not guarded."""
    conn = memory.db.conn
    if not isinstance(conn, GuardedConnection):
        return
    threads = conn.owner_threads
    if threads is not None:
        conn.owner_threads = threads | {threading.get_ident()}  # a new set: a checking thread sees old or new
