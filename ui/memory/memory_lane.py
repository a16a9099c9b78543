"""The Memory window's one background thread, and what its panels need from the window.

Everything that touches the persona's memory runs in order on the lane: reads on a read-only connection of
the lane's own (opened by the first read, so a persona that cannot be opened fails each read with why), and
changes handed to the persona's owner (app.personas.change_memory: its runtime's queue, the one writer), so an
edit here never races a turn, a dream or an import for the file.

The panels (ui/memory/entities_panel.py, knowledge_panel.py) and the window (memory_window.py) import this
module; it imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from nexus_ark.app import NexusApp
from nexus_ark.memory.store import MemoryStore
from ui.util.i18n import LanguageTexts
from ui.util.tasks import SerialWorker

T = TypeVar("T")


class _LaneStore:
    """The lane's own connection, used only on its thread. A plain holder, so the lane's closing task
    needs no reference to the window (a worker must never drop a window's last one)."""

    store: MemoryStore | None = None

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


class MemoryLane:
    """Reads and changes of one persona's memory, in order on one thread; the answers come back on the UI
    thread unless the window is closing (then nobody is there to show them)."""

    def __init__(self, app: NexusApp, slug: str, show_error: Callable[[str], None]) -> None:
        self.app = app
        self.slug = slug
        self._show_error = show_error
        self._holder = _LaneStore()
        self._thread = SerialWorker(f"memory-{slug}")
        self.closing = False

    @property
    def store(self) -> MemoryStore | None:
        """The lane's read-only connection (None until the first read opened it)."""
        return self._holder.store

    @property
    def idle(self) -> bool:
        return self._thread.idle

    def wait(self) -> None:
        """Until the lane has run all it was given (tests; the window never waits)."""
        self._thread.wait()

    def read(
        self,
        fn: Callable[[MemoryStore], T],
        on_done: Callable[[T], None],
        on_error: Callable[[], None] | None = None,
    ) -> None:
        """fn(store) on the lane with its read-only connection, then on_done(result) on the UI thread; a
        failure is shown in the status line (translated by the lane), then on_error() runs."""
        holder, app, slug = self._holder, self.app, self.slug

        def task() -> T:
            if holder.store is None:
                holder.store = app.personas.open_memory(slug)
            return fn(holder.store)

        self.run(task, on_done, on_error)

    def change(
        self,
        name: str,
        fn: Callable[[MemoryStore], T],
        on_done: Callable[[T], None],
        on_error: Callable[[], None] | None = None,
    ) -> None:
        """fn(store) run by the persona's owner on its queue (the lane waits for it, in order with the
        window's reads), then on_done(result) on the UI thread."""
        app, slug = self.app, self.slug
        self.run(lambda: app.personas.change_memory(slug, name, fn), on_done, on_error)

    def run(
        self, task: Callable[[], T], on_done: Callable[[T], None], on_error: Callable[[], None] | None = None
    ) -> None:
        def failed(message: str) -> None:
            self._show_error(message)
            if on_error is not None:
                on_error()

        self._thread.run(
            task,
            lambda value: None if self.closing else on_done(value),
            lambda message: None if self.closing else failed(message),
        )

    def close(self) -> None:
        """Without waiting: the lane closes its connection itself once the work under way is done."""
        self.closing = True
        self._thread.close(self._holder.close)


class MemoryHost(Protocol):
    """What a panel of the Memory window is given by the window: its lane, its texts that follow the
    language, its status line and the persona's name as known now."""

    lane: MemoryLane
    texts: LanguageTexts

    @property
    def persona_name(self) -> str: ...

    def say(self, text: Callable[[], str]) -> None:
        """The status line; text() is asked again after a language switch (the latest message only)."""
