"""job_runs (migration m011): the one owner of the table. When each of the scheduler's jobs last ran, kept
across restarts so a restart neither repeats a job nor forgets it was missed (runtime/schedule.py)."""

from __future__ import annotations

from datetime import datetime

import sqlite_utils

from nexus_ark.clock import iso, stored_time


class JobRuns:
    """job_runs rows: one per scheduled job, its last run."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def last_runs(self) -> dict[str, datetime]:
        """When each job last ran; a job whose stored time is no longer usable is left out (never ran)."""
        return {
            job: when
            for job, stamp in self.db.execute("select job, last_run from job_runs").fetchall()
            if (when := stored_time(stamp)) is not None
        }

    def record(self, job: str, when: datetime) -> None:
        """Job `job` ran at `when`."""
        with self.db.atomic():
            self.db.execute(
                "insert into job_runs (job, last_run) values (?, ?) "
                "on conflict(job) do update set last_run = excluded.last_run",
                [job, iso(when)],
            )
