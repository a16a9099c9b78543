"""Opening a persona's memory.db: connection, migrations, crash recovery."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from nexus_ark.clock import Clock
from nexus_ark.errors import DatabaseError
from nexus_ark.memory.archive import Archive
from nexus_ark.memory.components import Components
from nexus_ark.memory.db import connect, sqlite
from nexus_ark.memory.knowledge import KnowledgeBase
from nexus_ark.memory.messages import MessageStore
from nexus_ark.memory.migrations import migrate


class MemoryStore:
    """Everything a persona remembers, in one SQLite file."""

    def __init__(self, path: Path, clock: Clock | None = None) -> None:
        self.path = path
        self.db: sqlite_utils.Database = connect(path)
        try:
            migrate(self.db, str(path))
        except sqlite.DatabaseError as exc:
            self.db.close()
            raise DatabaseError(
                f"{path} is not a Nexus Ark memory database or is damaged: {exc}.",
                hint="It was left untouched. Restore it from the backups/ folder, or move it aside.",
            ) from exc
        except DatabaseError:
            self.db.close()
            raise
        self.messages = MessageStore(self.db, clock)
        self.archive = Archive(self.db, clock)
        self.components = Components(self.db, self.archive, clock)
        self.knowledge = KnowledgeBase(self.db, self.archive, path.parent / "knowledge", clock)
        self.recovered = self.messages.recover_interrupted()

    def close(self) -> None:
        self.db.close()
