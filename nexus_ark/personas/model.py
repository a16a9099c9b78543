"""What persona.toml holds."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation, field_validator

from nexus_ark.config import one_line_name
from nexus_ark.model_config import ModelConfig
from nexus_ark.notices import notice
from nexus_ark.providers.base import GenerationParams
from nexus_ark.voice.base import VoiceSettings

SOUL_FILE = "persona.md"
SETTINGS_FILE = "persona.toml"
MEMORY_FILE = "memory.db"
NAME_MAX = 80


class ModelSettings(ModelConfig):
    """The persona's chat model and how it samples. An empty spec uses the app's default chat model."""

    temperature: float = Field(
        default=0.7, ge=0.0, le=2.0, description="higher is more varied, lower more predictable"
    )
    top_p: float = Field(
        default=0.95, gt=0.0, le=1.0, description="sample only from the likeliest words making up this share"
    )
    repeat_penalty: float = Field(default=1.1, ge=0.5, le=2.0, description="above 1 discourages repeating")
    max_tokens: int = Field(default=256, ge=16, le=8192, description="the longest reply, in tokens")

    def generation_params(self) -> GenerationParams:
        return GenerationParams(
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            repeat_penalty=self.repeat_penalty,
        )


class ConversationSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    history_messages: int = Field(
        default=40,
        ge=2,
        le=1000,
        description="how many recent messages go into the prompt (older ones stay in memory)",
    )
    episode_lookback_days: int = Field(
        default=3,
        ge=0,
        le=365,
        description="day summaries in the prompt: those of this many days before the oldest message in it",
    )
    # Natively where the model calls tools, else through the text protocol where the model can follow it.
    tools: bool = Field(default=True, description="let the persona search and edit its memory with tools")
    # The text protocol for models without native tool calls: "auto" uses it where the model is big
    # enough to follow it (not the tiny bundled model), "on" always, "off" never.
    text_tools: Literal["auto", "on", "off"] = Field(
        default="auto",
        description='tools as text for models without native tool calls: "auto" where the model is big '
        "enough to follow it",
    )
    # Rolling compression: when the turns in the prompt pass this share of the room the conversation has
    # there, the oldest are summarised by the internal model (the messages stay in memory.db).
    compress_at: float = Field(
        default=0.6,
        gt=0.0,
        le=1.0,
        description="summarise the oldest turns when the prompt's turns fill this share of their room",
    )
    # A conversation ends after this many idle minutes (or when the window closes): the internal model
    # then marks the open questions it answered.
    idle_minutes_end: int = Field(
        default=30, ge=1, le=24 * 60, description="a conversation ends after this many idle minutes"
    )


class DriveSettings(BaseModel):
    """[drives] in persona.toml: the level (0–1) at which each drive counts as strong (autonomy acts on it;
    the dashboard draws the line)."""

    model_config = ConfigDict(extra="forbid")

    boredom: float = Field(default=0.6, ge=0.0, le=1.0, description="the level at which boredom is strong")
    curiosity: float = Field(
        default=0.6, ge=0.0, le=1.0, description="the level at which curiosity is strong"
    )
    goal_achievement: float = Field(
        default=0.6, ge=0.0, le=1.0, description="the level at which the pull of goals is strong"
    )
    devotion: float = Field(default=0.6, ge=0.0, le=1.0, description="the level at which devotion is strong")

    def thresholds(self) -> dict[str, float]:
        return self.model_dump()


class Routine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cron: str = Field(description='five fields: minute hour day month weekday, e.g. "0 8 * * *"')
    task: str = Field(min_length=1, max_length=500, description="what the persona does then, in words")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        from apscheduler.triggers.cron import CronTrigger

        try:  # the syntax only: with a zone given, checking it reads no time-zone file of the system
            CronTrigger.from_crontab(value, timezone=UTC)
        except ValueError as exc:
            raise ValueError(
                notice(
                    'is not a cron expression ({problem}); e.g. "0 8 * * *" is every day at 8:00',
                    problem=str(exc),
                )
            ) from None
        return value


class AutonomySettings(BaseModel):
    """[autonomy] in persona.toml: whether and how often the persona writes first."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="the persona may write first")
    # The persona's local time; dreams happen then.
    quiet_hours: str = Field(
        default="00:00-07:00", description='no message and no notification in these hours, "HH:MM-HH:MM"'
    )
    cooldown_minutes: int = Field(
        default=180, ge=0, le=7 * 24 * 60, description="the least time between two messages it writes first"
    )
    daily_cap: int = Field(
        default=3, ge=0, le=48, description="at most this many messages it writes first a day"
    )
    max_unanswered: int = Field(
        default=2,
        ge=1,
        le=20,
        description="it stops writing first after this many messages in a row the person has not answered",
    )
    heartbeat_minutes: int = Field(
        default=60,
        ge=0,
        le=24 * 60,
        description="every so many minutes it looks around (events, drives, the time); 0: never",
    )
    dream_idle_minutes: int = Field(
        default=60, ge=0, le=24 * 60, description="dreaming waits until the person has been away this long"
    )
    # e.g. {cron = "0 8 * * *", task = "a short greeting"}
    routines: list[Routine] = Field(
        default_factory=list, description="things it always does at set times (cron), e.g. a morning greeting"
    )

    @field_validator("quiet_hours")
    @classmethod
    def _hours(cls, value: str) -> str:
        from datetime import time

        parts = value.split("-")
        try:
            if len(parts) != 2:
                raise ValueError
            for part in parts:
                time.fromisoformat(part.strip())
        except ValueError:
            raise ValueError(notice('must be two times "HH:MM-HH:MM", e.g. "00:00-07:00"')) from None
        return value


