"""What each dream stage writes, as pydantic models: the schema the model's answer is constrained to (or a
record tool's parameters), validated before anything is written. Length limits make a small model close
its strings in time."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from nexus_ark.mind.schemas import DreamInsight


def _echo(value: str, name: str, info: Any, model: str) -> bool:
    """A small model sometimes copies the schema instead of answering ("Trigger Topic", "InsightDraft")."""
    said = " ".join(value.casefold().replace("_", " ").split()).strip(" .")
    if not said:
        return False
    echoes = {name.replace("_", " "), model.casefold()}
    if info.title:
        echoes.add(info.title.casefold())
    if info.description:
        echoes.add(info.description.casefold().strip(" ."))
    return said in echoes


class DreamAnswer(BaseModel):
    """Refuses answers that repeat the instructions, and answers to another stage's question (unknown
    fields): the repair round shows the model why."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _not_an_echo(self) -> DreamAnswer:
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            for v in values:
                if isinstance(v, str) and _echo(v, name, info, type(self).__name__):
                    raise ValueError(f"{name} repeats the instructions ({v!r}) instead of answering")
        return self


SourceIds = list[str]
_SOURCES = Field(
    default_factory=list,
    max_length=12,
    description='ids of the messages this comes from, as shown in the material, e.g. ["msg:12"]',
)


class InsightDraft(DreamInsight, DreamAnswer):
    source_ids: SourceIds = _SOURCES


class EntityNote(DreamAnswer):
    name: str = Field(
        min_length=1, max_length=60, description="a person, place, thing or idea named in the talk"
    )
    text: str = Field(min_length=1, max_length=300, description="what the persona now knows about it")
    source_ids: SourceIds = _SOURCES


class EntityUpdates(DreamAnswer):
    entities: list[EntityNote] = Field(min_length=1, max_length=3)


class EpisodeDraft(DreamAnswer):
    summary: str = Field(
        min_length=1, max_length=400, description="what happened that day, in a few sentences"
    )
    key_events: list[str] = Field(default_factory=list, max_length=5, description="the day's key events")
    emotional_tone: str = Field(min_length=1, max_length=40, description="the day's mood in a word or two")
    source_ids: SourceIds = _SOURCES


class QuestionDraft(DreamAnswer):
    question: str = Field(min_length=3, max_length=200, description="something the persona wants to know")
    topic: str = Field(default="", max_length=60)
    context: str = Field(default="", max_length=200, description="why it came to mind")
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    source_ids: SourceIds = _SOURCES


class QuestionDrafts(DreamAnswer):
    questions: list[QuestionDraft] = Field(default_factory=list, max_length=3)


class NewGoal(DreamAnswer):
    goal: str = Field(min_length=3, max_length=160)
    priority: int = Field(default=2, ge=1, le=5, description="1 is the most important")
    related_values: list[str] = Field(default_factory=list, max_length=3)


class GoalNote(DreamAnswer):
    goal_id: str = Field(min_length=1, max_length=40)
    note: str = Field(min_length=1, max_length=200)


class GoalChanges(DreamAnswer):
    new: list[NewGoal] = Field(default_factory=list, max_length=2)
    progress: list[GoalNote] = Field(default_factory=list, max_length=3)
    complete: list[str] = Field(default_factory=list, max_length=3, description="ids of goals reached")
    abandon: list[str] = Field(default_factory=list, max_length=3, description="ids of goals given up")
