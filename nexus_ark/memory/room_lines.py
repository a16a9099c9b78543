"""A room's journal database (rooms/<slug>/journal.db): its one table, `lines`, and the one connection to
it. A line is committed here before the members hear it (nexus_ark/rooms/journal.py says why).

A conversation's thread and a member writing first (on its own queue thread) share the connection, so
each use of it is taken under a lock: the driver's connections are not for two threads at once."""

from __future__ import annotations

import threading
from pathlib import Path

from nexus_ark.memory.db import database_error, sqlite

# key, author, name, text, created_at, reply_id
LineRow = tuple[str, str | None, str, str, str, int | None]


class RoomLines:
    """The `lines` table of one room's journal.db: one row a line said, in order (seq)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self.conn = sqlite.connect(str(path), check_same_thread=False, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")  # a line the members are told of is on disk
            self.conn.execute(
                "create table if not exists lines (seq integer primary key, key text unique not null, "
                "author text, name text not null, text text not null, created_at text not null, "
                "reply_id integer)"
            )
        except sqlite.Error as exc:
            raise database_error(exc, path) from exc

    def add(self, row: LineRow) -> None:
        """A line, committed (autocommit) before this returns."""
        try:
            with self._lock:
                self.conn.execute(
                    "insert into lines (key, author, name, text, created_at, reply_id) "
                    "values (?, ?, ?, ?, ?, ?)",
                    list(row),
                )
        except sqlite.Error as exc:
            raise database_error(exc, self.path) from exc

    def newest(self, limit: int | None = None) -> list[LineRow]:
        """The newest `limit` lines (all: None), in the order said."""
        with self._lock:
            rows = self.conn.execute(
                "select key, author, name, text, created_at, reply_id from "
                "(select * from lines order by seq desc limit ?) order by seq",
                [limit if limit is not None else -1],
            ).fetchall()
        return [(k, a, n, t, c, r) for k, a, n, t, c, r in rows]

    def reply_ids(self, author: str) -> set[int]:
        """The ids of `author`'s own messages whose lines are here (its answers)."""
        with self._lock:
            rows = self.conn.execute(
                "select reply_id from lines where author = ? and reply_id is not null", [author]
            ).fetchall()
        return {int(r[0]) for r in rows}

    def close(self) -> None:
        with self._lock:
            self.conn.close()
