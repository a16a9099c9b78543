"""Pages of the conversation and searches in it, read on a lane of their own (ui/util/tasks.py).

A read-only connection (the persona's runtime owns memory.db and does every write; ui/util/readers.py),
opened on the lane's thread for the persona shown and kept while it is shown. The UI thread asks and never
waits; the answers come back to the callbacks it gave, on the UI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.conversation_pages import ConversationPages, MessagePage, ShownMessage
from ui.util.readers import ReadOnlyMemory
from ui.util.tasks import SerialWorker

log = logging.getLogger(__name__)
T = TypeVar("T")


class HistoryLoader:
    def __init__(self, app: NexusApp, on_failed: Callable[[str, str], None]) -> None:
        """on_failed(slug, message): a read failed (the message in the person's language)."""
        self._lane = SerialWorker("history-loader")
        self._memory = ReadOnlyMemory(app)
        self._on_failed = on_failed

    def load(
        self, kind: str, slug: str, message_id: int, on_page: Callable[[str, str, MessagePage, int], None]
    ) -> None:
        """on_page(kind, slug, page, message_id): kind is "latest", "older" (than message_id), "newer" or
        "around" (message_id)."""
        reads: dict[str, Callable[[ConversationPages], MessagePage]] = {
            "older": lambda p: p.before(message_id),
            "newer": lambda p: p.after(message_id),
            "around": lambda p: p.around(message_id),
        }
        read = reads.get(kind, ConversationPages.latest)
        self._ask(slug, read, "loading the conversation", lambda page: on_page(kind, slug, page, message_id))

    def search(self, slug: str, text: str, on_found: Callable[[str, str, list[int]], None]) -> None:
        """on_found(slug, text, ids, oldest first)."""
        self._ask(
            slug,
            lambda p: p.search(text),
            "searching the conversation",
            lambda ids: on_found(slug, text, ids),
        )

    def fetch(self, slug: str, ids: list[int], on_shown: Callable[[str, list[ShownMessage]], None]) -> None:
        self._ask(slug, lambda p: p.shown(ids), "reading messages", lambda found: on_shown(slug, found))

    def _ask(
        self, slug: str, read: Callable[[ConversationPages], T], doing: str, on_done: Callable[[T], Any]
    ) -> None:
        memory = self._memory

        def task() -> T:
            try:
                return memory.read(lambda store: read(ConversationPages(store.messages)), slug)
            except NexusArkError:
                raise  # the person can act on it: shown as it is
            except Exception:
                log.exception("%s failed", doing)
                raise

        self._lane.run(task, on_done, lambda message: self._on_failed(slug, message))

    def close(self) -> None:
        """Without waiting: the lane closes the connection after what it is reading (twice is harmless)."""
        self._lane.close(self._memory.close)
