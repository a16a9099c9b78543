"""The drives read from a persona's memory, recomputed and recorded.

`read_inputs` gathers what drives.compute needs (one moment, a few small queries); `current` computes without
writing (the chat prompt, a dry run); `recompute` also records the result: the drives table (the latest
levels), a drive_history row with every input (the dashboard plots it, autonomous messages cite it) and, when
a drive crosses its threshold or the dominant drive changes, a "drives" entry in the activity timeline.

A drive_history row stores a drive's inputs only when they differ from the row before's
(memory/drive_history.py); `history` reads every point whole.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from nexus_ark.clock import iso, stored_time
from nexus_ark.memory import drive_history as stored_inputs
from nexus_ark.memory.components import Drive
from nexus_ark.mind.drives import (
    DEVOTION_WINDOW_H,
    DRIVES,
    FEELING_LEVEL,
    DriveInputs,
    DriveName,
    DriveReport,
    EmotionInput,
    GoalInput,
    QuestionInput,
    compute,
    drive_word,
)
from nexus_ark.notices import joined, notice

if TYPE_CHECKING:
    from nexus_ark.memory.store import MemoryStore

DEFAULT_THRESHOLDS: dict[str, float] = dict.fromkeys(DRIVES, 0.6)


def _time(stamp: str, default: datetime) -> datetime:
    """A stored time (imported rows may carry no zone: they are the person's local time); `default` for
    one that is no usable time (an older version let a year-1 date in: it must not stop the drives)."""
    return stored_time(stamp) or default


def read_inputs(memory: MemoryStore, now: datetime, *, talking: bool = False) -> DriveInputs:
    """talking=True: the user is writing at this moment, so the last interaction is now (and the scan for
    their latest message, ~10 ms at 100k messages, stays off the turn's path)."""
    last: datetime | None = now
    if not talking:
        last = stored_time(memory.messages.last_from_person(shown_only=True))
        if last is not None and last > now:  # a message stamped ahead of the clock is "just now"
            last = now
    questions = [
        QuestionInput(
            id=q.id,
            question=q.question,
            topic=q.topic,
            priority=q.priority,
            created_at=_time(q.created_at, now),
        )
        for q in memory.components.open_questions()
    ]
    short = memory.components.goals("short", "active")
    top_goal = (
        GoalInput(
            id=short[0].id,
            goal=short[0].goal,
            priority=max(1, short[0].priority),  # 1 is the top; older rows may say 0
            last_progress=_time(short[0].updated_at or short[0].created_at, now),
        )
        if short
        else None
    )
    since = iso(now - timedelta(hours=DEVOTION_WINDOW_H))
    emotions = [
        EmotionInput(
            time=_time(e.timestamp, now),
            label=e.emotion,
            value=e.value,
            snippet=e.snippet,
            message_id=e.message_id,
        )
        for e in memory.components.emotions(since=since)
    ]
    return DriveInputs(
        now=now, last_interaction=last, questions=questions, top_goal=top_goal, emotions=emotions
    )


def current(
    memory: MemoryStore,
    now: datetime,
    thresholds: dict[str, float] | None = None,
    language: str = "en",
    *,
    talking: bool = False,
) -> DriveReport:
    """The drives now, nothing written. talking=True: the user is writing at this moment (a prompt being
    built for their message, stored or not yet), so they are not away."""
    return compute(
        read_inputs(memory, now, talking=talking), {**DEFAULT_THRESHOLDS, **(thresholds or {})}, language
    )


# Scheduled recomputations record a history point only when some drive moved at least this much.
QUIET_TRIGGERS = ("schedule", "heartbeat")
HISTORY_STEP = 0.02


def recompute(
    memory: MemoryStore,
    now: datetime,
    *,
    trigger: str,
    thresholds: dict[str, float] | None = None,
    language: str = "en",
) -> DriveReport:
    """Compute and record (on the owner's or a peer's connection). `trigger` says why: "interaction",
    "dream", "autonomy", "manual"."""
    report = current(memory, now, thresholds, language)
    with memory.db.atomic():
        before = {d.name: d for d in memory.components.drives()}
        last = memory.drive_history.last()
        previous = last[:5] if last is not None else None
        for name in DRIVES:
            level = report.drives[name]
            memory.components.set_drive(
                Drive(
                    name=name,
                    level=level.level,
                    threshold=level.threshold,
                    info=level.inputs,
                    updated_at=iso(now),
                )
            )
        # A clock-driven look (the scheduler's, every quarter hour) that finds the drives where they were
        # adds no history point: the history stays a record of change, not of time passing.
        still = (
            trigger in QUIET_TRIGGERS
            and previous is not None
            and all(
                abs(old - report.drives[n].level) < HISTORY_STEP
                for n, old in zip(DRIVES, previous[1:], strict=True)
            )
        )
        if not still:
            _add_history_point(memory, report, now, trigger, last)
        crossed = [
            n
            for n in DRIVES
            if n in before and (before[n].level >= before[n].threshold) != report.drives[n].over
        ]
        # A new dominant drive is news once it is felt (>= FEELING_LEVEL), not every flicker near zero.
        dominant_changed = (
            previous is not None
            and previous[0] != report.dominant
            and report.dominant is not None
            and report.drives[report.dominant].level >= FEELING_LEVEL
        )
        if crossed or dominant_changed or previous is None:
            _log_change(memory, report, trigger, crossed)
    return report


def _add_history_point(
    memory: MemoryStore, report: DriveReport, now: datetime, trigger: str, last: tuple[Any, ...] | None
) -> None:
    """A drive_history row: the levels, and each drive's inputs where they differ from the row before."""
    inputs: dict[str, Any] = {n: report.drives[n].inputs for n in DRIVES}
    if last is not None:  # through JSON first, as the inputs it is compared with went
        inputs = stored_inputs.compact(
            json.loads(stored_inputs.dumps(inputs)),
            stored_inputs.whole(memory.db, last[5], json.loads(last[6])),
        )
    memory.drive_history.add(
        iso(now),
        trigger,
        (report.drives[n].level for n in DRIVES),
        report.dominant,
        report.narrative,
        stored_inputs.dumps(inputs),
    )


def _log_change(memory: MemoryStore, report: DriveReport, trigger: str, crossed: list[DriveName]) -> None:
    """The "drives" entry of the activity timeline: which drive leads, every level, why."""
    levels = joined((joined((drive_word(n), f"{report.drives[n].level:.2f}"), " ") for n in DRIVES), ", ")
    memory.activity.append(
        "drives",
        notice(
            "{dominant} dominant ({levels}): {narrative}",
            dominant=drive_word(report.dominant),
            levels=levels,
            narrative=report.narrative,
        )
        if report.dominant
        else notice("none dominant ({levels}): {narrative}", levels=levels, narrative=report.narrative),
        data={
            "trigger": trigger,
            "dominant": report.dominant,
            "levels": {n: report.drives[n].level for n in DRIVES},
            "crossed": crossed,
        },
    )


class DrivePoint(BaseModel):
    """One row of drive_history, for plots."""

    time: str
    trigger: str
    levels: dict[str, float]
    dominant: str | None
    narrative: str
    inputs: dict[str, Any]


def history(memory: MemoryStore, since: str | None = None, limit: int = 5000) -> list[DrivePoint]:
    """Recomputations oldest first (the newest `limit`). Days older than the retention window come as one
    point each (memory/retention.py): trigger "daily", each drive's mean, with min and max in `inputs`."""
    rows = memory.drive_history.newest(since, limit)
    points = []
    # Each point's inputs whole, from the first point read on (along every row after it: one of an older
    # time written later, which the time filter leaves out, may hold inputs the next point reads).
    whole = memory.drive_history.whole_from(rows[-1][9]) if rows else {}
    for t, trig, b, c, g, d, dom, nar, _inputs, row_id in reversed(rows):
        points.append(
            DrivePoint(
                time=t,
                trigger=trig,
                levels=dict(zip(DRIVES, (b, c, g, d), strict=True)),
                dominant=dom,
                narrative=nar,
                inputs=whole[row_id][1],
            )
        )
    room = limit - len(points)
    if room <= 0:
        return points
    first = points[0].time if points else None
    return _daily_points(memory, since, first, room) + points


def _daily_points(memory: MemoryStore, since: str | None, before: str | None, limit: int) -> list[DrivePoint]:
    """The rolled-up days (drive_daily) from `since` and before the first detailed point, oldest first."""
    rows = memory.drive_history.days(since, before, limit)
    points = []
    for day, when, count, dominant, narrative, *values in reversed(rows):
        means = {n: values[3 * i] for i, n in enumerate(DRIVES)}
        spread = {n: {"min": values[3 * i + 1], "max": values[3 * i + 2]} for i, n in enumerate(DRIVES)}
        points.append(
            DrivePoint(
                time=when,
                trigger="daily",
                levels=means,
                dominant=dominant,
                narrative=narrative,
                inputs={"day": day, "points": count, "range": spread},
            )
        )
    return points
