"""The internal model's second opinion on an emotion reading (mind/emotion_confirm.py).

The backend is the deterministic ScriptedBackend standing in for a capable chat model's answers (good,
unsure, garbage, too slow); the reading it revises is the real head's on the real e5.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator

import pytest

from nexus_ark.mind.emotion import EmotionDetector, EmotionReading
from nexus_ark.mind.emotion_confirm import (
    BUNDLED_MODEL_ID,
    confirm_emotion,
    is_better_than_bundled,
)
from nexus_ark.mind.labels import LABELS, VALUES
from nexus_ark.providers.base import ChatRequest, StreamChunk, model_priority
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.work_queue import BACKGROUND

# Sarcasm the head reads by its words ("great", "love"), which a chat model reads as annoyance.
SARCASM = "Oh great, my train is cancelled again. I just love standing in the rain for an hour."


@pytest.fixture(scope="module")
def head_reading() -> EmotionReading:
    return EmotionDetector().classify(SARCASM)


def _answer(label: str, confidence: float) -> str:
    return json.dumps({"label": label, "confidence": confidence})


def _consistent(reading: EmotionReading) -> None:
    assert set(reading.scores) == set(LABELS)
    assert sum(reading.scores.values()) == pytest.approx(1.0, abs=1e-3)
    assert reading.label == max(reading.scores, key=reading.scores.__getitem__)
    assert reading.confidence == pytest.approx(reading.scores[reading.label], abs=1e-4)
    assert reading.value == VALUES[reading.label]


def test_a_sure_correction_replaces_the_heads_label(head_reading: EmotionReading) -> None:
    backend = ScriptedBackend([_answer("anger", 0.9)], model_id="ollama:qwen2.5:7b")
    revised = confirm_emotion(backend, SARCASM, head_reading)
    assert (revised.label, revised.value) == ("anger", -1.0)
    assert revised.confidence >= 0.9
    _consistent(revised)
    # The model saw the message, the label list and the head's guess.
    (request,) = backend.requests
    prompt = "\n".join(m.content for m in request)
    assert SARCASM in prompt and all(name in prompt for name in LABELS)
    assert f"{head_reading.label} {head_reading.confidence:.2f}" in prompt


def test_agreement_keeps_the_label_and_raises_the_confidence() -> None:
    reading = EmotionDetector().classify("明日の試験が不安で落ち着かない。")
    backend = ScriptedBackend([_answer(reading.label, 0.8)], model_id="litellm:openai/gpt-4o-mini")
    revised = confirm_emotion(backend, "明日の試験が不安で落ち着かない。", reading)
    assert revised.label == reading.label == "anxious"
    assert revised.confidence >= reading.confidence
    _consistent(revised)


def test_an_unsure_answer_does_not_overturn_a_sure_head() -> None:
    reading = EmotionDetector().classify("My dog died this morning and I can't stop crying.")
    assert reading.label == "sadness" and reading.confidence > 0.5
    backend = ScriptedBackend([_answer("surprise", 0.2)], model_id="ollama:llama3.1")
    revised = confirm_emotion(backend, "My dog died this morning and I can't stop crying.", reading)
    assert revised.label == "sadness"
    _consistent(revised)


@pytest.mark.parametrize(
    "garbage",
    [
        "The user seems pretty annoyed, I would say anger.",  # prose, no JSON
        _answer("rage", 0.9),  # not one of our labels
        _answer("anger", 1.7),  # confidence out of range
        '{"label": "anger"',  # cut off
    ],
)
def test_garbage_keeps_the_heads_reading_and_says_why(
    head_reading: EmotionReading, garbage: str, caplog: pytest.LogCaptureFixture
) -> None:
    backend = ScriptedBackend([garbage], model_id="ollama:qwen2.5:7b")
    with caplog.at_level(logging.WARNING, logger="nexus_ark.mind.emotion_confirm"):
        revised = confirm_emotion(backend, SARCASM, head_reading)
    assert revised == head_reading
    assert "keeping the head's reading" in caplog.text


def test_a_slow_model_times_out_to_the_heads_reading(
    head_reading: EmotionReading, caplog: pytest.LogCaptureFixture
) -> None:
    # Each streamed word takes 0.2 s: the answer would take about a second.
    backend = ScriptedBackend(['{"label": "anger", "confidence": 0.9}'], delay_s=0.2, model_id="ollama:big")
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="nexus_ark.mind.emotion_confirm"):
        revised = confirm_emotion(backend, SARCASM, head_reading, timeout_s=0.3)
    assert time.perf_counter() - started < 0.6
    assert revised == head_reading
    assert "timed out" in caplog.text


def test_an_empty_message_is_not_sent(head_reading: EmotionReading) -> None:
    backend = ScriptedBackend([_answer("anger", 0.9)], model_id="ollama:qwen2.5:7b")
    assert confirm_emotion(backend, "  \n", head_reading) == head_reading
    assert backend.requests == []


def test_only_a_model_better_than_the_bundled_one_is_worth_asking() -> None:
    assert BUNDLED_MODEL_ID == "gguf:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert not is_better_than_bundled(ScriptedBackend(["{}"], model_id=BUNDLED_MODEL_ID))
    assert not is_better_than_bundled(ScriptedBackend(["{}"], model_id=""))
    assert not is_better_than_bundled(None)
    for model_id in ("gguf:Qwen2.5-7B-Instruct-Q4_K_M.gguf", "ollama:llama3.1", "litellm:openai/gpt-4o"):
        assert is_better_than_bundled(ScriptedBackend(["{}"], model_id=model_id))


class _PriorityRecorder(ScriptedBackend):
    """Records the priority each request carries (a shared local model serves the lowest first)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.priorities: list[int] = []

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        self.priorities.append(request.priority)
        yield from super()._stream(request)


