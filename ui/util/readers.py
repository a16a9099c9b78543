"""A window's read-only connection to a persona's memory, for the reads it runs on its lane (a SerialWorker).

The persona's runtime owns memory.db and does every write; a window reads through a connection of its own
(WAL lets it read while the runtime writes) and never runs recovery. The connection is opened on the lane's
thread at the first read, used there only, and closed there: by the lane's last task (lane.close(reader.close)
needs no reference to the window), or after a read failed, so the next read opens a fresh one (a locked or
replaced file, a persona restored from a backup) instead of failing on the broken one for good.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from nexus_ark.app import NexusApp
from nexus_ark.memory.store import MemoryStore

T = TypeVar("T")


class ReadOnlyMemory:
    """Plain Python, no Qt: every method but the constructor runs on the lane's thread."""

    def __init__(self, app: NexusApp, slug: str = "") -> None:
        self.app = app
        self.slug = slug  # the persona read when read() names none
        self.store: MemoryStore | None = None
        self._open_slug = ""

    def open(self, slug: str) -> MemoryStore:
        """The connection opened (a subclass may read the persona first)."""
        return self.app.personas.open_memory(slug, read_only=True)

    def read(self, fn: Callable[[MemoryStore], T], slug: str | None = None) -> T:
        """fn(store) on the persona's memory (another persona than the last one closes that one first)."""
        slug = slug or self.slug
        if self.store is not None and slug != self._open_slug:
            self.close()
        if self.store is None:
            self.store = self.open(slug)
            self._open_slug = slug
        try:
            return fn(self.store)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        store, self.store, self._open_slug = self.store, None, ""
        if store is not None:
            store.close()
