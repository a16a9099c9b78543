"""dream_jobs (migration m009): the one owner of the table. A row is one dream pass over a day: its level,
the messages it covered (after_id, through_id), each stage's record as it completes, and the result when it
ends (`done`, `skipped` or `failed`).

The dreamer (nexus_ark.dreaming) writes through it; the runtime asks it for a pass a crash cut off; the
window's dashboard reads the diary and the latest reason for not reflecting through a reader's
`MemoryStore.dream_jobs`. What a result holds is the dreamer's (DreamResult): here it is JSON text.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any, NamedTuple

import sqlite_utils

from nexus_ark.clock import Clock, SystemClock, iso


class UnfinishedDream(NamedTuple):
    """A pass still marked running: a crash or a shutdown cut it off."""

    level: int
    day: date


class FinishedDream(NamedTuple):
    """A finished pass that stored a result, as the dream diary reads it."""

    finished_at: str
    level: int
    day: str
    result: str  # the DreamResult as stored (JSON)


class HeldBack(NamedTuple):
    """Why the latest finished dream did not ask the model to reflect, and which model it was."""

    reason: str
    model: str


class DreamJobs:
    """dream_jobs rows: one per pass over a day (a level, and the messages it covered)."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    # -- reading ----------------------------------------------------------------------------------
    def running(self, day: date) -> dict[str, Any] | None:
        """The day's newest pass still marked running (one a crash cut off), as a row."""
        rows = list(
            self.db.query(
                "select * from dream_jobs where date = ? and state = 'running' order by id desc limit 1",
                [day.isoformat()],
            )
        )
        return rows[0] if rows else None

    def finished(self, day: date) -> list[dict[str, Any]]:
        """The day's finished passes, oldest first, as rows."""
        return list(
            self.db.query(
                "select * from dream_jobs where date = ? and state != 'running' order by id",
                [day.isoformat()],
            )
        )

    def unfinished(self) -> UnfinishedDream | None:
        """The newest pass still marked running, on any day (None: none was cut off)."""
        row = self.db.execute(
            "select level, date from dream_jobs where state = 'running' order by id desc limit 1"
        ).fetchone()
        return UnfinishedDream(int(row[0]), date.fromisoformat(row[1])) if row is not None else None

    def finished_results(self, limit: int = 100) -> list[FinishedDream]:
        """The newest finished passes that stored a result, newest first (the dream diary)."""
        return [
            FinishedDream(str(r[0] or ""), int(r[1]), str(r[2]), str(r[3]))
            for r in self.db.execute(
                "select finished_at, level, date, result from dream_jobs "
                "where state = 'done' and result is not null order by id desc limit ?",
                [limit],
            ).fetchall()
        ]

    def held_back(self) -> HeldBack | None:
        """The latest finished dream's reason for not asking the model to reflect (None: it asked, or no
        dream finished yet)."""
        row = self.db.execute(
            "select json_extract(result, '$.reflection'), json_extract(result, '$.model') from dream_jobs "
            "where state != 'running' and result is not null order by id desc limit 1"
        ).fetchone()
        if not row or not row[0]:
            return None
        return HeldBack(str(row[0]), str(row[1] or ""))

    def done_per_level(self) -> dict[int, int]:
        """How many passes finished done, per level."""
        return {
            int(level): int(count)
            for level, count in self.db.execute(
                "select level, count(*) from dream_jobs where state = 'done' group by level"
            ).fetchall()
        }

    def detailed_before(self, before: str, limit: int) -> list[tuple[int, dict[str, Any]]]:
        """Finished passes older than `before` whose stages still hold their output or grounding (what
        retention slims), oldest first: (id, stages)."""
        rows = self.db.execute(
            "select id, stages from dream_jobs where state != 'running' "
            "and coalesce(finished_at, updated_at) < ? and json_valid(stages) "
            "and exists (select 1 from json_each(stages) "
            "where json_type(value) = 'object' and (json_type(value, '$.output') is not null "
            "or json_type(value, '$.grounding') is not null)) order by id limit ?",
            [before, limit],
        ).fetchall()
        return [(int(job_id), json.loads(stages)) for job_id, stages in rows]

    # -- writing ----------------------------------------------------------------------------------
    def start(
        self, level: int, day: date, after_id: int | None, through_id: int | None, stages: dict[str, Any]
    ) -> int:
        """A new pass, running; returns its id."""
        now = iso(self.clock.now())
        with self.db.atomic():
            cur = self.db.execute(
                "insert into dream_jobs (level, date, state, stages, started_at, updated_at, after_id, "
                "through_id) values (?,?,?,?,?,?,?,?)",
                [
                    level,
                    day.isoformat(),
                    "running",
                    json.dumps(stages, ensure_ascii=False),
                    now,
                    now,
                    after_id,
                    through_id,
                ],
            )
        return int(cur.lastrowid or 0)

    def mark_stage(self, job_id: int, name: str, record: dict[str, Any]) -> None:
        """A stage completed: its record joins the pass's (inside the caller's transaction, if any)."""
        self.db.execute(
            "update dream_jobs set stages = json_set(stages, '$.' || ?, json(?)), updated_at = ? "
            "where id = ?",
            [name, json.dumps(record, ensure_ascii=False), iso(self.clock.now()), job_id],
        )

    def finish(self, job_id: int, state: str, result_json: str) -> None:
        """The pass ended (`done`, `skipped` or `failed`) with its result as JSON."""
        now = iso(self.clock.now())
        self.db.execute(
            "update dream_jobs set state = ?, result = ?, updated_at = ?, finished_at = ? where id = ?",
            [state, result_json, now, now, job_id],
        )

    def replace_stages(self, job_id: int, stages: dict[str, Any]) -> None:
        """A pass's stage records, replaced whole (retention keeps each stage's state only)."""
        self.db.execute("update dream_jobs set stages = ? where id = ?", [json.dumps(stages), job_id])
