"""Structured output from the real bundled 135M model: what the objects say, not only that they parse.

A 135M model is no emotion classifier (bench/structured_output.py reports its agreement with GoEmotions
and that every answer validates), so only what it does reliably is asserted: with greedy, schema-
constrained decoding it tells a bereavement from a won match, and its dream diary is about the day it was
given. Greedy decoding makes these answers the same from run to run.
"""

from __future__ import annotations

import pytest

from nexus_ark.mind.schemas import EMOTION_VALUES, DreamInsight
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.structured import generate_structured
from tests.integration.structured_checks import GREEDY, read_emotion

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("text", "sign"),
    [
        ("My grandmother passed away last night.", -1),
        ("I cried all night, I miss her so much.", -1),
        ("We won the match!", 1),
        pytest.param(
            "Yay! We won the championship, best day ever!",
            1,
            # Offered issue 37's fourteen labels, the 135M model reads it as fear (greedy, every run). The app
            # no longer asks the bundled model for emotions (the head reads them; only a capable model
            # confirms), so this records the model's limit; strict: a model that reads it right fails this.
            marks=pytest.mark.xfail(strict=True, reason="the 135M model reads this as fear among 14 labels"),
        ),
    ],
)
def test_clear_emotions_are_read_with_the_right_sign(shared_llama, text: str, sign: int) -> None:
    reading = read_emotion(shared_llama, text)
    assert sign * EMOTION_VALUES[reading.emotion] > 0, f"{text!r} read as {reading.emotion}"


@pytest.mark.parametrize(
    ("day", "topic_word"),
    [
        ("We planned a garden.", "garden"),
        ("The user was sad.", "sad"),
    ],
)
def test_dream_entries_are_about_their_day(shared_llama, day: str, topic_word: str) -> None:
    insight = generate_structured(
        shared_llama,
        [
            ChatMessage(role="system", content="You are Aria, reflecting during sleep on today."),
            ChatMessage(role="user", content=f"Today: {day} Write your dream diary entry."),
        ],
        DreamInsight,
        params=GREEDY.model_copy(update={"max_tokens": 768}),
    )
    assert topic_word in insight.trigger_topic.lower(), insight.trigger_topic
    for text in (insight.insight, insight.strategy, insight.log_entry):
        assert len(text.split()) >= 3, f"a sentence, not a placeholder: {text!r}"
