"""The archive's items: what is written, changed, moved aside, deleted and read back, one row each."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import sqlite_utils
from pydantic import BaseModel, Field

from nexus_ark.clock import Clock, iso
from nexus_ark.memory.archive.vectors import ArchiveVectors

# Neighbouring messages belong to one exchange when they are this close in time.
CONTEXT_WINDOW_S = 6 * 3600


class NewItem(BaseModel):
    kind: str
    text: str
    source_id: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    room: str | None = None
    speaker: str | None = None
    created_at: str | None = None
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    meta: dict[str, Any] = Field(default_factory=dict)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ArchiveItems:
    """The archive's item rows: what is written, changed, moved aside, deleted and read back. An item
    changed or deleted loses its vectors through `vectors` (embedded anew where it stays)."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock, vectors: ArchiveVectors) -> None:
        self.db = db
        self.clock = clock
        self.vectors = vectors

    def add(self, item: NewItem, *, context: str = "", embed_text: str | None = None) -> int:
        return self.add_many([(item, context, embed_text)])[0]

    def add_many(self, rows: Sequence[tuple[NewItem, str, str | None]]) -> list[int]:
        """Insert items in one transaction; returns their ids in order."""
        now = iso(self.clock.now())
        ids: list[int] = []
        with self.db.atomic():
            for item, context, embed_text in rows:
                to_embed = embed_text if embed_text is not None else item.text
                cur = self.db.execute(
                    "insert into items (kind, text, context, source_id, source_ids, room, speaker, "
                    "created_at, updated_at, importance, embed_text, embed_hash, meta) "
                    "values (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        item.kind,
                        item.text,
                        context,
                        item.source_id,
                        json.dumps(item.source_ids) if item.source_ids else None,
                        item.room,
                        item.speaker,
                        item.created_at or now,
                        now,
                        item.importance,
                        embed_text if embed_text not in (None, item.text) else None,
                        content_hash(to_embed),
                        json.dumps(item.meta) if item.meta else None,
                    ],
                )
                ids.append(int(cur.lastrowid or 0))  # an insert always sets it
        return ids

    def update_text(self, item_id: int, text: str) -> None:
        with self.db.atomic():
            self.db.execute(
                "update items set text = ?, embed_text = null, embed_hash = ?, updated_at = ? where id = ?",
                [text, content_hash(text), iso(self.clock.now()), item_id],
            )
            self.vectors.drop_vectors([item_id])  # made of the old text: pending again, embedded anew

    def set_context(self, item_id: int, context: str) -> None:
        with self.db.atomic():
            self.db.execute("update items set context = ? where id = ?", [context, item_id])

    def set_embed_text(self, item_id: int, embed_text: str | None) -> None:
        """Change what an item's vector is made of (None: its own text); its vectors are remade."""
        with self.db.atomic():
            row = self.db.execute("select text from items where id = ?", [item_id]).fetchone()
            if row is None:
                return
            embed_text = None if embed_text == row[0] else embed_text
            self.db.execute(
                "update items set embed_text = ?, embed_hash = ? where id = ?",
                [embed_text, content_hash(embed_text if embed_text is not None else row[0]), item_id],
            )
            self.vectors.drop_vectors([item_id])

    def archive(self, item_id: int, reason: str) -> None:
        """Move an item aside: it leaves recall but is never deleted."""
        with self.db.atomic():
            self.db.execute(
                "update items set archived = 1, archived_at = ?, archive_reason = ? where id = ?",
                [iso(self.clock.now()), reason, item_id],
            )

    def restore(self, item_id: int) -> None:
        with self.db.atomic():
            self.db.execute(
                "update items set archived = 0, archived_at = null, archive_reason = null where id = ?",
                [item_id],
            )

    def delete_items(self, item_ids: Sequence[int]) -> None:
        """Really delete (only for what the person removes, such as a knowledge document): items, their
        full-text entries (by trigger) and their vectors in every model's index."""
        if not item_ids:
            return
        marks = ",".join("?" * len(item_ids))
        with self.db.atomic():
            self.vectors.drop_vectors(item_ids)
            self.db.execute(f"delete from items where id in ({marks})", list(item_ids))

    def get(self, item_id: int) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from items where id = ?", [item_id]))
        return rows[0] if rows else None

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return self.db.execute("select count(*) from items").fetchone()[0]
        return self.db.execute("select count(*) from items where kind = ?", [kind]).fetchone()[0]

    def ids_of_source(self, source_id: str) -> list[int]:
        """The items made from one source (a message, a document chunk), oldest first."""
        rows = self.db.execute("select id from items where source_id = ? order by id", [source_id])
        return [int(r[0]) for r in rows.fetchall()]

    def written_since(self, since: str, kinds: Sequence[str]) -> list[int]:
        """The items of these kinds written or changed at `since` or later."""
        if not kinds:
            return []
        marks = ",".join("?" * len(kinds))
        rows = self.db.execute(
            f"select id from items where kind in ({marks}) and updated_at >= ?", [*kinds, since]
        )
        return [int(r[0]) for r in rows.fetchall()]

    def newest_ids(self, kind: str, created_since: str, limit: int) -> list[int]:
        """At most `limit` items of a kind created at `created_since` or later, newest first."""
        rows = self.db.execute(
            "select id from items where kind = ? and created_at >= ? order by id desc limit ?",
            [kind, created_since, limit],
        )
        return [int(r[0]) for r in rows.fetchall()]
