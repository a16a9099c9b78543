"""A persona's runtime in rooms (`runtime.rooms`, a part of PersonaRuntime; the rooms: nexus_ark/rooms):
one conversation per room, each on the persona's own queue and memory like its conversation with the person
alone. The room (its journal and who speaks) lives outside; it hands each member what the others said and
asks one to answer."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.agent.session import ChatSession
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.runtime.host import RoomsHost
from nexus_ark.runtime.work_queue import WorkQueue


class RoomMember:
    def __init__(self, queue: WorkQueue, memory: MemoryStore, host: RoomsHost) -> None:
        self._queue = queue
        self._memory = memory
        self._host = host
        self._sessions: dict[str, ChatSession] = {}  # the persona's part in each room, by room key

    def session(self, room: str) -> ChatSession:
        """The persona's conversation in `room`, opened on first use with the persona's chat model. On the
        queue's thread only."""
        if room not in self._sessions:
            self._sessions[room] = self._host.new_session(room)
        return self._sessions[room]

    def forget_sessions(self) -> None:
        """Every room's conversation opens anew on its next turn (the persona changed). On the queue's
        thread."""
        self._sessions.clear()

    def cut_replies(self, room: str, since: str) -> list[StoredMessage]:
        """This persona's answers in `room` that a kill cut off (kept, marked interrupted when its memory
        opened, as in a conversation alone), made at `since` or later, oldest first."""
        found: list[StoredMessage] = self._queue.call(
            f"cut replies in {room}", lambda: self._memory.messages.cut_replies(room, since)
        )
        return found

    def hear(self, room: str, lines: Sequence[HeardLine]) -> int:
        """Record what the others said in `room` (each line once); the person's work: first in line."""
        heard: int = self._queue.call(f"hear in {room}", lambda: self.session(room).hear(lines))
        return heard

    def hear_later(self, room: str, lines: Sequence[HeardLine]) -> None:
        """Record what the others said in `room` without waiting for it: from another member's queue
        thread, which must never wait on this one's (two members writing at once)."""
        self._queue.submit(f"hear in {room}", lambda _stop: self.session(room).hear(lines))

    def receive_note(self, room: str, key: str, sender: str, text: str) -> bool:
        """A note another member of `room` passed this persona: it reads it on its next turn there."""
        kept: bool = self._queue.call(
            f"note in {room}", lambda: self.session(room).keep_note(key, sender, text)
        )
        return kept

    def respond(
        self, room: str, others: Sequence[str], cancel: threading.Event | None = None, **asked: Any
    ) -> Iterator[Any]:
        """Answer in `room`, streamed like a turn (ReplyDelta..., then the TurnResult); `asked`: what the
        room says of this turn (SessionRoom.respond's answering_person, not_again)."""
        return self._host.stream(
            f"answer in {room}",
            lambda session, stop: session.respond(others, stop, **asked),
            cancel,
            session=lambda: self.session(room),
        )
