"""A dream: the persona's own task, run stage by stage on its internal model.

Each stage asks the persona (its soul first, the day's material next, the stage's task last) and writes what
a valid answer holds. Where the model calls tools (natively, or through the text protocol where it can follow
it), the stage runs through the one tool loop with a raised turn limit: the persona may search and read its
memory, move stale memories aside (archive_memory refuses protected items) and hands its answer to a record
tool whose parameters are the stage's schema. Where it cannot, or when it never recorded, the answer comes as
structured output (constrained decoding, one repair round). An answer that is still invalid skips that stage
with its reason logged: nothing that fails validation is written.

Below the reflection capability (providers.base.Capabilities.reflects: the bundled 135M model) the persona
writes only what it can faithfully (dreaming/extractive.py: the day's episode and entities in its speakers'
own words) and skips the rest with the reason, which the result and the timeline carry. On every model,
what a stage writes is checked against the messages it cites (dreaming/grounding.py); what they do not
support is refused and counted in the result.

A dream is a recorded job (dream_jobs): each completed stage is noted in the same transaction as its
writes, so a dream cut off by a crash or a shutdown resumes after its last completed stage. A day is
dreamt in passes: each job notes the messages it covered (after_id, through_id), so dreaming a day again
reads only what was said since the last pass, and changes nothing when nothing was.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from nexus_ark.clock import Clock, iso
from nexus_ark.dreaming.ask import DreamAsking
from nexus_ark.dreaming.grounding import Grounding, GroundingReport
from nexus_ark.dreaming.jobs import (
    DreamProgress,
    DreamResult,
    already_dreamt,
    dreamt_line,
    dreamt_through,
    merge_stage,
)
from nexus_ark.dreaming.jobs import undreamt as undreamt  # runtime/schedule.py asks it here
from nexus_ark.dreaming.levels import choose_level, record_level
from nexus_ark.dreaming.material import Material, day_messages, gather, latest_day
from nexus_ark.dreaming.soul_stage import SoulContext
from nexus_ark.dreaming.stages import NEEDS_REFLECTION, Stage, stage_word, stages_for
from nexus_ark.dreaming.writes import StageSkipped
from nexus_ark.errors import NexusArkError, ProviderError, StructuredOutputError
from nexus_ark.memory.dream_jobs import DreamJobs
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import Joined, Notice, notice
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend, context_window
from nexus_ark.providers.embedders import Embedder, backlog_work

log = logging.getLogger(__name__)

# The material's share of the internal model's context (the rest: soul, task, answer).
MATERIAL_SHARE = 0.5
MATERIAL_MAX_TOKENS = 2400


def _first_line(exc: Exception) -> str:
    """Why a stage was skipped, in one line: the error's own notice when that is all it says (so the
    window shows it translated), else the first line of its text."""
    text = (str(exc).splitlines() or [""])[0]
    said = exc.message if isinstance(exc, NexusArkError) else (exc.args[0] if exc.args else None)
    return said if isinstance(said, Notice | Joined) and said == text else text


@dataclass
class _Pass:
    """The pass a dream runs: its level, its job (0: not started yet), the messages it covers (after
    after_id, through through_id) and the stages an earlier run of it completed."""

    level: int
    job_id: int
    after_id: int | None
    through_id: int | None
    completed: dict[str, Any]
    since: str  # when the pass began (a soul proposal cites what was said since)


class Dreamer(DreamAsking):
    def __init__(
        self,
        persona: Persona,
        memory: MemoryStore,
        backend: ChatBackend,
        clock: Clock,
        *,
        embedder: Embedder | None = None,
        progress: Callable[[DreamProgress], None] | None = None,
        cancel: threading.Event | None = None,
        reflect: bool | None = None,
        continuing: bool = False,
    ) -> None:
        """reflect: None (the app) as the model's capability record says; the faithfulness bench sets it
        to see what a small model would write when asked anyway. continuing: the same dream goes on after
        giving way to the person (its start is in the timeline already: it is not said again)."""
        self.reflect = reflect
        self.continuing = continuing
        self.persona = persona
        self.memory = memory
        self.backend = backend
        self.clock = clock
        self.embedder = embedder
        self.progress = progress
        self.cancel = cancel or threading.Event()
        self.attempts: list[int] = []

    # -- the job ------------------------------------------------------------------------------------
    def run(self, *, level: int | None = None, day: date | None = None) -> DreamResult:
        since = iso(self.clock.now())
        try:
            return self._run(level=level, day=day)
        finally:
            self._embed_written(since)

    def _embed_written(self, since: str) -> None:
        """What this dream wrote gets its vectors now, before the command that dreamt exits (a background
        pass after a one-shot `nexus-ark dream` was stopped at exit, so recall by meaning missed it)."""
        if self.embedder is None:
            return
        ids = self.memory.archive.written_since(since, ("episode", "entity", "insight", "goal"))
        if not ids:
            return
        try:
            with backlog_work():  # background work: it leaves a core to the window
                self.memory.archive.embed_pending(self.embedder, only=ids)
        except NexusArkError as exc:  # keyword search finds them now; the background pass retries
            log.warning("what the dream wrote is not embedded yet: %s", exc)

    def _say_start(self, result: DreamResult, level: int, day: date, completed: dict[str, Any]) -> None:
        """The timeline's start of a pass: began, or resumed (a pass a crash or a shutdown cut off), and
        why a small model is not asked to reflect."""
        self.memory.activity.append(
            "dream",
            notice("level {level} dream of {date} resumed", level=level, date=day.isoformat())
            if any(r.get("state") != "done earlier" for r in completed.values())
            else notice("level {level} dream of {date} began", level=level, date=day.isoformat()),
            data={"level": level, "date": day.isoformat(), "stage": "start"},
        )
        if result.reflection:
            self.memory.activity.append(
                "dream",
                notice(
                    "reflection needs a larger model: {model} keeps to the day's own words (no insight, "
                    "values, questions or goals)",
                    model=result.model,
                ),
                data={"level": level, "date": day.isoformat(), "reflection": "needs a larger model"},
            )

    def _run(self, *, level: int | None, day: date | None) -> DreamResult:
        started = time.monotonic()
        today = self.clock.now().astimezone().date()
        day = day or latest_day(self.memory, today) or today
        jobs = DreamJobs(self.memory.db, self.clock)
        plan = self._plan(jobs, day, level)
        if isinstance(plan, DreamResult):
            return plan
        material = self._material(plan, day)
        result, reflects = self._new_result(plan.level, day, material)
        if not material.message_ids and plan.level == 1:
            result.skipped = f"no conversation on {day.isoformat()} to dream about"
            result.outcome = "no_conversation"
            return result
        job_id = plan.job_id or jobs.start(
            plan.level, day, plan.after_id, plan.through_id or None, plan.completed
        )
        stages = stages_for(plan.level)
        if not self.continuing:
            self._say_start(result, plan.level, day, plan.completed)
        for index, stage in enumerate(stages, 1):
            if stage.name in plan.completed:
                self._recall_stage(result, stage.name, plan.completed[stage.name])
                continue
            if self.cancel.is_set():
                return self._gave_way(result, started)
            if self.progress is not None:
                self.progress(
                    DreamProgress(
                        level=plan.level,
                        date=day.isoformat(),
                        stage=stage.name,
                        index=index,
                        total=len(stages),
                    )
                )
            self._run_stage(jobs, job_id, stage, material, result, reflects=reflects)
        if self.cancel.is_set() and any(s.name not in result.stages for s in stages):
            return self._gave_way(result, started)  # cut off inside the last stage: it resumes next time
        self._finish(jobs, job_id, plan.level, day, stages, result, started)
        return result

    def _plan(self, jobs: DreamJobs, day: date, level: int | None) -> _Pass | DreamResult:
        """The pass to run over `day`: one cut off by a crash, a shutdown or a cancel, resumed as it was;
        else a new one over what earlier passes did not cover. A DreamResult: nothing new to dream."""
        job = jobs.running(day)
        if job is not None:
            return _Pass(
                level=int(job["level"]),
                job_id=int(job["id"]),
                after_id=job["after_id"],
                through_id=job["through_id"],
                completed=json.loads(job["stages"]),
                since=str(job["started_at"]),
            )
        finished = jobs.finished(day)
        # What earlier passes covered: a row from before passes were recorded covered the whole day.
        after_id = dreamt_through(finished)
        new = day_messages(self.memory, day, after_id=after_id)
        top = max((int(j["level"]) for j in finished), default=0)
        if finished and not new and (level or 0) <= top:
            return already_dreamt(finished, day)
        level = level or choose_level(self.memory.components.reflection_meta(), day)
        through_id = new[-1][0] if new else None
        completed: dict[str, Any] = {}
        if finished and not new:
            # A higher level on a day dreamt already: only the stages the earlier passes did not run
            # (they read the same messages; running them again wrote a second insight).
            completed = {s.name: {"state": "done earlier"} for s in stages_for(top)}
            # The higher stages read the whole day, up to where the earlier passes stopped.
            whole = day_messages(self.memory, day)
            after_id, through_id = None, whole[-1][0] if whole else None
        return _Pass(level, 0, after_id, through_id, completed, iso(self.clock.now()))

    def _material(self, plan: _Pass, day: date) -> Material:
        """The day's messages (what the pass covers) within the model's budget, with the persona's soul
        and the grounding check over them."""
        budget = min(MATERIAL_MAX_TOKENS, int(self._context_size() * MATERIAL_SHARE))
        material = gather(
            self.memory,
            day,
            plan.level,
            self.backend.count_tokens,
            budget,
            after_id=plan.after_id,
            through_id=plan.through_id,
        )
        material.persona = self.persona.settings.name
        material.user_name = self.persona.user_name
        soul = self.persona.settings.soul
        material.soul = SoulContext(
            self.persona.folder, self.clock, since=plan.since, fixed=tuple(soul.fixed), enabled=soul.proposals
        )
        material.grounding = Grounding(
            material.texts,
            self.embedder,
            known={material.persona, material.user_name, *material.speakers},
            context=material.context.splitlines(),
        )
        return material

    def _new_result(self, level: int, day: date, material: Material) -> tuple[DreamResult, bool]:
        """The pass's result as it starts, and whether the model is asked to reflect."""
        caps = self.backend.capabilities()
        result = DreamResult(level=level, date=day.isoformat(), model=self.backend.describe())
        result.parameters = caps.parameters
        reflects = caps.reflects if self.reflect is None else self.reflect
        if not reflects:
            result.reflection = NEEDS_REFLECTION
        if material.message_ids:
            result.messages = [material.message_ids[0], material.message_ids[-1]]
        return result, reflects

    @staticmethod
    def _recall_stage(result: DreamResult, name: str, record: dict[str, Any]) -> None:
        """A stage an earlier run of this pass completed: its record counts in the result."""
        result.stages[name] = record.get("state", "done")
        merge_stage(result, name, record.get("output") or {})
        if record.get("grounding"):
            result.grounding.add(record["grounding"])

    @staticmethod
    def _gave_way(result: DreamResult, started: float) -> DreamResult:
        result.skipped = "cancelled: the dream resumes from this stage next time"
        result.outcome = "cancelled"
        result.seconds = round(time.monotonic() - started, 2)
        return result

    def _finish(
        self,
        jobs: DreamJobs,
        job_id: int,
        level: int,
        day: date,
        stages: list[Stage],
        result: DreamResult,
        started: float,
    ) -> None:
        """Every stage ran: the pass is finished, recorded and said in the timeline, in one transaction."""
        with self.memory.db.atomic():
            record_level(self.memory.components, level, day)
            result.seconds = round(time.monotonic() - started, 2)
            result.answers = len(self.attempts)
            result.first_try_valid = sum(1 for a in self.attempts if a == 1)
            done = [n for n, s in result.stages.items() if s == "done"]
            state = "done" if done else "skipped"
            if not done:
                held = all(
                    v in ("done earlier", f"skipped: {NEEDS_REFLECTION}") for v in result.stages.values()
                )
                result.skipped = NEEDS_REFLECTION if held else "no stage produced anything valid"
                result.outcome = "skipped"
            jobs.finish(job_id, state, result.model_dump_json())
            ran = [s for s in stages if result.stages.get(s.name) != "done earlier"]
            self.memory.activity.append(
                "dream",
                dreamt_line(level, day, len(done), len(ran), result.insight),
                data={
                    "level": level,
                    "date": day.isoformat(),
                    "stages": result.stages,
                    "stage": "end",
                    "refused": result.grounding.refused,
                },
            )

    def _context_size(self) -> int:
        settings = self.persona.settings
        configured = (settings.internal_model or settings.model).context_size
        return context_window(self.backend, configured)

    def _run_stage(
        self,
        jobs: DreamJobs,
        job_id: int,
        stage: Stage,
        material: Material,
        result: DreamResult,
        *,
        reflects: bool = True,
    ) -> None:
        grounding: GroundingReport | None = None
        try:
            if not reflects and stage.faithful is None:
                raise StageSkipped(NEEDS_REFLECTION)
            with self.memory.db.atomic():  # the stage's writes and its mark commit together
                if reflects:
                    answer = self._answer(stage, material)
                    output = stage.apply(self.memory, answer, material)
                else:  # the day's own words, without asking the model
                    output = stage.faithful(self.memory, material)  # type: ignore[misc]
                jobs.mark_stage(job_id, stage.name, {"state": "done", "output": output})
            result.stages[stage.name] = "done"
            merge_stage(result, stage.name, output)
            return
        except ProviderError:
            raise  # the model is unreachable or timed out: the job stays resumable, the caller says why
        except (StageSkipped, StructuredOutputError, NexusArkError) as exc:
            reason = _first_line(exc)
            grounding = exc.grounding if isinstance(exc, StageSkipped) else None
        if self.cancel.is_set():
            return  # not recorded: the stage runs again when the dream resumes
        log.warning("dream stage %s skipped: %s", stage.name, reason)
        if grounding is not None:
            result.grounding.add(grounding)
        with self.memory.db.atomic():
            record: dict[str, Any] = {"state": f"skipped: {reason}"}
            if grounding is not None:
                record["grounding"] = grounding.model_dump()
            jobs.mark_stage(job_id, stage.name, record)
            self.memory.activity.append(
                "dream",
                notice("stage {stage} skipped: {reason}", stage=stage_word(stage.name), reason=reason),
                data={"stage": stage.name, "skipped": reason},
            )
        result.stages[stage.name] = f"skipped: {reason}"
