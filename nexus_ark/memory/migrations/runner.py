"""The list of schema steps (filled from STEPS in __init__.py) and the two checks that use it: migrate (the
owner brings a database up to date) and check_current (every other connection)."""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils
from sqlite_utils.migrations import Migrations

from nexus_ark.errors import DatabaseError
from nexus_ark.notices import Notice, notice

MIGRATION_SET = "nexus_ark"
migrations = Migrations(MIGRATION_SET)
# One schema step: it changes the database it is given, inside the transaction sqlite-utils opens for it.
Step = Callable[[sqlite_utils.Database], None]


def migrate(db: sqlite_utils.Database, where: str) -> None:
    """Bring the database up to date; refuse one written by a newer Nexus Ark."""
    known = {m.name for m in migrations._migrations}
    applied = {m.name for m in migrations.applied(db)}
    unknown = sorted(applied - known)
    if unknown:
        raise DatabaseError(_newer(where, unknown), hint=UPDATE_TO_OPEN)
    migrations.apply(db)


UPDATE_TO_OPEN = notice("Update Nexus Ark to open it. It was not changed.")


def _newer(where: str, unknown: list[str]) -> Notice:
    return notice(
        "The memory database {path} was written by a newer version of Nexus Ark (it has schema steps this "
        "version does not know: {steps}).",
        path=where,
        steps=", ".join(unknown),
    )


def check_current(db: sqlite_utils.Database, where: str) -> None:
    """For connections that are not the owner: the schema must already be this version's, unchanged."""
    known = [m.name for m in migrations._migrations]
    applied = {m.name for m in migrations.applied(db)}  # read-only
    unknown = sorted(applied - set(known))
    if unknown:
        raise DatabaseError(_newer(where, unknown), hint=UPDATE_TO_OPEN)
    missing = [name for name in known if name not in applied]
    if missing:
        raise DatabaseError(
            notice(
                "The memory database {path} has not been brought up to date yet (missing: {steps}).",
                path=where,
                steps=", ".join(missing),
            ),
            hint=notice("Open the persona in Nexus Ark once (its owner updates the schema), then try again."),
        )
