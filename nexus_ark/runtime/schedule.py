"""Which of a persona's jobs are due, as a pure function of the time and what ran when (job_runs), so the
scheduler's choices are tested on the injectable clock. APScheduler only wakes the runtime up (and parses
the routines' cron expressions); it decides nothing.

Runs missed while the app was closed coalesce: a job is due once however many of its times passed.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from apscheduler.triggers.cron import CronTrigger
from pydantic import BaseModel, Field

from nexus_ark.clock import stored_time
from nexus_ark.dreaming.dream import undreamt
from nexus_ark.dreaming.material import latest_day
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.model import AutonomySettings
from nexus_ark.runtime.autonomy import in_quiet_hours

DRIVES_EVERY = timedelta(minutes=15)
BACKUP_EVERY = timedelta(days=1)
DREAM_RETRY = timedelta(minutes=30)  # a dream whose model failed is tried again after this
RETENTION_EVERY = timedelta(days=1)  # older detail rolled up into days (memory/retention.py)
RETENTION_IDLE = timedelta(minutes=30)  # ...once the person has been away this long: a quiet time


class ScheduleState(BaseModel):
    last_runs: dict[str, datetime] = Field(default_factory=dict)  # job name -> when it last ran
    last_user_message: datetime | None = None
    undreamt_day: date | None = None  # the latest day with conversation that has no finished dream


def routine_job(index: int) -> str:
    return f"routine:{index}"


def _every(job: str, period: timedelta, now: datetime, state: ScheduleState) -> bool:
    last = state.last_runs.get(job)
    return last is None or now - last >= period


def routine_due(cron: str, last: datetime | None, now: datetime) -> bool:
    """A routine is due when one of its times came since it last ran (never run: since an hour ago, so a
    new routine waits for its time instead of firing at once)."""
    since = last or now - timedelta(hours=1)
    trigger = CronTrigger.from_crontab(cron, timezone=now.tzinfo)
    fire = trigger.get_next_fire_time(None, since + timedelta(microseconds=1))
    return fire is not None and fire <= now


def due_jobs(now: datetime, autonomy: AutonomySettings, state: ScheduleState) -> list[str]:
    """`now` in the persona's local time (aware). Order: what keeps state right first."""
    jobs = []
    if _every("drives", DRIVES_EVERY, now, state):
        jobs.append("drives")
    if _every("backup", BACKUP_EVERY, now, state):
        jobs.append("backup")
    idle = now - state.last_user_message if state.last_user_message else timedelta.max
    if idle >= RETENTION_IDLE and _every("retention", RETENTION_EVERY, now, state):
        jobs.append("retention")
    # A finished day not dreamt yet: at night once the person has gone, or at start after a missed night.
    if (
        autonomy.enabled
        and state.undreamt_day is not None
        and state.undreamt_day < now.date()
        and idle >= timedelta(minutes=autonomy.dream_idle_minutes)
        and _every("dream", DREAM_RETRY, now, state)
    ):
        jobs.append("dream")
    quiet = in_quiet_hours(now, autonomy.quiet_hours)
    if autonomy.enabled and not quiet:
        if autonomy.heartbeat_minutes and _every(
            "heartbeat", timedelta(minutes=autonomy.heartbeat_minutes), now, state
        ):
            jobs.append("heartbeat")
        for i, routine in enumerate(autonomy.routines):
            if routine_due(routine.cron, state.last_runs.get(routine_job(i)), now):
                jobs.append(routine_job(i))
    return jobs


def read_state(memory: MemoryStore, now: datetime) -> ScheduleState:
    """What the schedule decides on, from memory.db: when each job last ran, when the person last wrote, and
    the latest finished day with conversation not yet dreamt, or talked on after its dream (`now`: the
    persona's local time)."""
    runs = memory.job_runs.last_runs()
    last_user = stored_time(memory.messages.last_from_person())  # None too for a time no longer usable
    today = now.date()
    day = latest_day(memory, today - timedelta(days=1))
    if day is not None and not undreamt(memory, day):  # dreamt, and nothing said since
        day = None
    return ScheduleState(last_runs=runs, last_user_message=last_user, undreamt_day=day)


def record_run(memory: MemoryStore, job: str, when: datetime) -> None:
    """A job ran at `when`: persisted, so a restart neither repeats it nor forgets it was missed."""
    memory.job_runs.record(job, when)
