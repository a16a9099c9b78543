"""The four drives: pure functions of stored state and the time, each a level in 0–1.

Formulas (docs/mind.md says where and why they differ from the public Nexus Ark motivation manager):
- boredom = min(1, 0.15·ln(1 + idle hours)) since the user last wrote (0.48 after a day, 1.0 after ~27 days).
- curiosity = 1 − exp(−Σ priority·decay / 2) over unresolved open questions, decay = 0.3 + 0.7·exp(−age/7d):
  a fresh question weighs fully, an old one keeps 30 % so it never vanishes on its own; saturating.
- goal_achievement: the top active short-term goal (lowest priority number) weighs 1/√priority, scaled from
  0.5 (just touched) towards 1.0 as days pass without progress: an untended goal pulls harder.
- devotion: each recent user emotion adds 0.3 when negative, 0.1 when positive (neutral nothing), relaxing
  with a half-life of DEVOTION_HALF_LIFE_H hours; capped at 1.
Nothing here reads the clock or the database: `DriveInputs` carries everything, so tests choose the time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

# The data types are re-exported: the rest of the app reads them from here.
from nexus_ark.mind.drive_report import DRIVES, DriveLevel, DriveName, DriveReport
from nexus_ark.mind.drive_report import FEELING_LEVEL as FEELING_LEVEL
from nexus_ark.mind.narrative import narrative
from nexus_ark.notices import notice

# Each drive's name in a sentence for the person (the timeline, why the persona wrote or not): in English
# the name as stored, in a window translated.
_DRIVE_WORDS = {
    "boredom": notice("boredom"),
    "curiosity": notice("curiosity"),
    "goal_achievement": notice("goal_achievement"),
    "devotion": notice("devotion"),
}
BOREDOM_RATE = 0.15
QUESTION_DECAY_DAYS = 7.0
QUESTION_FLOOR = 0.3
GOAL_STALE_DAYS = 3.0
DEVOTION_NEGATIVE = 0.3
DEVOTION_POSITIVE = 0.1
DEVOTION_HALF_LIFE_H = 12.0
# Emotions older than this no longer count (after five half-lives a +0.3 is below 0.01).
DEVOTION_WINDOW_H = 72.0


def drive_word(name: str) -> str:
    """A drive's name in a sentence for the person: a notice (translated where it is shown); a name this
    version does not know stays as it is."""
    return _DRIVE_WORDS.get(name, name)


class QuestionInput(BaseModel):
    id: int
    question: str
    topic: str = ""
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    created_at: datetime


class GoalInput(BaseModel):
    id: str
    goal: str
    priority: int = Field(default=1, ge=1)
    last_progress: datetime  # when it was set or last moved forward


class EmotionInput(BaseModel):
    time: datetime
    label: str
    value: float  # the plotted value: < 0 negative, > 0 positive
    snippet: str = ""
    message_id: int | None = None


class DriveInputs(BaseModel):
    """Everything the drives are computed from, read from memory at one moment."""

    now: datetime
    last_interaction: datetime | None = None  # the user's latest message
    questions: list[QuestionInput] = Field(default_factory=list)
    top_goal: GoalInput | None = None
    emotions: list[EmotionInput] = Field(default_factory=list)  # oldest first


def _hours(later: datetime, earlier: datetime) -> float:
    return max(0.0, (later - earlier).total_seconds() / 3600.0)


def boredom(idle_hours: float) -> float:
    return min(1.0, BOREDOM_RATE * math.log1p(max(0.0, idle_hours)))


def question_decay(age_days: float) -> float:
    return QUESTION_FLOOR + (1.0 - QUESTION_FLOOR) * math.exp(-max(0.0, age_days) / QUESTION_DECAY_DAYS)


def curiosity(questions: list[QuestionInput], now: datetime) -> float:
    weight = sum(q.priority * question_decay(_hours(now, q.created_at) / 24.0) for q in questions)
    return 1.0 - math.exp(-weight / 2.0)


def goal_pull(goal: GoalInput | None, now: datetime) -> float:
    if goal is None:
        return 0.0
    stale = 1.0 - math.exp(-_hours(now, goal.last_progress) / 24.0 / GOAL_STALE_DAYS)
    return min(1.0, (0.5 + 0.5 * stale) / math.sqrt(goal.priority))


def devotion(emotions: list[EmotionInput], now: datetime) -> float:
    total = 0.0
    for e in emotions:
        age = _hours(now, e.time)
        if age > DEVOTION_WINDOW_H:
            continue
        step = DEVOTION_NEGATIVE if e.value < 0 else DEVOTION_POSITIVE if e.value > 0 else 0.0
        total += step * 0.5 ** (age / DEVOTION_HALF_LIFE_H)
    return min(1.0, total)


def compute(inputs: DriveInputs, thresholds: Mapping[str, float], language: str = "en") -> DriveReport:
    """The four levels with the inputs that made them, the dominant drive and a narrative of why, in the
    persona's language. The dominant drive is the one furthest past its own threshold, or, with none past
    it, the nearest below it (none when all are zero): the drive that acts when the persona writes first,
    so what the dashboard and the narrative call strongest is what acts (a raw level compared across
    thresholds let curiosity 0.39 under its 0.60 silence devotion 0.29 over its 0.20)."""
    now = inputs.now
    idle = _hours(now, inputs.last_interaction) if inputs.last_interaction else None
    top_question = max(inputs.questions, key=lambda q: q.priority, default=None)
    recent = [e for e in inputs.emotions if _hours(now, e.time) <= DEVOTION_WINDOW_H]
    latest = inputs.emotions[-1] if inputs.emotions else None
    # Devotion rises for the person seeming down: its words name the latest low mood, not a later joy.
    low = next((e for e in reversed(recent) if e.value < 0), None)
    levels: dict[DriveName, tuple[float, dict[str, Any]]] = {
        "boredom": (
            boredom(idle) if idle is not None else 0.0,
            {
                "last_interaction": inputs.last_interaction.isoformat() if inputs.last_interaction else None,
                "idle_minutes": round(idle * 60) if idle is not None else None,
            },
        ),
        "curiosity": (
            curiosity(inputs.questions, now),
            {
                "open_questions": len(inputs.questions),
                "top_question": top_question.question if top_question else None,
                "top_question_id": top_question.id if top_question else None,
            },
        ),
        "goal_achievement": (
            goal_pull(inputs.top_goal, now),
            {
                "goal": inputs.top_goal.goal if inputs.top_goal else None,
                "goal_id": inputs.top_goal.id if inputs.top_goal else None,
                "priority": inputs.top_goal.priority if inputs.top_goal else None,
                "days_without_progress": round(_hours(now, inputs.top_goal.last_progress) / 24, 1)
                if inputs.top_goal
                else None,
            },
        ),
        "devotion": (
            devotion(inputs.emotions, now),
            {
                "latest_emotion": latest.label if latest else None,
                "latest_snippet": latest.snippet if latest else None,
                "latest_message_id": latest.message_id if latest else None,
                "latest_negative_emotion": low.label if low else None,
                "latest_negative_snippet": low.snippet if low else None,
                "latest_negative_message_id": low.message_id if low else None,
                "negative_recent": sum(1 for e in recent if e.value < 0),
                "positive_recent": sum(1 for e in recent if e.value > 0),
            },
        ),
    }
    drives = {
        name: DriveLevel(level=round(level, 4), threshold=thresholds[name], inputs=info)
        for name, (level, info) in levels.items()
    }
    stirring = [n for n in DRIVES if drives[n].level > 0]
    dominant = max(stirring, key=lambda n: drives[n].margin, default=None)  # ties: the earlier in DRIVES
    report = DriveReport(time=now, drives=drives, dominant=dominant)
    report.narrative = narrative(report, language)
    return report
