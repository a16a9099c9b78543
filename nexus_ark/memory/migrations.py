"""The append-only schema history of memory.db. Never edit a migration that has shipped: add one."""

from __future__ import annotations

import sqlite_utils
from sqlite_utils.migrations import Migrations

from nexus_ark.errors import DatabaseError

MIGRATION_SET = "nexus_ark"
migrations = Migrations(MIGRATION_SET)


@migrations()
def m001_messages(db: sqlite_utils.Database) -> None:
    # room + speaker from the start: rooms with several personas need no new schema later.
    db["messages"].create(
        {
            "id": int,
            "room": str,
            "speaker": str,
            "role": str,
            "content": str,
            "status": str,
            "created_at": str,
            "updated_at": str,
            "source_id": str,
            "meta": str,
        },
        pk="id",
        not_null={"room", "speaker", "role", "content", "status", "created_at"},
        defaults={"room": "main", "status": "complete", "content": ""},
    )
    db["messages"].create_index(["room", "id"])
    db["messages"].create_index(["status"])


def migrate(db: sqlite_utils.Database, where: str) -> None:
    """Bring the database up to date; refuse one written by a newer Nexus Ark."""
    known = {m.name for m in migrations._migrations}
    applied = {m.name for m in migrations.applied(db)}
    unknown = sorted(applied - known)
    if unknown:
        raise DatabaseError(
            f"The memory database {where} was written by a newer version of Nexus Ark "
            f"(it has schema steps this version does not know: {', '.join(unknown)}).",
            hint="Update Nexus Ark to open it. It was not changed.",
        )
    migrations.apply(db)
