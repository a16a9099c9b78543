"""What every component's reads and edits share: the persona's connection, its archive, the clock and
the activity timeline each change is entered in: what each part is given."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.archive import Archive
from nexus_ark.memory.db import inserted_id as inserted_id  # the parts take it from here


def json_list(value: str | None) -> list[Any]:
    """A JSON list column read back ([] for null or empty)."""
    return json.loads(value) if value else []


class ComponentPart:
    """What one part of the components (written, goals, inner_state) is given: the persona's connection,
    its archive, the clock and the activity timeline. Each part is its own object; Components holds them."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        archive: Archive,
        clock: Clock | None = None,
        *,
        activity: ActivityLog | None = None,
    ) -> None:
        self.db = db
        self.archive = archive
        self.clock = clock or SystemClock()
        self.activity = activity or ActivityLog(db, self.clock)

    def _now(self) -> str:
        return iso(self.clock.now())
