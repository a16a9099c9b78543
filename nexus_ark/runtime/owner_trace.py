"""Proof that one thread drives a persona's memory: with NEXUS_ARK_TRACE_OWNER=FILE set, every statement the
owner connection runs is written to FILE with the name of the thread that ran it. Tests set it for a
command run in a process of its own and check that every line names the persona's queue thread. Off (and
free) unless the variable is set."""

from __future__ import annotations

import os
import threading

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