class SoulSettings(BaseModel):
    """How the persona may grow: its proposals to change its own soul, which the person reviews."""

    model_config = ConfigDict(extra="forbid")

    proposals: bool = Field(
        default=True, description="it may propose changes to its soul (persona.md) for you to review"
    )
    fixed: list[str] = Field(
        default_factory=list,
        max_length=50,
        description='headings of soul sections only you change (never proposed), e.g. ["How you speak"]',
    )


class PersonaSettings(BaseModel):
    # Unknown top-level tables are kept for later versions' settings; known tables are strict.
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, max_length=NAME_MAX, description="the name it is shown and called by")
    language: Literal["en", "ja"] = Field(default="en", description="the language it speaks")
    description: str = Field(default="", description="one line shown in the persona list")
    # What this persona calls the person; empty: the name set for the whole app (config.toml user_name).
    user_name: str = Field(
        default="", max_length=NAME_MAX, description="what it calls you; empty: the name set for the app"
    )
    model: ModelSettings = Field(default_factory=ModelSettings, description="the model it talks with")
    internal_model: ModelConfig | None = Field(
        default=None,
        description="emotion detection, dreaming, summaries, entity extraction; unset: the chat model",
    )
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    drives: DriveSettings = Field(default_factory=DriveSettings)
    autonomy: AutonomySettings = Field(default_factory=AutonomySettings)
    soul: SoulSettings = Field(default_factory=SoulSettings)
    # [voice]: how it sounds (engine, voice, speed, pitch) and whether replies are spoken (issue 36).
    voice: VoiceSettings = Field(default_factory=VoiceSettings)

    @field_validator("name")
    @classmethod
    def _one_line_name(cls, value: str) -> str:
        # A name is shown on one line and printed in the tab-separated `persona list`.
        if not one_line_name(value):
            raise ValueError(notice("must not be blank"))
        return value

    @field_validator("user_name")
    @classmethod
    def _one_line_user_name(cls, value: str) -> str:
        return one_line_name(value)


class PersonaInfo(BaseModel):
    """One line of `persona list`: usable personas and broken ones (with the reason) alike."""

    slug: str
    folder: Path
    name: str
    language: str = ""
    description: str = ""
    # Unusable: why (it cannot be opened). Usable but damaged: what is wrong (e.g. persona.md missing).
    # Not validated, so a Notice stays one and the window shows it in the person's language.
    error: SkipValidation[str] = ""
    warning: SkipValidation[str] = ""

    @property
    def ok(self) -> bool:
        return not self.error
