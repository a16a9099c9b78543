"""A dream as a recorded job: what a pass reports (DreamResult, with its typed outcome), says in the
timeline, and reads from the day's earlier passes (what they covered, so a day dreamt already is not
dreamt again). The rows themselves, one per pass with each stage's record, belong to dream_jobs' owner,
nexus_ark/memory/dream_jobs.py."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from nexus_ark.dreaming.grounding import GroundingReport
from nexus_ark.dreaming.material import day_messages
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import joined, notice

# done: the pass ran its stages (some may have been skipped, see `stages`); skipped: no stage wrote
# anything; already_dreamt: nothing new since the day's earlier passes; no_conversation: nothing to dream;
# cancelled: it gave way (to the person, or a shutdown) and resumes from its next stage.
DreamOutcome = Literal["done", "skipped", "already_dreamt", "no_conversation", "cancelled"]


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
    # How the pass ended, for code to decide on (`skipped` says why in words, for people).
    outcome: DreamOutcome = "done"


def dreamt_line(level: int, day: date, done: int, total: int, insight: dict[str, Any] | None) -> str:
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


def dreamt_through(finished: list[dict[str, Any]]) -> int | None:
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
    finished = memory.dream_jobs.finished(day)
    return bool(day_messages(memory, day, after_id=dreamt_through(finished)))


def already_dreamt(finished: list[dict[str, Any]], day: date) -> DreamResult:
    """The day's newest highest pass, as stored, saying it was dreamt already."""
    job = max(finished, key=lambda j: (int(j["level"]), int(j["id"])))
    stored = DreamResult.model_validate_json(job["result"]) if job["result"] else None
    result = stored or DreamResult(level=job["level"], date=day.isoformat())
    result.skipped = f"already dreamt (level {job['level']}) on {day.isoformat()}"
    result.outcome = "already_dreamt"
    return result


def merge_stage(result: DreamResult, stage: str, output: dict[str, Any]) -> None:
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
