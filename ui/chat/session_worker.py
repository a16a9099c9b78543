"""The worker thread that talks to the core: opening personas (model load, history) and streaming replies.

The UI thread only sends requests (queued signals) and receives results; it never waits on a model or disk.
The work itself runs on the persona's runtime (its queue serves the person before any background work, and
runs the after-turn work itself); this thread carries the streamed reply back, coalesced into one signal
every few tens of milliseconds, never one per token.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal, Slot

from nexus_ark.agent.session import ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from ui.util.i18n import tr, tr_error

log = logging.getLogger(__name__)


class SessionWorker(QObject):
    opened = Signal(str, object, str, str)  # slug, history (list[StoredMessage]), model name, persona name
    open_failed = Signal(str, str)  # slug, message
    reply_started = Signal()
    delta = Signal(str)
    finished = Signal(object)  # TurnResult
    changed = Signal(str, int)  # "delete" | "version", message id: done, the view shows it
    change_failed = Signal(str)
    failed = Signal(str)

    def __init__(self, app: NexusApp, coalesce_ms: int = 40) -> None:
        super().__init__()
        self._app = app
        self._coalesce_s = coalesce_ms / 1000
        self._runtime: PersonaRuntime | None = None
        self.cancel = threading.Event()  # set from the UI thread: threading.Event is thread-safe

    @Slot(str)
    def open_persona(self, slug: str) -> None:
        try:
            runtime = self._app.runtime(slug)
            history, model_name = runtime.open()
        except Exception as exc:  # never let a worker exception vanish silently
            self.open_failed.emit(slug, tr_error(exc))
            return
        self._runtime = runtime
        self._app.remember_persona(slug)
        self.opened.emit(slug, history, model_name, runtime.persona.settings.name)

    @Slot(str)
    def send(self, text: str) -> None:
        self._turn(lambda runtime: runtime.send(text, self.cancel))

    @Slot(int)
    def continue_reply(self, reply_id: int) -> None:
        """Go on with a reply the token limit cut (the window shows the whole message again after)."""
        self._turn(lambda runtime: runtime.continue_reply(reply_id, self.cancel))

    @Slot(int)
    def regenerate(self, reply_id: int) -> None:
        self._turn(lambda runtime: runtime.regenerate(reply_id, self.cancel))

    @Slot(int, str)
    def edit(self, message_id: int, text: str) -> None:
        self._turn(lambda runtime: runtime.edit(message_id, text, self.cancel))

    def _turn(self, start: Callable[[PersonaRuntime], Iterator[ReplyDelta | TurnResult]]) -> None:
        runtime = self._runtime
        if runtime is None:
            self.failed.emit(tr("No persona is open."))
            return
        self._stream(lambda: start(runtime))

    @Slot(str, int, bool)
    def change(self, kind: str, message_id: int, forget: bool) -> None:
        """Delete a message (and, with forget, what memory derived from it), or choose a version."""
        runtime = self._runtime
        if runtime is None:
            self.change_failed.emit(tr("No persona is open."))
            return
        try:
            if kind == "delete":
                runtime.delete(message_id, forget=forget)
            else:
                runtime.call("version", lambda s: s.memory.messages.choose_version(message_id))
        except Exception as exc:
            self.change_failed.emit(tr_error(exc))
            return
        self.changed.emit(kind, message_id)

    def _stream(self, start) -> None:
        self.cancel.clear()
        pending: list[str] = []
        last_emit = 0.0
        result: TurnResult | None = None
        try:
            self.reply_started.emit()
            for item in start():
                if isinstance(item, ReplyDelta):
                    pending.append(item.text)
                    now = time.monotonic()
                    if now - last_emit >= self._coalesce_s:
                        self.delta.emit("".join(pending))
                        pending.clear()
                        last_emit = now
                else:
                    result = item
        except Exception as exc:
            self.failed.emit(tr_error(exc))
            return
        if pending:
            self.delta.emit("".join(pending))
        self.finished.emit(result)  # the runtime queues the after-turn work itself
