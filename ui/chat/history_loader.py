"""Pages of the conversation and searches in it, read on a thread of their own.

A read-only connection (the persona's runtime owns memory.db and does every write), opened per persona on
this thread and kept while that persona is shown. The UI thread asks with queued signals and never waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, Signal, Slot

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.conversation_pages import ConversationPages, MessagePage
from nexus_ark.memory.store import MemoryStore
from ui.util.i18n import tr_error

log = logging.getLogger(__name__)
T = TypeVar("T")


class HistoryLoader(QObject):
    # kind ("latest" | "older" | "newer" | "around"), slug, MessagePage, the message to show (or -1)
    page = Signal(str, str, object, int)
    searched = Signal(str, str, object)  # slug, text, ids (oldest first)
    shown = Signal(str, object)  # slug, list[ShownMessage]
    failed = Signal(str, str)  # slug, message

    def __init__(self, app: NexusApp) -> None:
        super().__init__()
        self._app = app
        self._slug = ""
        self._store: MemoryStore | None = None

    def _pages(self, slug: str) -> ConversationPages:
        if slug != self._slug or self._store is None:
            self.close()
            self._store = self._app.open_memory(slug, read_only=True)
            self._slug = slug
        return ConversationPages(self._store.messages)

    @Slot(str, str, int)
    def load(self, kind: str, slug: str, message_id: int) -> None:
        reads: dict[str, Callable[[ConversationPages], MessagePage]] = {
            "older": lambda p: p.before(message_id),
            "newer": lambda p: p.after(message_id),
            "around": lambda p: p.around(message_id),
        }
        page = self._answer(slug, reads.get(kind, ConversationPages.latest), "loading the conversation")
        if page is not None:
            self.page.emit(kind, slug, page, message_id)

    @Slot(str, str)
    def search(self, slug: str, text: str) -> None:
        ids = self._answer(slug, lambda p: p.search(text), "searching the conversation")
        if ids is not None:
            self.searched.emit(slug, text, ids)

    @Slot(str, object)
    def fetch(self, slug: str, ids: list[int]) -> None:
        found = self._answer(slug, lambda p: p.shown(ids), "reading messages")
        if found is not None:
            self.shown.emit(slug, found)

    def _answer(self, slug: str, read: Callable[[ConversationPages], T], doing: str) -> T | None:
        """The read's result, or None with `failed` emitted (a worker's exception must reach the window)."""
        try:
            return read(self._pages(slug))
        except NexusArkError as exc:
            self.failed.emit(slug, tr_error(exc))
        except Exception as exc:
            log.exception("%s failed", doing)
            self.failed.emit(slug, tr_error(exc))
        return None

    @Slot()
    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = None
        self._slug = ""
