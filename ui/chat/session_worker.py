"""The window's link to the core for the open conversation: opening personas (model load, history) and
streaming replies.

The work runs in order on a lane of its own (ui/util/tasks.py); the UI thread only asks and receives, and
never waits on a model or disk. The work itself runs on the persona's runtime (its queue serves the person
before any background work, and runs the after-turn work itself); the lane carries the streamed reply back,
coalesced into one report every few tens of milliseconds, never one per token.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal, Slot

from nexus_ark.agent.session import ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.errors import PersonaError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from ui.util.i18n import tr
from ui.util.tasks import Report, SerialWorker

Turn = Callable[[PersonaRuntime, threading.Event], Iterator[ReplyDelta | TurnResult]]


class _Conversation:
    """What runs on the lane: plain Python, no Qt object. The runtime it opened is read on the lane only."""

    def __init__(self, app: NexusApp, coalesce_s: float, cancel: threading.Event) -> None:
        self.app = app
        self.coalesce_s = coalesce_s
        self.cancel = cancel
        self.runtime: PersonaRuntime | None = None

    def open(self, slug: str) -> tuple[str, list[StoredMessage], str, str]:
        runtime = self.app.runtime(slug)
        history, model_name = runtime.open()
        self.runtime = runtime
        self.app.remember_persona(slug)
        return slug, history, model_name, runtime.persona.settings.name

    def opened(self) -> PersonaRuntime:
        if self.runtime is None:
            raise PersonaError(tr("No persona is open."))
        return self.runtime

    def turn(self, start: Turn, report: Report) -> TurnResult | None:
        """The reply's text goes to report() as it streams, a coalesced piece at a time."""
        runtime = self.opened()
        pending: list[str] = []
        last_report = 0.0
        result: TurnResult | None = None
        for item in start(runtime, self.cancel):
            if isinstance(item, ReplyDelta):
                pending.append(item.text)
                now = time.monotonic()
                if now - last_report >= self.coalesce_s:
                    report("".join(pending))
                    pending.clear()
                    last_report = now
            else:
                result = item
        if pending:
            report("".join(pending))
        return result  # the runtime queues the after-turn work itself

    def change(self, kind: str, message_id: int, forget: bool) -> tuple[str, int]:
        runtime = self.opened()
        if kind == "delete":
            runtime.delete(message_id, forget=forget)
        else:
            runtime.call("version", lambda s: s.memory.messages.choose_version(message_id))
        return kind, message_id


class SessionWorker(QObject):
    """Lives on the UI thread, and so do its signals: each request runs on the lane, in the order asked."""

    opened = Signal(str, object, str, str)  # slug, history (list[StoredMessage]), model name, persona name
    open_failed = Signal(str, str)  # slug, message
    delta = Signal(str)
    finished = Signal(object)  # TurnResult
    changed = Signal(str, int)  # "delete" | "version", message id: done, the view shows it
    change_failed = Signal(str)
    failed = Signal(str)

    def __init__(self, app: NexusApp, coalesce_ms: int = 40) -> None:
        super().__init__()
        self.cancel = threading.Event()  # set from the UI thread: threading.Event is thread-safe
        self._conversation = _Conversation(app, coalesce_ms / 1000, self.cancel)
        self._lane = SerialWorker("session-worker")

    @property
    def closed(self) -> bool:
        return self._lane.closed

    @Slot(str)
    def open_persona(self, slug: str) -> None:
        conversation = self._conversation
        self._lane.run(
            lambda: conversation.open(slug),
            lambda opened: self.opened.emit(*opened),
            lambda message: self.open_failed.emit(slug, message),
        )

    @Slot(str)
    def send(self, text: str) -> None:
        self._turn(lambda runtime, cancel: runtime.send(text, cancel))

    @Slot(int)
    def continue_reply(self, reply_id: int) -> None:
        """Go on with a reply the token limit cut (the window shows the whole message again after)."""
        self._turn(lambda runtime, cancel: runtime.continue_reply(reply_id, cancel))

    @Slot(int)
    def regenerate(self, reply_id: int) -> None:
        self._turn(lambda runtime, cancel: runtime.regenerate(reply_id, cancel))

    @Slot(int, str)
    def edit(self, message_id: int, text: str) -> None:
        self._turn(lambda runtime, cancel: runtime.edit(message_id, text, cancel))

    def _turn(self, start: Turn) -> None:
        # Cleared when asked, not when the lane starts it: a Stop pressed meanwhile, or the window closing
        # with the turn still queued, is not forgotten.
        self.cancel.clear()
        conversation = self._conversation
        self._lane.run_reporting(
            lambda report: conversation.turn(start, report),
            self.delta.emit,
            self.finished.emit,
            self.failed.emit,
        )

    @Slot(str, int, bool)
    def change(self, kind: str, message_id: int, forget: bool) -> None:
        """Delete a message (and, with forget, what memory derived from it), or choose a version."""
        conversation = self._conversation

        def done(changed: tuple[str, int]) -> None:
            self.changed.emit(*changed)

        self._lane.run(lambda: conversation.change(kind, message_id, forget), done, self.change_failed.emit)

    def close(self) -> None:
        """A reply under way stops at its next token; the lane ends after its current step."""
        self.cancel.set()
        self._lane.close()

    def wait(self) -> None:
        """Block until the lane has ended (the window does, hidden, before the core closes)."""
        self._lane.wait()
