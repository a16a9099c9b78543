"""Structured results the internal model produces (validated with providers.structured)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# The emotions detected in the user's messages, and the value each plots as on the dashboard.
EmotionLabel = Literal[
    "joy", "happy", "surprise", "neutral", "sadness", "anger", "fear", "anxious", "tired", "busy", "stressed"
]
EMOTION_VALUES: dict[str, float] = {
    "joy": 1.0,
    "happy": 0.8,
    "surprise": 0.3,
    "neutral": 0.0,
    "busy": -0.2,
    "tired": -0.4,
    "anxious": -0.5,
    "stressed": -0.6,
    "sadness": -0.6,
    "fear": -0.8,
    "anger": -1.0,
}


class EmotionReading(BaseModel):
    emotion: EmotionLabel = Field(description="the main emotion the user's message expresses")


class DreamInsight(BaseModel):
    """One entry of the dream diary, written during sleep-time reflection."""

    # Length limits are part of the schema: with constrained decoding they make a small model close each
    # string in time instead of rambling until the token budget cuts the JSON off.
    trigger_topic: str = Field(min_length=1, max_length=80, description="what the reflection was about")
    insight: str = Field(min_length=1, max_length=300, description="what the persona understood")
    strategy: str = Field(
        min_length=1, max_length=200, description="how to act on it in the next conversations"
    )
    log_entry: str = Field(min_length=1, max_length=300, description="a short dream-like diary entry")
