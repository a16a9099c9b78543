"""What each memory component holds: one pydantic model a component (a row of its table)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

GoalTerm = Literal["short", "long"]
GoalStatus = Literal["active", "completed", "abandoned"]


class Episode(BaseModel):
    date: str  # YYYY-MM-DD
    summary: str
    key_events: list[str] = Field(default_factory=list)
    emotional_tone: str = "neutral"
    source_ids: list[str] = Field(default_factory=list)


class Entity(BaseModel):
    name: str
    text: str
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""
    reading: str = ""  # how the name is read aloud (「灯」: あかり); "" as the speech engine guesses


class Insight(BaseModel):
    trigger_topic: str
    insight: str
    strategy: str
    log_entry: str
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""


class Goal(BaseModel):
    id: str = ""
    term: GoalTerm
    goal: str
    status: GoalStatus = "active"
    priority: int = 1
    progress_notes: list[str] = Field(default_factory=list)
    related_values: list[str] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


class Drive(BaseModel):
    name: str
    level: float = Field(ge=0.0, le=1.0)
    threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    info: dict[str, Any] = Field(default_factory=dict)
    updated_at: str = ""


class OpenQuestion(BaseModel):
    id: int = 0
    question: str
    topic: str = ""
    context: str = ""  # what the persona was thinking of when it asked
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""
    resolved_at: str | None = None
    resolved_by: str | None = None  # "conversation" (the end-of-conversation check) or "user"


class EmotionEntry(BaseModel):
    timestamp: str
    emotion: str
    value: float
    snippet: str = ""
    message_id: int | None = None
