"""One persona, alive: its memory's owner, its conversation, its work queue and its scheduled life.

A PersonaRuntime opens the persona's memory.db once (migrations, recovery of replies and events a crash cut
off), holds the connection that writes, and does every write on its own WorkQueue thread: the person's turns
first; dreams, compression, scheduled jobs and autonomous messages in between, in steps that give way. The
window and the command line talk to it from their own threads; what happens is published on the app's
EventHub (topics in docs/architecture.md "Core events").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from datetime import date, datetime
from typing import Any

from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.backups import backup_if_due
from nexus_ark.memory.event_queue import EventQueue
from nexus_ark.memory.inbox import Inbox
from nexus_ark.memory.messages import DEFAULT_ROOM, StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind import state as drive_state
from nexus_ark.mind.drives import DriveReport
from nexus_ark.providers.base import ChatBackend, model_priority
from nexus_ark.providers.embedders import Embedder
from nexus_ark.runtime.backlog import queue_backlog
from nexus_ark.runtime.dreams import PersonaDreams
from nexus_ark.runtime.host import RuntimeHost, StartTurn
from nexus_ark.runtime.owner_trace import guard_owner, trace_owner_statements
from nexus_ark.runtime.room_member import RoomMember
from nexus_ark.runtime.soul_owner import SoulOwner
from nexus_ark.runtime.streaming import stream_turn
from nexus_ark.runtime.work_queue import BACKGROUND, WorkItem, WorkQueue

log = logging.getLogger(__name__)

TYPING_HOLD_S = 20.0  # "the person is typing" lasts this long after the last keystroke


class PersonaRuntime:
    """The persona's runtime, built from parts: `soul` (runtime/soul_owner.py), `dreams`
    (runtime/dreams.py) and `rooms` (runtime/room_member.py), each with its own state, given the queue, the
    memory and the narrow face of this runtime it needs (runtime/host.py)."""

    def __init__(self, slug: str, host: RuntimeHost) -> None:
        self.slug = slug
        self.host = host
        self.persona = host.load_persona(slug)
        self.queue = WorkQueue(slug)
        self.queue.on_user_waiting.append(self._give_way)
        self._session: ChatSession | None = None  # the conversation with the person, opened on first use
        self._typing_until = float("-inf")
        self._backed_up_on: date | None = None
        self._closed = False
        # The owner connection lives on the queue's thread: opened, recovered, written and closed there,
        # so no two threads ever drive it (issue 22).
        try:
            self.queue.call("open memory", self._open_memory)
        except BaseException:
            self.queue.stop()
            raise

    def _open_memory(self) -> None:
        slug, host = self.slug, self.host
        self.memory = MemoryStore(self.persona.memory_path, host.clock, role="owner")
        trace_owner_statements(self.memory)
        guard_owner(self.memory)
        if self.memory.recovered:
            log.info("%s: %d replies cut off by a crash were marked interrupted", slug, self.memory.recovered)
        self.events = EventQueue(self.memory, host.clock)
        recovered = self.events.recover()
        if recovered:
            log.info("%s: %d events a crash left processing are pending again", slug, recovered)
        self.inbox = Inbox(self.memory, host.clock)
        self.soul = SoulOwner(self.queue, self.memory, self)
        self.rooms = RoomMember(self.queue, self.memory, self)
        self.dreams = PersonaDreams(self.queue, self.memory, self)
        try:  # a rotating daily backup, taken while the memory is opened for the day
            backup_if_due(self.memory, host.backups_dir(slug), clock=host.clock)
        except NexusArkError as exc:
            log.warning("backup skipped: %s", exc)
        self.soul.reconcile()
        self.dreams.resume_interrupted()

    # -- the conversation (the person's work: first in line) ---------------------------------------
    def session(self) -> ChatSession:
        """The conversation, opened on first use (loads the chat model). On the queue's thread only."""
        if self._session is None:
            self._session = self._open_session(self.host.chat_backend(self.persona))
        return self._session

    def session_if_open(self) -> ChatSession | None:
        """The conversation with the person if a turn opened it, else None (never opens it)."""
        return self._session

    def new_session(self, room: str) -> ChatSession:
        """A new conversation in `room` on the chat model the person's conversation uses (a room's, for
        runtime/room_member.py). On the queue's thread only."""
        return self._open_session(self.session().backend, room)

    def reset_sessions(self) -> None:
        """Every conversation, alone and in each room, opens anew on its next turn (a running turn
        finishes as it was). On the queue's thread."""
        self._session = None
        self.rooms.forget_sessions()

    def _open_session(self, backend: ChatBackend, room: str = DEFAULT_ROOM) -> ChatSession:
        persona = self.persona
        embedder, problem = self.host.embedder()
        session = ChatSession(
            persona,
            self.memory,
            backend,
            room=room,
            embedder=embedder,
            recall_problem=problem,
            after_turn=self._after_turn_hook,
            emotions=self.host.emotions,
            internal=lambda: self.host.internal_backend(persona),
            tools=self.host.tools,
        )
        if embedder is not None:
            self.embed_backlog(embedder)
        return session

    def embed_backlog(self, embedder: Embedder) -> WorkItem | None:
        """Vectors for every memory without one, as background steps on this queue (runtime/backlog.py)."""
        return queue_backlog(self.queue, lambda: self.memory, embedder)

    def use_backend(self, backend: ChatBackend) -> ChatSession:
        """Talk on another chat model from now on (a --model override). On the queue's thread."""
        self._session = self._open_session(backend)  # never loads the persona's own model first
        return self._session

    def reload_persona(self) -> None:
        """persona.toml or persona.md changed: the next turn uses them (a running turn finishes as it was)."""
        self.queue.call("reload persona", self.persona_changed)

    def persona_changed(self) -> None:
        """Load persona.toml and persona.md again; every conversation opens anew. On the queue's thread."""
        self.persona = self.host.load_persona(self.slug)
        self.reset_sessions()

    def open(self) -> tuple[list[StoredMessage], str]:
        """Open the conversation (the model loads) and return its recent history and the model's name."""

        def run() -> tuple[list[StoredMessage], str]:
            session = self.session()
            return session.history(), session.model_name

        return self.queue.call("open", run)

    def call(self, name: str, fn: Callable[[ChatSession], Any]) -> Any:
        """A short piece of the person's work with the session (history, delete, versions)."""
        return self.queue.call(name, lambda: fn(self.session()))

    def history(self, limit: int = 200) -> list[StoredMessage]:
        return self.call("history", lambda s: s.history(limit))

    def delete(self, message_id: int, *, forget: bool = False) -> None:
        self.call("delete", lambda s: s.delete(message_id, forget=forget))

    def choose_version(self, message_id: int) -> None:
        """Show this version of a message (and the branch that followed it) in the conversation."""
        self.queue.call("version", lambda: self.memory.messages.choose_version(message_id))

    def send(self, text: str, cancel: threading.Event | None = None) -> Iterator[ReplyDelta | TurnResult]:
        return self.stream("send", lambda s, c: s.send(text, c), cancel)

    def regenerate(self, reply_id: int, cancel: threading.Event | None = None) -> Iterator[Any]:
        return self.stream("regenerate", lambda s, c: s.regenerate(reply_id, c), cancel)

    def edit(self, message_id: int, text: str, cancel: threading.Event | None = None) -> Iterator[Any]:
        return self.stream("edit", lambda s, c: s.edit(message_id, text, c), cancel)

    def continue_reply(self, reply_id: int, cancel: threading.Event | None = None) -> Iterator[Any]:
        return self.stream("continue", lambda s, c: s.continue_reply(reply_id, c), cancel)

    def stream(
        self,
        name: str,
        start: StartTurn,
        cancel: threading.Event | None,
        session: Callable[[], ChatSession] | None = None,
    ) -> Iterator[Any]:
        """Run a streaming turn on the queue; the caller's thread iterates what it yields. `session`: which
        conversation (a room's, runtime/room_member.py); the conversation with the person by default."""
        return stream_turn(self.queue, name, session or self.session, start, cancel, self._after_turn_later)

    def set_typing(self, typing: bool) -> None:
        """The window says the person is (or stopped) typing: no autonomous message interrupts them."""
        now = self.host.clock.monotonic()
        self._typing_until = now + TYPING_HOLD_S if typing else float("-inf")

    @property
    def typing(self) -> bool:
        return self.host.clock.monotonic() < self._typing_until

    # -- after a turn (background) ----------------------------------------------------------------
    def _after_turn_later(self, session: ChatSession) -> None:
        def work(_: threading.Event) -> None:
            with model_priority(BACKGROUND):
                session.after_turn()

        self.queue.submit_background("after turn", work, key=f"after_turn:{session.room}")

    def _after_turn_hook(self) -> None:
        """The drives move with the interaction, the day's backup holds the day's first turn, and the
        window hears the turn is done."""
        try:
            self.recompute_drives("interaction")
            self.soul.announce()  # the propose_soul_edit tool
        finally:
            self.host.events.publish("turn_done", persona=self.slug)
            self._backup_after_first_turn_of_day()

    def _backup_after_first_turn_of_day(self) -> None:
        today = self.host.clock.now().date()
        if self._backed_up_on == today:
            return
        self._backed_up_on = today
        try:
            backup_if_due(
                self.memory, self.host.backups_dir(self.slug), clock=self.host.clock, after_writes=True
            )
        except NexusArkError as exc:
            log.warning("backup skipped: %s", exc)

    def _give_way(self) -> None:
        """The person's work is waiting: a compression holding the model stops at its next step."""
        session = self._session
        if session is not None:
            session.interrupt_background()

    # -- the mind ---------------------------------------------------------------------------------
    def recompute_drives(self, trigger: str) -> DriveReport:
        """Recompute and record the drives, and tell the window. On the queue's thread."""
        settings = self.persona.settings
        report = drive_state.recompute(
            self.memory,
            self.host.clock.now(),
            trigger=trigger,
            thresholds=settings.drives.thresholds(),
            language=settings.language,
        )
        self.host.events.publish("drives_changed", persona=self.slug, report=report)
        return report

    def drives(self, *, record: bool = True) -> DriveReport:
        if record:
            return self.queue.call("drives", lambda: self.recompute_drives("manual"))
        settings = self.persona.settings
        return self.queue.call(
            "drives",
            lambda: drive_state.current(
                self.memory, self.host.clock.now(), settings.drives.thresholds(), settings.language
            ),
        )

    def after_dream(self, embedder: Embedder | None) -> None:
        """A dream finished (runtime/dreams.py): the proposals it made are announced, and what it wrote
        becomes findable by meaning too. On the queue's thread."""
        self.soul.announce()
        if embedder is not None:
            self.embed_backlog(embedder)

    # -- closing ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the queue (background work is told to stop and resumes next time), close the memory.
        No model runs at close: quitting must release the data folder within a second or two. The
        conversation's open questions are checked at the next start (the scheduler's idle end)."""
        if self._closed:
            return
        self._closed = True
        self._give_way()  # a compression holding the model stops at its next step (it is redone next time)
        self.queue.stop(final=self._close_memory)

    def _close_memory(self) -> None:
        """Last on the queue's thread: the day's conversation into the newest backup, then the memory."""
        try:
            backup_if_due(
                self.memory, self.host.backups_dir(self.slug), clock=self.host.clock, after_writes=True
            )
        except Exception as exc:  # a full disk must not stop the rest from closing
            log.warning("backup at close skipped: %s", exc)
        try:
            self.memory.close()
        except Exception as exc:
            log.warning("closing the memory of %s failed: %s", self.slug, exc)

    def local_now(self) -> datetime:
        return self.host.clock.now().astimezone()
