"""Messages as they happen. A reply is journaled while it streams, so a crash keeps what was said."""

from __future__ import annotations

import json
from typing import Any, Literal

import sqlite_utils
from pydantic import BaseModel
from sqlite_utils.db import NotFoundError

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice

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
    version_of: int | None = None  # the first version's id, for a regenerated reply or an edited message
    hidden: bool = False  # not on the conversation's current line (an earlier version, or its branch)
    branch_of: int | None = None

    @property
    def version_group(self) -> int:
        return self.version_of or self.id


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
        version_of: int | None = None,
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
                    "version_of": version_of,
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
        return self.select(
            "select * from (select * from messages where room = ? and hidden = 0 order by id desc limit ?) "
            "order by id",
            [room, limit],
        )

    def select(self, sql: str, params: list[object]) -> list[StoredMessage]:
        """The messages a query over the messages table returns (pages, searches), in its order."""
        return [self._to_model(row) for row in self.db.query(sql, params)]

    def get(self, message_id: int) -> StoredMessage:
        try:
            return self._to_model(self.db["messages"].get(message_id))
        except NotFoundError:
            raise NexusArkError(notice("There is no message {message_id}.", message_id=message_id)) from None

    # -- versions and branches --------------------------------------------------------------------
    def versions(self, message_id: int) -> list[StoredMessage]:
        """Every version of a message (a regenerated reply, an edited message), oldest first."""
        group = self.get(message_id).version_group
        rows = self.db.query(
            "select * from messages where id = ? or version_of = ? order by id", [group, group]
        )
        return [self._to_model(r) for r in rows]

    def hide_from(self, message_id: int) -> int:
        """Take a message and everything after it on the current line off that line, as its branch
        (kept, not deleted: choosing this version again brings them back). Returns how many."""
        message = self.get(message_id)
        with self.db.atomic():
            cur = self.db.execute(
                "update messages set hidden = 1, branch_of = ? where room = ? and hidden = 0 and id > ?",
                [message.id, message.room, message.id],
            )
            self.db.execute("update messages set hidden = 1 where id = ?", [message.id])
        return cur.rowcount + 1

    def choose_version(self, message_id: int) -> None:
        """Make this version the one the conversation shows and the next prompt sees: the version on the
        line now steps aside with what followed it, and this one comes back with its own branch."""
        target = self.get(message_id)
        current = next((v for v in self.versions(message_id) if not v.hidden), None)
        if current is not None and current.id == target.id:
            return
        with self.db.atomic():
            if current is not None:
                self.hide_from(current.id)
            self.db.execute(
                "update messages set hidden = 0, branch_of = null where id = ? or branch_of = ?",
                [target.id, target.id],
            )

    def delete(self, message_id: int) -> None:
        """Delete one message (its words leave the timeline too). What memory derived from it stays
        unless the caller also forgets it (MemoryStore.forget)."""
        self.get(message_id)
        with self.db.atomic():
            # Later versions point at the first: the next one becomes the group's first.
            rest = [
                r[0]
                for r in self.db.execute(
                    "select id from messages where version_of = ? order by id", [message_id]
                ).fetchall()
            ]
            if rest:
                self.db.execute("update messages set version_of = null where id = ?", [rest[0]])
                self.db.execute(
                    "update messages set version_of = ? where version_of = ?", [rest[0], message_id]
                )
            self.db.execute("delete from messages where id = ?", [message_id])

    def count(self, room: str | None = None) -> int:
        if room is None:
            return self.db["messages"].count
        return self.db.execute("select count(*) from messages where room = ?", [room]).fetchone()[0]

    def recover_interrupted(self) -> int:
        """Replies still 'streaming' at start-up were cut off by a crash: keep the text, mark them. A draft
        of a message the persona wrote first is not a message until complete (it has no inbox row and the
        runtime writes it again): it is removed."""
        with self.db.atomic():
            drafts = self.db.execute(
                "select id from messages where status = 'streaming' "
                "and json_extract(meta, '$.autonomous') is not null"
            ).fetchall()
            for (draft,) in drafts:
                self.delete(draft)
            cur = self.db.execute(
                "update messages set status = 'interrupted', updated_at = ? where status = 'streaming'",
                [iso(self.clock.now())],
            )
        return cur.rowcount

    @staticmethod
    def _to_model(row: dict[str, Any]) -> StoredMessage:
        row = dict(row)
        row["meta"] = json.loads(row["meta"]) if row.get("meta") else {}
        row["hidden"] = bool(row.get("hidden"))
        return StoredMessage.model_validate(row)
