"""The window's link to the core for the open conversation: opening personas (model load, history) and
streaming replies.

Each persona's work runs in order on a lane of its own (ui/util/tasks.py), so one persona's reply goes on
while another is opened and talked with; the UI thread only asks and receives, and never waits on a model
or disk. The work itself runs on the persona's runtime (its queue serves the person
before any background work, and runs the after-turn work itself); the lane carries the streamed reply back,
coalesced into one report every few tens of milliseconds, never one per token.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal, Slot

from nexus_ark.agent.session import ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.errors import PersonaError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from ui.util.i18n import tr
from ui.util.stream_batcher import StreamBatcher
from ui.util.tasks import Report, SerialWorker

Turn = Callable[[PersonaRuntime, threading.Event], Iterator[ReplyDelta | TurnResult]]


class _Conversation:
    """What runs on a persona's lane: plain Python, no Qt object. The runtime it opened is read there only."""

    def __init__(self, app: NexusApp, slug: str, coalesce_s: float, cancel: threading.Event) -> None:
        self.app = app
        self.slug = slug
        self.coalesce_s = coalesce_s
        self.cancel = cancel
        self.runtime: PersonaRuntime | None = None

    def open(self) -> tuple[str, list[StoredMessage], str, str]:
        runtime = self.app.personas.runtime(self.slug)
        history, model_name = runtime.open()
        self.runtime = runtime
        self.app.admin.remember_persona(self.slug)
        return self.slug, history, model_name, runtime.persona.settings.name

    def opened(self) -> PersonaRuntime:
        if self.runtime is None:
            raise PersonaError(tr("No persona is open."))
        return self.runtime

    def turn(self, start: Turn, report: Report) -> TurnResult | None:
        """The reply's text goes to report() as it streams, a coalesced piece at a time."""
        runtime = self.opened()
        pieces = StreamBatcher(lambda _key, text: report(text), self.coalesce_s)
        result: TurnResult | None = None
        for item in start(runtime, self.cancel):
            if isinstance(item, ReplyDelta):
                pieces.add(item.text)
            else:
                result = item
        pieces.flush()
        return result  # the runtime queues the after-turn work itself

    def change(self, kind: str, message_id: int, forget: bool) -> tuple[str, int]:
        runtime = self.opened()
        if kind == "delete":
            runtime.delete(message_id, forget=forget)
        else:
            runtime.choose_version(message_id)
        return kind, message_id


class SessionWorker(QObject):
    """Lives on the UI thread, and so do its signals. Each persona has a lane of its own, where its requests
    run in the order asked: a reply goes on in its own conversation while another persona is opened, and
    talked with. Every signal names the persona it is about (its slug)."""

    opened = Signal(str, object, str, str)  # slug, history (list[StoredMessage]), model name, persona name
    open_failed = Signal(str, str)  # slug, message
    delta = Signal(str, str)  # slug, a piece of the reply
    finished = Signal(str, object)  # slug, TurnResult
    changed = Signal(str, int)  # "delete" | "version", message id: done, the view shows it
    change_failed = Signal(str)
    failed = Signal(str, str)  # slug, message

    def __init__(self, app: NexusApp, coalesce_ms: int = 40) -> None:
        super().__init__()
        self._app = app
        self._coalesce_s = coalesce_ms / 1000
        self._conversations: dict[str, _Conversation] = {}
        self._lanes: dict[str, SerialWorker] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def _for(self, slug: str) -> tuple[_Conversation, SerialWorker]:
        if slug not in self._lanes:
            # Set from the UI thread (Stop), read on the lane: threading.Event is thread-safe.
            cancel = threading.Event()
            self._conversations[slug] = _Conversation(self._app, slug, self._coalesce_s, cancel)
            self._lanes[slug] = SerialWorker(f"session-{slug}")
            if self._closed:
                cancel.set()
                self._lanes[slug].close()
        return self._conversations[slug], self._lanes[slug]

    def stop(self, slug: str) -> None:
        """The persona's reply under way ends at its next token (what was said is kept)."""
        if slug in self._conversations:
            self._conversations[slug].cancel.set()

    @Slot(str)
    def open_persona(self, slug: str) -> None:
        conversation, lane = self._for(slug)
        lane.run(
            conversation.open,
            lambda opened: self.opened.emit(*opened),
            lambda message: self.open_failed.emit(slug, message),
        )

    def send(self, slug: str, text: str) -> None:
        self._turn(slug, lambda runtime, cancel: runtime.send(text, cancel))

    def continue_reply(self, slug: str, reply_id: int) -> None:
        """Go on with a reply the token limit cut (the window shows the whole message again after)."""
        self._turn(slug, lambda runtime, cancel: runtime.continue_reply(reply_id, cancel))

    def regenerate(self, slug: str, reply_id: int) -> None:
        self._turn(slug, lambda runtime, cancel: runtime.regenerate(reply_id, cancel))

    def edit(self, slug: str, message_id: int, text: str) -> None:
        self._turn(slug, lambda runtime, cancel: runtime.edit(message_id, text, cancel))

    def _turn(self, slug: str, start: Turn) -> None:
        conversation, lane = self._for(slug)
        # Cleared when asked, not when the lane starts it: a Stop pressed meanwhile, or the window closing
        # with the turn still queued, is not forgotten.
        if not self._closed:
            conversation.cancel.clear()
        lane.run_reporting(
            lambda report: conversation.turn(start, report),
            lambda text: self.delta.emit(slug, text),
            lambda result: self.finished.emit(slug, result),
            lambda message: self.failed.emit(slug, message),
        )

    def change(self, slug: str, kind: str, message_id: int, forget: bool) -> None:
        """Delete a message (and, with forget, what memory derived from it), or choose a version."""
        conversation, lane = self._for(slug)

        def done(changed: tuple[str, int]) -> None:
            self.changed.emit(*changed)

        lane.run(lambda: conversation.change(kind, message_id, forget), done, self.change_failed.emit)

    def close(self) -> None:
        """Every reply under way stops at its next token; each lane ends after its current step."""
        self._closed = True
        for conversation in self._conversations.values():
            conversation.cancel.set()
        for lane in self._lanes.values():
            lane.close()

    def wait(self) -> None:
        """Block until every lane has ended (the window does, hidden, before the core closes)."""
        for lane in list(self._lanes.values()):
            lane.wait()
