"""A dream as a recorded job (dream_jobs): one row per pass over a day, its level, the messages it covered
(after_id, through_id) and each stage's record, so a pass cut off resumes after its last completed stage
and a day dreamt already is not dreamt again; what a pass reports (DreamResult) and says in the timeline."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from nexus_ark.clock import Clock, iso
from nexus_ark.dreaming.grounding import GroundingReport
from nexus_ark.dreaming.material import day_messages
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import joined, notice


class DreamProgress(BaseModel):
    level: int
    date: str
    stage: str
    index: int  # 1-based
    total: int


class DreamResult(BaseModel):
    """What `nexus-ark dream --json` prints; also stored with the finished job."""

    level: int
    date: str
    insight: dict[str, Any] | None = None
    episode: dict[str, Any] | None = None
    entities_updated: list[str] = Field(default_factory=list)
    open_questions: list[dict[str, Any]] = Field(default_factory=list)
    goals: list[dict[str, Any]] = Field(default_factory=list)
    insights: list[dict[str, Any]] = Field(default_factory=list)  # every insight, the weekly/monthly too
    stages: dict[str, str] = Field(default_factory=dict)  # name -> "done" | "skipped: why"
    skipped: str | None = None
    seconds: float = 0.0
    first_try_valid: int = 0  # structured answers valid without the repair round
    answers: int = 0  # structured answers asked for
    # Why the model was not asked to reflect (None: it was): "reflection needs a larger model".
    reflection: str | None = None
    model: str = ""
    parameters: int | None = None  # the model's, where known
    grounding: GroundingReport = Field(default_factory=GroundingReport)  # what the check refused
    messages: list[int] = Field(default_factory=list)  # [first, last] message id this pass covered
    soul_proposal: dict[str, Any] | None = None  # {"soul_proposal": id, "section"}: waits for the person


class DreamJobs:
    """dream_jobs rows: one per pass over a day (a level, and the messages it covered)."""

    def __init__(self, memory: MemoryStore, clock: Clock) -> None:
        self.db = memory.db
        self.clock = clock

    def running(self, day: date) -> dict[str, Any] | None:
        rows = list(
            self.db.query(
                "select * from dream_jobs where date = ? and state = 'running' order by id desc limit 1",
                [day.isoformat()],
            )
        )
        return rows[0] if rows else None

    def finished(self, day: date) -> list[dict[str, Any]]:
        """The day's finished passes, oldest first."""
        return list(
            self.db.query(
                "select * from dream_jobs where date = ? and state != 'running' order by id",
                [day.isoformat()],
            )
        )

    def start(
        self, level: int, day: date, after_id: int | None, through_id: int | None, stages: dict[str, Any]
    ) -> int:
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
        return int(cur.lastrowid)

    def mark_stage(self, job_id: int, name: str, record: dict[str, Any]) -> None:
        self.db.execute(
            "update dream_jobs set stages = json_set(stages, '$.' || ?, json(?)), updated_at = ? "
            "where id = ?",
            [name, json.dumps(record, ensure_ascii=False), iso(self.clock.now()), job_id],
        )

    def finish(self, job_id: int, state: str, result: DreamResult) -> None:
        now = iso(self.clock.now())
        self.db.execute(
            "update dream_jobs set state = ?, result = ?, updated_at = ?, finished_at = ? where id = ?",
            [state, result.model_dump_json(), now, now, job_id],
        )


def _dreamt(level: int, day: date, done: int, total: int, insight: dict[str, Any] | None) -> str:
    """The timeline's line for a finished dream (a notice: the window shows it translated)."""
    written = notice(
        "level {level} dream of {date}: {done}/{total} stages written",
        level=level,
        date=day.isoformat(),
        done=done,
        total=total,
    )
    if not insight:
        return written
    return joined((written, notice("insight: {insight}", insight=insight["insight"])), "; ")


def _dreamt_through(finished: list[dict[str, Any]]) -> int | None:
    """The last message id the day's finished passes covered (None: none did). A pass from before
    passes were recorded (no through_id) covered the whole day as it was: every message there now."""
    if not finished:
        return None
    if any(j["through_id"] is None and j["after_id"] is None for j in finished):
        return 2**62
    return max(int(j["through_id"]) for j in finished if j["through_id"] is not None)


def undreamt(memory: MemoryStore, day: date) -> bool:
    """Whether `day` has messages no finished pass covered (the scheduler's question: said after the
    last dream of it, or never dreamt)."""
    finished = list(
        memory.db.query(
            "select after_id, through_id from dream_jobs where date = ? and state != 'running'",
            [day.isoformat()],
        )
    )
    return bool(day_messages(memory, day, after_id=_dreamt_through(finished)))


def finished_results(memory: MemoryStore, limit: int = 100) -> list[tuple[str, int, str, str]]:
    """The newest finished passes that stored a result, newest first: (finished_at, level, date, result
    JSON as stored). The dream diary reads them on its own read-only connection."""
    return [
        (str(r[0] or ""), int(r[1]), str(r[2]), str(r[3]))
        for r in memory.db.execute(
            "select finished_at, level, date, result from dream_jobs "
            "where state = 'done' and result is not null order by id desc limit ?",
            [limit],
        ).fetchall()
    ]


def _already(finished: list[dict[str, Any]], day: date) -> DreamResult:
    """The day's newest highest pass, as stored, saying it was dreamt already."""
    job = max(finished, key=lambda j: (int(j["level"]), int(j["id"])))
    stored = DreamResult.model_validate_json(job["result"]) if job["result"] else None
    result = stored or DreamResult(level=job["level"], date=day.isoformat())
    result.skipped = f"already dreamt (level {job['level']}) on {day.isoformat()}"
    return result


def _merge(result: DreamResult, stage: str, output: dict[str, Any]) -> None:
    if output.get("grounding"):
        result.grounding.add(output["grounding"])
        output = {k: v for k, v in output.items() if k != "grounding"}
    if stage in ("insight", "week", "values") and output:
        result.insights.append(output)
        if stage == "insight":
            result.insight = output
    elif stage == "episode" and output:
        result.episode = output
    elif stage == "soul" and output:
        result.soul_proposal = output
    result.entities_updated += output.get("entities_updated", [])
    result.open_questions += output.get("open_questions", [])
    result.goals += output.get("goals", [])
