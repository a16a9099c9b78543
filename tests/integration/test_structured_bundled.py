"""Structured output from the real bundled 135M model (the full 100 + 20 count runs in bench/)."""

from __future__ import annotations

import pytest

from nexus_ark.mind.schemas import DreamInsight, EmotionReading
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.structured import generate_structured

pytestmark = pytest.mark.integration

TEXTS = [
    "I finally got the job, I can't believe it!",
    "My grandmother passed away last night.",
    "Why does the bus never come on time?!",
    "I have three deadlines tomorrow and no time to sleep.",
    "Oh wow, I didn't expect a surprise party.",
    "Just checking the weather.",
    "I'm scared of the exam results.",
    "So tired after the night shift.",
    "We won the match!",
    "I'm worried my cat is sick.",
]


def test_emotion_readings_all_validate(shared_llama) -> None:
    for text in TEXTS:
        reading = generate_structured(
            shared_llama,
            [
                ChatMessage(role="system", content="Classify the main emotion of the user's message."),
                ChatMessage(role="user", content=text),
            ],
            EmotionReading,
        )
        assert isinstance(reading, EmotionReading)


def test_dream_objects_all_validate(shared_llama) -> None:
    for day in ("The user talked about a new job.", "We planned a garden.", "The user was sad."):
        insight = generate_structured(
            shared_llama,
            [
                ChatMessage(role="system", content="You are Aria, reflecting during sleep on today."),
                ChatMessage(role="user", content=f"Today: {day} Write your dream diary entry."),
            ],
            DreamInsight,
        )
        assert insight.insight.strip() and insight.strategy.strip() and len(insight.insight) <= 300
