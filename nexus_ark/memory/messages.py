"""Messages as they happen. A reply is journaled while it streams, so a crash keeps what was said."""

from __future__ import annotations

import json
from typing import Any, Literal

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso

MessageStatus = Literal["complete", "streaming", "stopped", "interrupted", "error"]
DEFAULT_ROOM = "main"


class StoredMessage(BaseModel):
    id: int
    room: str
    speaker: str
    role: str
    content: str
    status: MessageStatus
    created_at: str
    updated_at: str | None = None
    source_id: str | None = None
    meta: dict[str, Any] = {}


class MessageStore:
    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()

    def add(
        self,
        *,
        speaker: str,
        role: str,
        content: str,
        room: str = DEFAULT_ROOM,
        status: MessageStatus = "complete",
        source_id: str | None = None,
        meta: dict[str, Any] | None = None,
        created_at: str | None = None,
    ) -> int:
        now = iso(self.clock.now())
        with self.db.atomic():
            table = self.db["messages"].insert(
                {
                    "room": room,
                    "speaker": speaker,
                    "role": role,
                    "content": content,
                    "status": status,
                    "created_at": created_at or now,
                    "updated_at": now,
                    "source_id": source_id,
                    "meta": json.dumps(meta) if meta else None,
                }
            )
        return int(table.last_pk)

    def update_content(
        self,
        message_id: int,
        content: str,
        *,
        status: MessageStatus | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        changes: dict[str, Any] = {"content": content, "updated_at": iso(self.clock.now())}
        if status is not None:
            changes["status"] = status
        if meta is not None:
            changes["meta"] = json.dumps(meta)
        with self.db.atomic():
            self.db["messages"].update(message_id, changes)

    def recent(self, room: str = DEFAULT_ROOM, limit: int = 200) -> list[StoredMessage]:
        rows = self.db.execute(
            "select * from (select * from messages where room = ? order by id desc limit ?) order by id",
            [room, limit],
        )
        cols = [c[0] for c in rows.description]
        return [self._to_model(dict(zip(cols, row, strict=True))) for row in rows.fetchall()]

    def get(self, message_id: int) -> StoredMessage:
        return self._to_model(self.db["messages"].get(message_id))

    def count(self, room: str | None = None) -> int:
        if room is None:
            return self.db["messages"].count
        return self.db.execute("select count(*) from messages where room = ?", [room]).fetchone()[0]

    def recover_interrupted(self) -> int:
        """Replies still 'streaming' at start-up were cut off by a crash: keep the text, mark them."""
        with self.db.atomic():
            cur = self.db.execute(
                "update messages set status = 'interrupted', updated_at = ? where status = 'streaming'",
                [iso(self.clock.now())],
            )
        return cur.rowcount

    @staticmethod
    def _to_model(row: dict[str, Any]) -> StoredMessage:
        row = dict(row)
        row["meta"] = json.loads(row["meta"]) if row.get("meta") else {}
        return StoredMessage.model_validate(row)
