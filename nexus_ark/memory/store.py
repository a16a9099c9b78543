"""Opening a persona's memory.db: connection, migrations, crash recovery.

A persona's memory has one owner in a process (NexusApp opens it once): only the owner migrates the schema
and marks replies cut off by a crash as "interrupted", and in the app it is the only one that writes. Every
other connection (a memory window, the conversation's history, a search from the command line) attaches as a
read-only reader (or, outside a running app, a peer that writes without migrating) and never runs recovery,
so opening one while a reply streams cannot mark that reply interrupted.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Literal

import sqlite_utils

from nexus_ark.clock import Clock
from nexus_ark.errors import DatabaseError
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.archive import Archive
from nexus_ark.memory.components import Components
from nexus_ark.memory.conversation_index import forget_in_neighbours
from nexus_ark.memory.db import connect, database_error, sqlite
from nexus_ark.memory.dream_jobs import DreamJobs
from nexus_ark.memory.drive_history import DriveHistory
from nexus_ark.memory.job_runs import JobRuns
from nexus_ark.memory.knowledge import KnowledgeBase
from nexus_ark.memory.messages import MessageStore
from nexus_ark.memory.migrations import check_current, migrate

# owner: migrates and recovers (once per process, NexusApp does it); peer: another writing connection
# for work off the owner's thread; reader: a read-only connection for searches and views.
StoreRole = Literal["owner", "peer", "reader"]


class MemoryStore:
    """Everything a persona remembers, in one SQLite file."""

    def __init__(self, path: Path, clock: Clock | None = None, *, role: StoreRole = "owner") -> None:
        self.path = path
        self.role = role
        self.db: sqlite_utils.Database = connect(path, read_only=role == "reader")
        try:
            if role == "owner":
                migrate(self.db, str(path))
            else:
                check_current(self.db, str(path))
            self.messages = MessageStore(self.db, clock)
            self.archive = Archive(self.db, clock)
            self.activity = ActivityLog(self.db, clock)  # the timeline; components record their writes in it
            self.components = Components(self.db, self.archive, clock, activity=self.activity)
            self.knowledge = KnowledgeBase(
                self.db, self.archive, path.parent / "knowledge", clock, activity=self.activity
            )
            self.dream_jobs = DreamJobs(self.db, clock)  # the dreams' passes (a reader's: the dream diary)
            self.job_runs = JobRuns(self.db)  # when each scheduled job last ran
            self.drive_history = DriveHistory(self.db)  # the drives' points over time
            self.recovered = self.messages.recover_interrupted() if role == "owner" else 0
        except sqlite.Error as exc:
            self.db.close()
            raise database_error(exc, path) from exc
        except DatabaseError:
            self.db.close()
            raise

    def forget(self, item_ids: list[int]) -> int:
        """Delete memories for good, because the person asked: the archive items, their vectors, the
        messages they came from, and the component rows (entity, episode, insight, goal) behind them.
        Core memory is edited, not forgotten. Returns how many items were deleted."""
        if not item_ids:
            return 0
        marks = ",".join("?" * len(item_ids))
        rows = self.db.execute(
            f"select id, kind, source_id, text from items where id in ({marks}) and kind != 'core'", item_ids
        ).fetchall()
        ids = [r[0] for r in rows]
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        with self.db.atomic():
            sources = [src for _, kind, src, _ in rows if kind == "message" and src]
            message_ids = [int(src[4:]) for src in sources if src.startswith("msg:")]
            other_sources = [src for src in sources if not src.startswith("msg:")]
            if message_ids:
                self.db.execute(
                    f"delete from messages where id in ({','.join('?' * len(message_ids))})", message_ids
                )
            if other_sources:
                self.db.execute(
                    f"delete from messages where source_id in ({','.join('?' * len(other_sources))})",
                    other_sources,
                )
            for table in ("entities", "episodes", "insights", "goals"):
                self.db.execute(f"delete from {table} where item_id in ({marks})", ids)
            self.db.execute(f"update kb_chunks set item_id = null where item_id in ({marks})", ids)
            # Neighbouring turns carried it in their context and vectors: by their recorded links (never
            # by matching text, which would alter every identical or longer turn), they are rebuilt.
            forget_in_neighbours(self.archive, ids)
            self.archive.delete_items(ids)
        return len(ids)

    def close(self) -> None:
        # sqlean's close() holds the GIL while SQLite folds the WAL into the database, stopping every
        # other thread (the window's) for tens of ms on a large WAL; the same checkpoint through
        # execute() releases the GIL, and PASSIVE never waits for readers. Close then has little left.
        if self.role != "reader":
            with contextlib.suppress(sqlite.Error):  # then close() checkpoints what it can, as before
                self.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        self.db.close()
