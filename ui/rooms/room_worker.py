"""A room's lane: the room's conversation (nexus_ark.rooms.conversation.RoomConversation) is driven from one
thread, a SerialWorker lane (the window's, for the room it shows), never the UI thread; the members'
answers themselves run on their runtimes' queues. The room's events come back as the lane's reports, in
order, a member's streamed words coalesced into one report every few tens of milliseconds, never one per
token.

Every step gets a cancel event of its own: Stop, or the person sending while a member answers, sets the
events of the steps not finished (the answer under way ends at its next token) and the new message goes in
behind them. An auto-mode step can also be skipped before it starts (the person began typing)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.providers.catalogue import LanguageAdvice
from nexus_ark.rooms.conversation import RoomConversation, RoomEvent, Speaking, Streamed
from nexus_ark.rooms.room import RoomSettings
from ui.util.avatars import avatar_image, placeholder_image
from ui.util.i18n import tr
from ui.util.stream_batcher import StreamBatcher
from ui.util.tasks import Report, SerialWorker, while_open

AVATAR_DRAWN_PX = 56  # twice the view's size: sharp on a high-density screen
HISTORY_LINES = 200  # the room's latest lines shown when it opens

Start = Callable[[RoomConversation, threading.Event], Iterator[RoomEvent]]


@dataclass(frozen=True)
class ShownMember:
    slug: str
    name: str
    avatar: QImage  # drawn on the lane; made a pixmap on the UI thread


@dataclass(frozen=True)
class OpenedRoom:
    slug: str
    settings: RoomSettings
    members: list[ShownMember]
    lines: list[HeardLine]
    you: QImage  # the person's stand-in, with the first letter of "You" in the language of the moment
    spoken_since_person: int
    # Members whose model does not speak their language: (name, advice), as a one-to-one chat says it.
    language_advice: list[tuple[str, LanguageAdvice]] = field(default_factory=list)


@dataclass(frozen=True)
class UpdatedRoom:
    """The open room on its new settings (its members as they are now, a newcomer's face drawn)."""

    settings: RoomSettings
    members: list[ShownMember]
    language_advice: list[tuple[str, LanguageAdvice]] = field(default_factory=list)


@dataclass(frozen=True)
class StepEnd:
    kind: str  # "say" | "next" | "go_on"
    # The members' lines since the person last spoke (auto mode's cap); None: the step failed, unknown.
    spoken_since_person: int | None
    spoke: bool  # a member took the floor in this step


class _Room:
    """What runs on the lane: plain Python and QImages, no Qt object that lives on a thread."""

    def __init__(self, app: NexusApp, slug: str, coalesce_s: float) -> None:
        self.app, self.slug, self.coalesce_s = app, slug, coalesce_s
        self.room: RoomConversation | None = None
        self._faces: dict[tuple[str, str], QImage] = {}  # (slug, name) -> its avatar, drawn once

    def _members(self, room: RoomConversation) -> list[ShownMember]:
        for m in room.members:
            if (m.slug, m.name) not in self._faces:
                face = avatar_image(m.name, self.app.personas.store.avatar_file(m.slug), AVATAR_DRAWN_PX)
                self._faces[(m.slug, m.name)] = face
        return [ShownMember(m.slug, m.name, self._faces[(m.slug, m.name)]) for m in room.members]

    def _advice(self, room: RoomConversation) -> list[tuple[str, LanguageAdvice]]:
        """The members whose model does not speak their language (the catalogue read here, on the lane)."""
        found = []
        for member in room.members:
            try:
                advice = self.app.models.language_advice(member.slug)
            except NexusArkError:  # the catalogue unreadable: nothing to say, the room goes on
                continue
            if advice is not None:
                found.append((member.name, advice))
        return found

    def open(self, you: str) -> OpenedRoom:
        self.close()
        self._faces.clear()  # a picture changed since is drawn again
        room = self.room = self.app.rooms.open(self.slug)
        return OpenedRoom(
            self.slug,
            room.settings,
            self._members(room),
            room.lines(HISTORY_LINES),
            placeholder_image(you, AVATAR_DRAWN_PX),
            room.spoken_since_person,
            self._advice(room),
        )

    def opened(self) -> RoomConversation:
        if self.room is None:
            raise NexusArkError(notice("There is no room {room}.", room=self.slug))
        return self.room

    def step(
        self, kind: str, start: Start, cancel: threading.Event, skip: threading.Event | None, report: Report
    ) -> StepEnd:
        room = self.opened()
        if skip is not None and skip.is_set():  # auto mode went off before this step began
            return StepEnd(kind, room.spoken_since_person, False)
        spoke = False
        pieces = StreamBatcher(lambda slug, text: report(Streamed(slug, text)), self.coalesce_s)
        for event in start(room, cancel):
            if isinstance(event, Streamed):
                pieces.add(event.text, event.slug)
                continue
            pieces.flush()
            spoke = spoke or isinstance(event, Speaking)
            report(event)
        pieces.flush()
        return StepEnd(kind, room.spoken_since_person, spoke)

    def update(self, changes: dict[str, Any]) -> UpdatedRoom:
        """The room's settings changed and saved through the core, which hands them to the open room: it
        takes them at once (this lane drives it, and no step runs now) and goes on without reopening; a new
        member hears what was said before it came."""
        room = self.opened()
        self.app.rooms.update(self.slug, changes)
        return UpdatedRoom(room.settings, self._members(room), self._advice(room))

    def delete(self) -> str:
        """The room and its journal go; each member keeps what it heard and said there."""
        self.close()
        self.app.rooms.delete(self.slug)
        return self.slug

    def close(self) -> None:
        if self.room is not None:
            self.room.close()
            self.room = None


class RoomWorker(QObject):
    """Lives on the UI thread, and so do its signals; each request runs on the rooms' lane, in order.

    The lane is the window's, shared by the rooms it shows one after another (one open at a time): a room
    left closes on it before the next one opens there, and no thread is started on the UI thread at a
    click (a new thread waited for on a busy two-core machine held the loop 16-27 ms)."""

    opened = Signal(object)  # OpenedRoom
    updated = Signal(object)  # UpdatedRoom: its settings changed while it stays open
    # Said | Speaking | Streamed (coalesced) | Answered | Withdrawn, as the room says (not named `event`:
    # that is QObject's own method, which Qt calls for every event the worker receives)
    room_event = Signal(object)
    step_done = Signal(object)  # StepEnd
    failed = Signal(str)  # a step, an open or a change could not be done: why, in the person's language
    deleted = Signal(str)  # the room's slug

    def __init__(
        self,
        app: NexusApp,
        slug: str,
        lane: SerialWorker,
        coalesce_ms: int = 40,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.slug = slug
        self._room = _Room(app, slug, coalesce_ms / 1000)
        self._lane = lane
        self._pending = 0  # this room's requests not answered yet (counted on the UI thread)
        self._unfinished: list[threading.Event] = []  # the cancel events of the steps asked for, not done

    @property
    def idle(self) -> bool:
        return self._pending == 0

    def _ask(self, fn: Callable[..., Any], on_done: Callable, on_error: Callable, on_progress=None) -> None:
        """fn on the lane; the answers reach this worker while it exists (the panel may be gone)."""

        def answered(callback: Callable) -> Callable:
            def deliver(value: Any) -> None:
                self._pending -= 1
                callback(value)

            return while_open(self, deliver)

        self._pending += 1
        if on_progress is None:
            self._lane.run(fn, answered(on_done), answered(on_error))
        else:
            self._lane.run_reporting(fn, while_open(self, on_progress), answered(on_done), answered(on_error))

    def open(self) -> None:
        room, you = self._room, tr("You")
        self._ask(lambda: room.open(you), self.opened.emit, self.failed.emit)

    def say(self, text: str) -> None:
        self._step("say", lambda room, cancel: room.say(text, cancel))

    def next(self, slug: str) -> None:
        self._step("next", lambda room, cancel: room.next(slug, cancel))

    def go_on(self) -> threading.Event:
        """Auto mode's step; set the returned event to drop it if it has not started yet."""
        skip = threading.Event()
        self._step("go_on", lambda room, cancel: room.go_on(cancel), skip)
        return skip

    def _step(self, kind: str, start: Start, skip: threading.Event | None = None) -> None:
        cancel = threading.Event()
        self._unfinished.append(cancel)
        room = self._room

        def done(end: StepEnd) -> None:
            self._unfinished.remove(cancel)
            self.step_done.emit(end)

        def failed(message: str) -> None:
            self._unfinished.remove(cancel)
            self.failed.emit(message)
            self.step_done.emit(StepEnd(kind, None, False))

        self._ask(
            lambda report: room.step(kind, start, cancel, skip, report), done, failed, self.room_event.emit
        )

    def update(self, changes: dict[str, Any]) -> None:
        """Save changes to the room's settings (RoomSettings' fields) after the step under way."""
        room = self._room
        self._ask(lambda: room.update(changes), self.updated.emit, self.failed.emit)

    def delete(self) -> None:
        self.cancel()
        self._ask(self._room.delete, self.deleted.emit, self.failed.emit)

    def cancel(self) -> None:
        """Every step asked for and not finished stops: an answer under way at its next token."""
        for event in self._unfinished:
            event.set()

    def close(self) -> None:
        """Stop what runs; the room's journal closes on the lane once its last step ended. Never waits."""
        self.cancel()
        self._lane.run(self._room.close, lambda _none: None, lambda _message: None)
