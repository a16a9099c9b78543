"""Two personas on one shared GGUF (the bundled model through llama.cpp, two contexts): the person's turn
is answered between two tokens of a dream's request, on the other context, and the dream's request then
goes on where it was, its words unchanged. Before, the turn waited for the whole background request."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from nexus_ark.runtime.work_queue import BACKGROUND, USER

pytestmark = pytest.mark.integration

DREAM = [ChatMessage(role="user", content="Write a long story about a lighthouse keeper and the sea.")]
TURN = [ChatMessage(role="user", content="Hi! How are you today?")]
LONG = GenerationParams(max_tokens=160, temperature=0.7, seed=7)
SHORT = GenerationParams(max_tokens=8, temperature=0.7, seed=3)


def _background(backend: LlamaCppBackend, started: threading.Event, times: list[float]) -> str:
    text = []
    for chunk in backend.stream_chat(DREAM, LONG, priority=BACKGROUND):
        if chunk.text:
            text.append(chunk.text)
            times.append(time.monotonic())
            if len(text) == 10:
                started.set()
    return "".join(text)


@pytest.mark.slow
def test_the_persons_turn_is_answered_between_two_tokens_of_a_background_request(bundled_model: Path):
    backend = LlamaCppBackend(bundled_model, n_ctx=1024, contexts=2)
    try:
        alone = _background(backend, threading.Event(), [])  # the dream's request with nobody waiting

        started, times, result = threading.Event(), [], {}
        dream = threading.Thread(target=lambda: result.update(text=_background(backend, started, times)))
        dream.start()
        assert started.wait(120)
        asked = time.monotonic()
        first = None
        for chunk in backend.stream_chat(TURN, SHORT, priority=USER):
            if chunk.text and first is None:
                first = time.monotonic()
        dream.join(300)
        assert first is not None and not dream.is_alive()
        step = (times[-1] - times[0]) / max(1, len(times) - 1)  # the dream's time per token
        assert first < times[-1], "the turn waited for the whole background request"
        assert first - asked < 10 * step + 1.0, (first - asked, step)
        assert result["text"] == alone, "the background request's words changed when it made way"
    finally:
        backend.close()
