"""Messages as they happen. A reply is journaled while it streams, so a crash keeps what was said."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, cast

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
            table = self.db.table("messages").insert(
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
        return int(cast(int, table.last_pk))

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
            self.db.table("messages").update(message_id, changes)

    def recent(self, room: str = DEFAULT_ROOM, limit: int = 200) -> list[StoredMessage]:
        return self.select(
            "select * from (select * from messages where room = ? and hidden = 0 order by id desc limit ?) "
            "order by id",
            [room, limit],
        )

    def select(self, sql: str, params: Sequence[object]) -> list[StoredMessage]:
        """The messages a query over the messages table returns (pages, searches), in its order."""
        return [self._to_model(row) for row in self.db.query(sql, params)]

    def cut_replies(self, room: str, since: str) -> list[StoredMessage]:
        """The persona's answers in `room` that a kill cut off (marked interrupted when the memory opened),
        made at `since` or later and not empty, oldest first."""
        return self.select(
            "select * from messages where room = ? and role = 'assistant' and status = 'interrupted' "
            "and hidden = 0 and content != '' and created_at >= ? order by id",
            [room, since],
        )

    def get(self, message_id: int) -> StoredMessage:
        try:
            return self._to_model(self.db.table("messages").get(message_id))
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

    def last_from_person(self, *, shown_only: bool = False) -> str | None:
        """When the person last wrote (the stored time as written; None: never). shown_only: on the
        conversation's line, and not a message that failed."""
        row = self.db.execute(
            "select max(created_at) from messages where role = 'user'"
            + (" and hidden = 0 and status != 'error'" if shown_only else "")
        ).fetchone()
        return str(row[0]) if row and row[0] else None

    # -- reading by meaning (callers outside memory/ ask these, never SQL) -----------------------
    def exists(self, message_id: int) -> bool:
        return self.db.execute("select 1 from messages where id = ?", [message_id]).fetchone() is not None

    def has_source(self, source_id: str) -> bool:
        """Whether a message with this source id is stored (a line delivered or imported before)."""
        return (
            self.db.execute("select 1 from messages where source_id = ?", [source_id]).fetchone() is not None
        )

    def hidden_ids(self, room: str) -> set[int]:
        """The room's messages taken off the conversation's line (other branches, hidden versions)."""
        return {
            int(r[0])
            for r in self.db.execute(
                "select id from messages where room = ? and hidden = 1", [room]
            ).fetchall()
        }

    def shown_between(self, room: str, after_id: int, before_id: int, limit: int) -> list[StoredMessage]:
        """The room's messages on the line with after_id < id < before_id, oldest first, at most `limit`."""
        return self.select(
            "select * from messages where room = ? and hidden = 0 and id > ? and id < ? order by id limit ?",
            [room, after_id, before_id, limit],
        )

    def newest_ids(self, room: str, limit: int) -> list[int]:
        """The room's newest message ids (any but failed replies), newest first."""
        return [
            int(r[0])
            for r in self.db.execute(
                "select id from messages where room = ? and status != 'error' order by id desc limit ?",
                [room, limit],
            ).fetchall()
        ]

    def said_between(self, since: str, until: str) -> list[tuple[int, str, str, str]]:
        """(id, created_at, who said it, text) of the finished, shown, non-empty messages created in
        [since, until), in every room, in the order said. In a room of several personas another member
        speaks under its name; a note passed on, under its sender's."""
        rows = self.db.execute(
            "select id, created_at, "
            "coalesce(json_extract(meta, '$.name'), json_extract(meta, '$.note_from'), speaker), content "
            "from messages where created_at >= ? and created_at < ? "
            "and hidden = 0 and status in ('complete', 'stopped', 'interrupted') and content != '' "
            "order by created_at, id",
            [since, until],
        ).fetchall()
        return [(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def roles_of(self, ids: list[int]) -> tuple[dict[int, str], set[int]]:
        """Each message's role, and the ids of those that were imported (they carry a source id)."""
        roles: dict[int, str] = {}
        imported: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for mid, role, source in self.db.execute(
                f"select id, role, source_id from messages where id in ({marks})", chunk
            ).fetchall():
                roles[int(mid)] = role
                if source is not None:
                    imported.add(int(mid))
        return roles, imported

    def newest_times(self, limit: int = 200) -> list[str]:
        """When the newest shown messages were written (stored times), newest first."""
        return [
            str(r[0])
            for r in self.db.execute(
                "select created_at from messages where hidden = 0 order by created_at desc limit ?", [limit]
            ).fetchall()
        ]

    def unread_feelings(self, limit: int) -> list[tuple[int, str, str]]:
        """(id, created_at, text) of the person's newest shown messages that have no emotion reading in
        emotion_log yet (an import's older lines), newest first, at most `limit`."""
        rows = self.db.execute(
            "select m.id, m.created_at, m.content from messages m where m.role = 'user' and m.hidden = 0 "
            "and m.content != '' and not exists (select 1 from emotion_log e where e.message_id = m.id) "
            "order by m.created_at desc limit ?",
            [limit],
        ).fetchall()
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def room_person_last_wrote_in(self) -> str | None:
        """The room of the person's newest message on the conversation's line (None: none)."""
        row = self.db.execute(
            "select room from messages where role = 'user' and speaker = 'user' and hidden = 0 "
            "order by id desc limit 1"
        ).fetchone()
        return str(row[0]) if row else None

    def others_spoke_since(self, room: str, since: str) -> bool:
        """Whether anyone but the person wrote in `room` at `since` or after."""
        return (
            self.db.execute(
                "select 1 from messages where room = ? and speaker != 'user' and created_at >= ? limit 1",
                [room, since],
            ).fetchone()
            is not None
        )

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