def test_the_confirmation_after_a_turn_asks_at_background_priority(head_reading: EmotionReading) -> None:
    """It ran on a thread of its own, which started at the person's priority whatever its caller's was
    (issue 22): a shared model then served it before another persona's waiting turn."""
    backend = _PriorityRecorder([_answer("anger", 0.9)], model_id="ollama:qwen2.5:7b")
    with model_priority(BACKGROUND):
        confirm_emotion(backend, SARCASM, head_reading)
    assert backend.priorities == [BACKGROUND]


def test_a_model_its_capability_record_calls_small_is_not_asked() -> None:
    """The record that decides structured output and tools decides this too: a 0.5B local model reads
    feelings no better than the head (issue 37); a 7B one, or a cloud model of unknown size, is asked."""
    small = ScriptedBackend(["{}"], model_id="gguf:qwen2.5-0.5b-instruct-q4_k_m.gguf", parameters=500_000_000)
    large = ScriptedBackend(["{}"], model_id="gguf:Qwen2.5-7B-Instruct-Q4_K_M.gguf", parameters=7_600_000_000)
    assert not is_better_than_bundled(small)
    assert is_better_than_bundled(large)
    assert is_better_than_bundled(ScriptedBackend(["{}"], model_id="litellm:openai/gpt-4o"))


def test_the_heads_and_the_models_readings_are_both_logged(
    head_reading: EmotionReading, caplog: pytest.LogCaptureFixture
) -> None:
    backend = ScriptedBackend([_answer("anger", 0.9)], model_id="ollama:qwen2.5:7b")
    with caplog.at_level(logging.INFO, logger="nexus_ark.mind.emotion_confirm"):
        confirm_emotion(backend, SARCASM, head_reading)
    (line,) = [r.getMessage() for r in caplog.records if "emotion read by the head" in r.getMessage()]
    assert f"head: {head_reading.label} {head_reading.confidence:.2f}" in line
    assert "ollama:qwen2.5:7b: anger 0.90" in line
