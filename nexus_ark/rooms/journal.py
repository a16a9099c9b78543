"""A room's own record of what was said, in order (rooms/<slug>/journal.db): the room shows it and
delivers from it. A line is written here, committed, and only then handed to the members, so a crash
between the two is mended at the next open: every member hears what it missed (each line once)."""

from __future__ import annotations

import uuid
from pathlib import Path

from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.memory.db import database_error, sqlite

JOURNAL_FILE = "journal.db"


class RoomJournal:
    """One connection, used by the room's own thread (the CLI's, or the window's room lane)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE
        try:
            self.conn = sqlite.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")  # a line the members are told of is on disk
            self.conn.execute(
                "create table if not exists lines (seq integer primary key, key text unique not null, "
                "author text, name text not null, text text not null, created_at text not null, "
                "reply_id integer)"
            )
        except sqlite.Error as exc:
            raise database_error(exc, self.path) from exc

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
        try:
            self.conn.execute(
                "insert into lines (key, author, name, text, created_at, reply_id) values (?, ?, ?, ?, ?, ?)",
                [line.key, line.author, line.name, line.text, line.created_at, line.reply_id],
            )
        except sqlite.Error as exc:
            raise database_error(exc, self.path) from exc
        return line

    def lines(self, limit: int | None = None) -> list[HeardLine]:
        rows = self.conn.execute(
            "select key, author, name, text, created_at, reply_id from "
            "(select * from lines order by seq desc limit ?) order by seq",
            [limit if limit is not None else -1],
        ).fetchall()
        return [
            HeardLine(key=k, author=a, name=n, text=t, created_at=c, reply_id=r) for k, a, n, t, c, r in rows
        ]

    def reply_ids(self, author: str) -> set[int]:
        """The ids of `author`'s own messages whose lines are here (its answers)."""
        rows = self.conn.execute(
            "select reply_id from lines where author = ? and reply_id is not null", [author]
        ).fetchall()
        return {r[0] for r in rows}

    def close(self) -> None:
        self.conn.close()
