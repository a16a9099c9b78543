"""The app's clock-work: APScheduler 3's BackgroundScheduler wakes the runtimes up; it decides nothing.

One interval job ticks every open persona (runtime.life.tick), first at once when started (runs missed while
the app was closed or the machine slept coalesce into one, since the schedule reads what last ran from each
persona's job_runs), then every interval. max_instances=1 and coalesce: a tick never overlaps the last one,
and a machine waking from sleep ticks once, not once per missed minute. What is due, and when, is decided on
the app's injectable clock (runtime.schedule), so tests and `nexus-ark simulate` call the tick themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

log = logging.getLogger(__name__)


class RuntimeScheduler:
    def __init__(self, tick: Callable[[], None]) -> None:
        self._tick = tick
        self._scheduler: BackgroundScheduler | None = None

    @property
    def running(self) -> bool:
        return self._scheduler is not None and self._scheduler.running

    def start(self, interval_s: float = 60.0) -> None:
        if self.running:
            return
        scheduler = BackgroundScheduler(daemon=True, job_defaults={"coalesce": True, "max_instances": 1})
        scheduler.add_job(
            self._safe_tick,
            IntervalTrigger(seconds=interval_s),
            id="tick",
            next_run_time=datetime.now().astimezone(),  # at once: what was missed runs now
            misfire_grace_time=None,
        )
        scheduler.start()
        self._scheduler = scheduler

    def _safe_tick(self) -> None:
        try:
            self._tick()
        except Exception:  # the next tick tries again; the log says why this one failed
            log.exception("the scheduler's tick failed")

    def shutdown(self) -> None:
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=True)
        self._scheduler = None
