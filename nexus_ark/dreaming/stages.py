"""The stages of a dream: what each asks of the persona (its task, worded in nexus_ark/prompts/dreaming.py),
the shape of its answer, and how a valid answer is written to memory (dreaming/writes.py; below the
reflection capability dreaming/faithful.py). A stage's write and the job's note that the stage is done
commit in one transaction (dreaming/dream.py), so a crash redoes a stage whole or not at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from nexus_ark.dreaming.faithful import quoted_entities, quoted_episode
from nexus_ark.dreaming.material import Material
from nexus_ark.dreaming.schemas import (
    EntityUpdates,
    EpisodeDraft,
    GoalChanges,
    InsightDraft,
    QuestionDrafts,
    SoulEditDraft,
)
from nexus_ark.dreaming.soul_stage import apply_soul_edit, soul_task
from nexus_ark.dreaming.writes import (
    Apply,
    goal_changes,
    insight_stage,
    write_entities,
    write_episode,
    write_nothing,
    write_questions,
)
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.prompts.dreaming import STAGE_TASKS

# Why a stage is not asked of a model below the reflection capability (providers.base.Capabilities.reflects).
NEEDS_REFLECTION = notice("reflection needs a larger model")


@dataclass(frozen=True)
class Stage:
    name: str
    level: int  # the lowest dream level that runs it
    schema: type[BaseModel] | None  # None: the stage only uses tools (consolidation)
    task: str
    apply: Apply
    # Below the reflection capability: what the stage writes without the model (None: nothing, skipped
    # with NEEDS_REFLECTION).
    faithful: Callable[[MemoryStore, Material], dict[str, Any]] | None = None
    # A task that depends on the persona now (the soul stage lists the soul's sections): None, `task`.
    task_for: Callable[[MemoryStore, Material], str] | None = None


STAGES: tuple[Stage, ...] = (
    Stage(
        "insight",
        1,
        InsightDraft,
        STAGE_TASKS["insight"],
        insight_stage("insight"),
    ),
    Stage(
        "entities",
        1,
        EntityUpdates,
        STAGE_TASKS["entities"],
        write_entities,
        quoted_entities,
    ),
    Stage(
        "episode",
        1,
        EpisodeDraft,
        STAGE_TASKS["episode"],
        write_episode,
        quoted_episode,
    ),
    Stage(
        "questions",
        1,
        QuestionDrafts,
        STAGE_TASKS["questions"],
        write_questions,
    ),
    Stage(
        "week",
        2,
        InsightDraft,
        STAGE_TASKS["week"],
        insight_stage("week"),
    ),
    Stage(
        "short_goals",
        2,
        GoalChanges,
        STAGE_TASKS["short_goals"],
        goal_changes("short"),
    ),
    Stage(
        "values",
        3,
        InsightDraft,
        STAGE_TASKS["values"],
        insight_stage("values"),
    ),
    Stage(
        "long_goals",
        3,
        GoalChanges,
        STAGE_TASKS["long_goals"],
        goal_changes("long"),
    ),
    Stage(
        "soul",
        3,
        SoulEditDraft,
        STAGE_TASKS["soul"],
        apply_soul_edit,
        task_for=soul_task,
    ),
    Stage(
        "consolidate",
        1,
        None,
        STAGE_TASKS["consolidate"],
        write_nothing,
    ),
)


# Each stage's name in a sentence for the person (the timeline): in English the name as stored, in a window
# translated.
_STAGE_WORDS = {
    "insight": notice("insight"),
    "entities": notice("entities"),
    "episode": notice("episode"),
    "questions": notice("questions"),
    "week": notice("week"),
    "short_goals": notice("short_goals"),
    "values": notice("values"),
    "long_goals": notice("long_goals"),
    "soul": notice("soul"),
    "consolidate": notice("consolidate"),
}


def stages_for(level: int) -> list[Stage]:
    return [s for s in STAGES if s.level <= level]


def stage_word(name: str) -> str:
    """A stage's name in a sentence for the person: a notice; a name this version does not know as it is."""
    return _STAGE_WORDS.get(name, name)
