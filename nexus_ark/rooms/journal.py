"""A room's own record of what was said, in order (rooms/<slug>/journal.db): the room shows it and
delivers from it. A line is written here, committed, and only then handed to the members, so a crash
between the two is mended at the next open: every member hears what it missed (each line once).

The rooms service (rooms/service.py) opens a room's journal once: a conversation's thread and a member
writing first (on its own queue thread) share it, so each use of the connection is taken under a lock."""

from __future__ import annotations

import uuid
from pathlib import Path

from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.memory.room_lines import RoomLines

JOURNAL_FILE = "journal.db"


class RoomJournal:
    """The room's lines as the members hear them; one connection, shared by the room's threads one use
    at a time (memory/room_lines.py)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE
        self._lines = RoomLines(self.path)

    def add(
        self, author: str | None, name: str, text: str, created_at: str, reply_id: int | None = None
    ) -> HeardLine:
        """reply_id: the author's own message in its memory (a member's answer)."""
        line = HeardLine(
            key=uuid.uuid4().hex,
            author=author,
            name=name,
            text=text,
            created_at=created_at,
            reply_id=reply_id,
        )
        self._lines.add((line.key, line.author, line.name, line.text, line.created_at, line.reply_id))
        return line

    def lines(self, limit: int | None = None) -> list[HeardLine]:
        return [
            HeardLine(key=k, author=a, name=n, text=t, created_at=c, reply_id=r)
            for k, a, n, t, c, r in self._lines.newest(limit)
        ]

    def reply_ids(self, author: str) -> set[int]:
        """The ids of `author`'s own messages whose lines are here (its answers)."""
        return self._lines.reply_ids(author)

    def close(self) -> None:
        self._lines.close()
