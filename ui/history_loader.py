"""Pages of the conversation and searches in it, read on a thread of their own.

A read-only connection (the persona's runtime owns memory.db and does every write), opened per persona on
this thread and kept while that persona is shown. The UI thread asks with queued signals and never waits.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal, Slot

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.conversation_pages import ConversationPages
from nexus_ark.memory.store import MemoryStore

log = logging.getLogger(__name__)


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
        try:
            pages = self._pages(slug)
            if kind == "older":
                result = pages.before(message_id)
            elif kind == "newer":
                result = pages.after(message_id)
            elif kind == "around":
                result = pages.around(message_id)
            else:
                result = pages.latest()
        except NexusArkError as exc:
            self.failed.emit(slug, str(exc))
            return
        except Exception as exc:  # a worker's exception must reach the window, not vanish
            log.exception("loading the conversation failed")
            self.failed.emit(slug, f"{type(exc).__name__}: {exc}")
            return
        self.page.emit(kind, slug, result, message_id)

    @Slot(str, str)
    def search(self, slug: str, text: str) -> None:
        try:
            ids = self._pages(slug).search(text)
        except Exception as exc:
            log.exception("searching the conversation failed")
            self.failed.emit(slug, f"{type(exc).__name__}: {exc}")
            return
        self.searched.emit(slug, text, ids)

    @Slot(str, object)
    def fetch(self, slug: str, ids: list[int]) -> None:
        try:
            found = self._pages(slug).shown(ids)
        except Exception as exc:
            log.exception("reading messages failed")
            self.failed.emit(slug, f"{type(exc).__name__}: {exc}")
            return
        self.shown.emit(slug, found)

    @Slot()
    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = None
        self._slug = ""
