"""The persona's dreams, kept by its runtime (`runtime.dreams`, a part of PersonaRuntime): a dream is
background work on the persona's queue that gives way to the person's turns between and inside model steps
and resumes from its record (memory/dream_jobs.py); one a crash or a shutdown cut off resumes once, at
open."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import date
from typing import Any

from nexus_ark.dreaming.dream import Dreamer, DreamProgress, DreamResult
from nexus_ark.dreaming.material import latest_day
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.providers.base import model_priority
from nexus_ark.runtime.host import DreamsHost
from nexus_ark.runtime.schedule import record_run
from nexus_ark.runtime.work_queue import AGAIN, BACKGROUND, WorkItem, WorkQueue

log = logging.getLogger(__name__)


class _Either(threading.Event):
    """Set when any of the given events is: a step's give-way flag and the person's own stop button."""

    def __init__(self, *events: threading.Event | None) -> None:
        super().__init__()
        self._events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self._events)


class PersonaDreams:
    def __init__(self, queue: WorkQueue, memory: MemoryStore, host: DreamsHost) -> None:
        self._queue = queue
        self._memory = memory
        self._host = host
        self._resumed: WorkItem | None = None  # a crash-cut dream queued at open: dream() joins it

    def start(
        self,
        *,
        level: int | None = None,
        day: date | None = None,
        progress: Callable[[DreamProgress], None] | None = None,
        cancel: threading.Event | None = None,
        trigger: str = "manual",
    ) -> WorkItem | None:
        """Queue a dream (background work: it gives way to the person's turns between and inside model
        steps, and resumes from its record). None when a dream is already queued or running."""
        slug, host = self._host.slug, self._host.host

        def report(step: DreamProgress) -> None:
            host.events.publish("dream_progress", persona=slug, progress=step)
            if progress is not None:
                progress(step)

        chosen: list[date] = []
        gave_way: list[bool] = []  # the step runs again after giving way to the person

        def step(give_way: threading.Event) -> Any:
            if not chosen:
                today = host.clock.now().astimezone().date()
                chosen.append(day or latest_day(self._memory, today) or today)
            persona = self._host.persona
            embedder, _ = host.embedder()
            try:
                with model_priority(BACKGROUND):
                    result = Dreamer(
                        persona,
                        self._memory,
                        host.internal_backend(persona),
                        host.clock,
                        embedder=embedder,
                        progress=report,
                        cancel=_Either(give_way, cancel),
                        continuing=bool(gave_way),
                    ).run(level=level, day=chosen[0])
            except BaseException:
                record_run(self._memory, "dream", host.clock.now())
                raise
            person_stopped = cancel is not None and cancel.is_set()
            if give_way.is_set() and not person_stopped and result.outcome == "cancelled":
                log.info("%s: the dream gives way to the person and resumes after", slug)
                gave_way.append(True)
                return AGAIN
            record_run(self._memory, "dream", host.clock.now())
            if not result.skipped or result.stages:
                self._host.recompute_drives("dream")
            host.events.publish("dream_finished", persona=slug, result=result)
            self._host.after_dream(embedder)
            return result

        return self._queue.submit_background(f"dream ({trigger})", step, key="dream")

    def dream(self, **kwargs: Any) -> DreamResult:
        """Dream now and wait for it (from a worker thread or the command line)."""
        resumed, self._resumed = self._resumed, None
        if resumed is not None:
            # A dream a crash cut off was queued when this runtime opened: it finishes first, and is this
            # dream unless the person named another level or day.
            result = self._join(resumed, kwargs.get("progress"))
            level, day = kwargs.get("level"), kwargs.get("day")
            if (level is None or level == result.level) and (day is None or day.isoformat() == result.date):
                return result
        item = self.start(**kwargs)
        if item is None:
            raise NexusArkError(notice("{name} is already dreaming.", name=self._host.persona.settings.name))
        done: DreamResult = item.wait()
        return done

    def _join(self, resumed: WorkItem, progress: Callable[[DreamProgress], None] | None) -> DreamResult:
        """Wait for the resumed dream, its progress reported as this one's."""
        slug, events = self._host.slug, self._host.host.events

        def forward(_topic: str, payload: dict[str, Any]) -> None:
            if progress is not None and payload.get("persona") == slug:
                progress(payload["progress"])

        unsubscribe = events.subscribe("dream_progress", forward) if progress else None
        try:
            result: DreamResult = resumed.wait()
        finally:
            if unsubscribe is not None:
                unsubscribe()
        return result

    def resume_interrupted(self) -> None:
        """A dream a crash or a shutdown cut off resumes once, at open, from its last finished stage."""
        cut_off = self._memory.dream_jobs.unfinished()
        if cut_off is not None:
            log.info("%s: resuming the level %s dream of %s", self._host.slug, cut_off.level, cut_off.day)
            self._resumed = self.start(level=cut_off.level, day=cut_off.day, trigger="resume")
