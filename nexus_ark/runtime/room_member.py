"""A persona's runtime in rooms (nexus_ark/rooms, mixed into PersonaRuntime): one conversation per room,
each on the persona's own queue and memory like its conversation with the person alone. The room (its
journal and who speaks) lives outside; it hands each member what the others said and asks one to answer."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from nexus_ark.agent.room_turn import HeardLine

if TYPE_CHECKING:
    from nexus_ark.agent.session import ChatSession
    from nexus_ark.memory.messages import StoredMessage


class RoomMember:
    room_sessions: dict[str, ChatSession]

    def room_session(self, room: str) -> ChatSession:
        """The persona's conversation in `room`, opened on first use with the persona's chat model. On the
        queue's thread only."""
        if room not in self.room_sessions:
            self.room_sessions[room] = self._open_session(self.session().backend, room)
        return self.room_sessions[room]

    def cut_replies(self, room: str, since: str) -> list[StoredMessage]:
        """This persona's answers in `room` that a kill cut off (kept, marked interrupted when its memory
        opened, as in a conversation alone), made at `since` or later, oldest first."""
        sql = (
            "select * from messages where room = ? and role = 'assistant' and status = 'interrupted' "
            "and hidden = 0 and content != '' and created_at >= ? order by id"
        )
        return self.queue.call(
            f"cut replies in {room}", lambda: self.memory.messages.select(sql, [room, since])
        )

    def hear(self, room: str, lines: Sequence[HeardLine]) -> int:
        """Record what the others said in `room` (each line once); the person's work: first in line."""
        return self.queue.call(f"hear in {room}", lambda: self.room_session(room).hear(lines))

    def receive_note(self, room: str, key: str, sender: str, text: str) -> bool:
        """A note another member of `room` passed this persona: it reads it on its next turn there."""
        keep = self.room_session
        return self.queue.call(f"note in {room}", lambda: keep(room).keep_note(key, sender, text))

    def respond(
        self, room: str, others: Sequence[str], cancel: threading.Event | None = None, **asked: Any
    ) -> Iterator[Any]:
        """Answer in `room`, streamed like a turn (ReplyDelta..., then the TurnResult); `asked`: what the
        room says of this turn (SessionRoom.respond's answering_person, not_again)."""
        return self._stream(
            f"answer in {room}",
            lambda session, stop: session.respond(others, stop, **asked),
            cancel,
            session=lambda: self.room_session(room),
        )
