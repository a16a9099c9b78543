"""Which conversation a message belongs to (messages.room): the person's own chat with the persona
(DEFAULT_ROOM, "main") or a room of several personas, known in each member's memory as "room:<slug>".

The one place that builds and reads a room's key (issue 34: it was parsed by hand in five places). It sits
in memory/, beside the column it names, so every floor that reads messages (agent, runtime, rooms, app)
may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class RoomKey:
    """A room of several personas as its members' memories know it."""

    PREFIX: ClassVar[str] = "room:"

    slug: str

    @property
    def key(self) -> str:
        """The value of messages.room for the room's lines."""
        return f"{self.PREFIX}{self.slug}"

    @classmethod
    def parse(cls, key: str | None) -> RoomKey | None:
        """The room a messages.room value names; None for the person's own chat (or no value)."""
        if not key or not key.startswith(cls.PREFIX) or len(key) == len(cls.PREFIX):
            return None
        return cls(key.removeprefix(cls.PREFIX))

    def __str__(self) -> str:
        return self.key


def room_key(slug: str) -> str:
    """The room's name in each member's memory (messages.room)."""
    return RoomKey(slug).key


def is_room_key(key: str | None) -> bool:
    """Whether a messages.room value is a room of several personas (not the person's own chat)."""
    return RoomKey.parse(key) is not None
