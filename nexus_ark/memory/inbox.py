"""The inbox: messages a persona wrote on its own, until the person reads them (migration m011).

The rows point at the messages themselves (deleting a message removes its row); the unread count per persona
is what the window's list and the tray badge show. The runtime also reads it to keep autonomy decent: when
the persona last wrote first, and how often today.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta

from pydantic import BaseModel

from nexus_ark.clock import Clock, iso, stored_time
from nexus_ark.memory.store import MemoryStore


class InboxEntry(BaseModel):
    message_id: int
    room: str
    created_at: str
    read_at: str | None
    text: str
    meta: dict
    room_title: str | None = None  # written first in a room of several personas (app.life.inbox fills it)


class Inbox:
    def __init__(self, memory: MemoryStore, clock: Clock) -> None:
        self.db = memory.db
        self.clock = clock

    def add(self, message_id: int, room: str) -> None:
        self.db.execute(
            "insert or ignore into inbox (message_id, room, created_at) values (?, ?, ?)",
            [message_id, room, iso(self.clock.now())],
        )

    def unread(self) -> int:
        return int(self.db.execute("select count(*) from inbox where read_at is null").fetchone()[0])

    def entries(self, *, unread_only: bool = False, limit: int = 200) -> list[InboxEntry]:
        rows = self.db.execute(
            "select i.message_id, i.room, i.created_at, i.read_at, m.content, m.meta from inbox i "
            "join messages m on m.id = i.message_id "
            + ("where i.read_at is null " if unread_only else "")
            + "order by i.created_at desc limit ?",
            [limit],
        ).fetchall()
        return [
            InboxEntry(
                message_id=r[0],
                room=r[1],
                created_at=r[2],
                read_at=r[3],
                text=r[4],
                meta=json.loads(r[5] or "{}"),
            )
            for r in rows
        ]

    def mark_read(self, message_ids: list[int] | None = None) -> int:
        """Mark these (or all unread) as read; returns how many changed."""
        now = iso(self.clock.now())
        with self.db.atomic():
            if message_ids is None:
                cur = self.db.execute("update inbox set read_at = ? where read_at is null", [now])
            else:
                marks = ",".join("?" * len(message_ids)) or "null"
                cur = self.db.execute(
                    f"update inbox set read_at = ? where read_at is null and message_id in ({marks})",
                    [now, *message_ids],
                )
        return cur.rowcount

    def last_sent(self) -> datetime | None:
        row = self.db.execute("select max(created_at) from inbox").fetchone()
        return stored_time(row[0]) if row and row[0] else None

    def unanswered(self) -> int:
        """How many messages the persona wrote first since the person last wrote."""
        row = self.db.execute("select max(created_at) from messages where role = 'user'").fetchone()
        since = row[0] if row and row[0] else ""
        return int(
            self.db.execute(
                "select count(*) from inbox i join messages m on m.id = i.message_id where m.created_at > ?",
                [since],
            ).fetchone()[0]
        )

    def sent_on(self, day: date) -> int:
        """How many the persona wrote on its own on this local date."""
        rows = self.db.execute(
            "select created_at from inbox where created_at >= ?",
            [(day - timedelta(days=1)).isoformat()],  # stored in UTC: a day's margin either way
        ).fetchall()
        return sum(1 for (stamp,) in rows if (dt := stored_time(stamp)) and dt.astimezone().date() == day)
