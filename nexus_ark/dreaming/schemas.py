"""What each dream stage writes, as pydantic models: the schema the model's answer is constrained to (or a
record tool's parameters), validated before anything is written. Length limits make a small model close
its strings in time (and keep a dream short). The fields carry no descriptions: a tiny model copies them
into its answer; what each field means is said in the stage's task (dreaming/stages.py)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator


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


def _without_titles(schema: dict[str, Any]) -> None:
    """Titles ("InsightDraft", "Trigger Topic") are what a tiny model copies into its answer: left out."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)


def _from_task(value: str, task: str) -> bool:
    """The value is (or opens with) a piece of the task's own words (punctuation around it aside: a
    leading comma once let a copied task through)."""
    said = _EDGES.sub("", " ".join(value.casefold().split()))
    return bool(task) and len(said) >= 12 and (said in task or (len(said) >= 24 and said[:24] in task))


_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
# Fields that hold ids or numbers, not words (a section is a heading listed in the task, checked when
# written).
_NOT_WORDS = frozenset({"source_ids", "goal_id", "complete", "abandon", "section"})
MIN_LETTERS = 2  # a name in kanji can be two letters (結衣)


def _has_words(value: str) -> bool:
    """Text a person could read: a few letters (any script), and more letters than other signs. A small
    model's leftovers ("1.2", "}],", "][") are not an answer."""
    letters = sum(ch.isalpha() for ch in value)
    others = sum(not ch.isalpha() and not ch.isspace() for ch in value)
    return letters >= MIN_LETTERS and letters > others


class DreamAnswer(BaseModel):
    """Refuses answers that repeat the instructions, and answers to another stage's question (unknown
    fields): the repair round shows the model why."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_without_titles)

    @model_validator(mode="after")
    def _not_an_echo(self, info: ValidationInfo) -> DreamAnswer:
        task = str((info.context or {}).get("task", "")).casefold()
        for name, field in type(self).model_fields.items():
            if name in _NOT_WORDS:  # ids: checked against the real ones when written
                continue
            value = getattr(self, name)
            values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            for v in values:
                if not isinstance(v, str) or (not v.strip() and not field.is_required()):
                    continue  # an optional text left empty is fine
                if not _has_words(v):
                    raise ValueError(f"{name} holds no words ({v!r})")
                if _echo(v, name, field, type(self).__name__) or _from_task(v, task):
                    raise ValueError(f"{name} repeats the instructions ({v!r}) instead of answering")
        return self


SourceIds = list[str]
_SOURCES: list[str] = Field(default_factory=list, max_length=8)


class InsightDraft(DreamAnswer):
    trigger_topic: str = Field(min_length=1, max_length=60)
    insight: str = Field(min_length=1, max_length=220)
    strategy: str = Field(min_length=1, max_length=160)
    log_entry: str = Field(min_length=1, max_length=200)
    source_ids: SourceIds = _SOURCES


class EntityNote(DreamAnswer):
    name: str = Field(min_length=1, max_length=40)
    text: str = Field(min_length=1, max_length=200)
    source_ids: SourceIds = _SOURCES


class EntityUpdates(DreamAnswer):
    entities: list[EntityNote] = Field(min_length=1, max_length=2)


class EpisodeDraft(DreamAnswer):
    summary: str = Field(min_length=1, max_length=260)
    key_events: list[str] = Field(default_factory=list, max_length=3)
    emotional_tone: str = Field(min_length=1, max_length=30)
    source_ids: SourceIds = _SOURCES


class QuestionDraft(DreamAnswer):
    question: str = Field(min_length=3, max_length=120)
    topic: str = Field(default="", max_length=40)
    context: str = Field(default="", max_length=120)
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    source_ids: SourceIds = _SOURCES


class QuestionDrafts(DreamAnswer):
    questions: list[QuestionDraft] = Field(default_factory=list, max_length=2)


class NewGoal(DreamAnswer):
    goal: str = Field(min_length=3, max_length=120)
    priority: int = Field(default=2, ge=1, le=5)
    related_values: list[str] = Field(default_factory=list, max_length=3)


class GoalNote(DreamAnswer):
    goal_id: str = Field(min_length=1, max_length=40)
    note: str = Field(min_length=1, max_length=160)


class GoalChanges(DreamAnswer):
    new: list[NewGoal] = Field(default_factory=list, max_length=2)
    progress: list[GoalNote] = Field(default_factory=list, max_length=3)
    complete: list[str] = Field(default_factory=list, max_length=3)
    abandon: list[str] = Field(default_factory=list, max_length=3)


class SoulEditDraft(DreamAnswer):
    section: str = Field(default="", max_length=60)
    text: str = Field(default="", max_length=1200)
    reason: str = Field(default="", max_length=400)
    source_ids: SourceIds = _SOURCES
