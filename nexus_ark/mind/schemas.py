"""Structured results the internal model produces (validated with providers.structured)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from nexus_ark.mind.labels import VALUES, EmotionName
from nexus_ark.prompts.mind import CONFIRM_FIELDS, DREAM_INSIGHT_FIELDS

_ASKS = DREAM_INSIGHT_FIELDS

# The emotions detected in the user's messages and the value each plots as: one list for the trained
# detector (mind/emotion.py) and the internal model's constrained answer.
EmotionLabel = EmotionName
EMOTION_VALUES: dict[str, float] = VALUES


class EmotionReading(BaseModel):
    emotion: EmotionLabel = Field(description=CONFIRM_FIELDS["label"])


class DreamInsight(BaseModel):
    """One entry of the dream diary, written during sleep-time reflection."""

    # Length limits are part of the schema: with constrained decoding they make a small model close each
    # string in time instead of rambling until the token budget cuts the JSON off.
    trigger_topic: str = Field(min_length=1, max_length=80, description=_ASKS["trigger_topic"])
    insight: str = Field(min_length=1, max_length=300, description=_ASKS["insight"])
    strategy: str = Field(min_length=1, max_length=200, description=_ASKS["strategy"])
    log_entry: str = Field(min_length=1, max_length=300, description=_ASKS["log_entry"])
