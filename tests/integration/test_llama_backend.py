"""The real bundled GGUF through llama.cpp, behind the provider interface."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from nexus_ark.errors import ModelError
from nexus_ark.providers.base import ChatMessage, GenerationParams, context_window
from nexus_ark.providers.llama_cpp_backend import EvalStats, LlamaCppBackend
from nexus_ark.providers.scripted import ScriptedBackend

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def backend(bundled_model: Path):
    b = LlamaCppBackend(bundled_model, n_ctx=1024)
    b.ensure_ready()
    yield b
    b.close()


def _messages(text: str) -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content="You are a helpful assistant."),
        ChatMessage(role="user", content=text),
    ]


def test_streams_a_real_reply_in_pieces(backend: LlamaCppBackend) -> None:
    chunks = list(
        backend.stream_chat(_messages("Name three colors."), GenerationParams(max_tokens=40, seed=7))
    )
    texts = [c.text for c in chunks if c.text]
    assert len(texts) >= 3, "a streamed reply arrives in several chunks"
    assert "".join(texts).strip()
    assert chunks[-1].finish_reason in ("stop", "length")
    assert all(c.finish_reason is None for c in chunks[:-1])


def test_max_tokens_ends_with_length(backend: LlamaCppBackend) -> None:
    chunks = list(
        backend.stream_chat(_messages("Write a long story about the sea."), GenerationParams(max_tokens=5))
    )
    assert sum(1 for c in chunks if c.text) <= 5
    assert chunks[-1].finish_reason == "length"


def test_cancel_stops_between_tokens(backend: LlamaCppBackend) -> None:
    cancel = threading.Event()
    received = []
    for chunk in backend.stream_chat(
        _messages("Write a very long story about a dragon."),
        GenerationParams(max_tokens=200, temperature=0.8),
        cancel,
    ):
        if chunk.text:
            received.append(chunk.text)
            if len(received) == 3:
                cancel.set()
        last = chunk
    assert last.finish_reason == "cancelled"
    assert len(received) < 10
    # The model is free again for the next request.
    assert any(c.text for c in backend.stream_chat(_messages("Hi"), GenerationParams(max_tokens=4)))


def test_long_history_is_trimmed_to_the_context(backend: LlamaCppBackend) -> None:
    history = [ChatMessage(role="system", content="You are terse.")]
    for i in range(60):
        history.append(ChatMessage(role="user", content=f"Message number {i} with some filler words " * 3))
        history.append(ChatMessage(role="assistant", content="Noted."))
    history.append(ChatMessage(role="user", content="Say OK."))
    chunks = list(backend.stream_chat(history, GenerationParams(max_tokens=8)))
    assert chunks[-1].finish_reason in ("stop", "length")


def test_two_threads_share_one_model_safely(backend: LlamaCppBackend) -> None:
    results: dict[int, str] = {}

    def ask(i: int) -> None:
        results[i] = "".join(
            c.text
            for c in backend.stream_chat(_messages(f"Count to {i + 2}."), GenerationParams(max_tokens=12))
        )

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 3 and all(results.values())


def test_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelError) as err:
        LlamaCppBackend(missing)
    assert str(missing) in str(err.value) and "does not exist" in str(err.value)


def test_not_a_gguf_file_is_named(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"<html>404 not found</html>" * 10)
    with pytest.raises(ModelError) as err:
        LlamaCppBackend(bogus)
    assert str(bogus) in str(err.value) and "not a GGUF" in str(err.value)


def test_truncated_gguf_fails_to_load_with_a_clear_error(tmp_path: Path, bundled_model: Path) -> None:
    truncated = tmp_path / "half.gguf"
    with open(bundled_model, "rb") as src:
        truncated.write_bytes(src.read(1_000_000))
    backend = LlamaCppBackend(truncated)
    try:
        with pytest.raises(ModelError) as err:
            backend.ensure_ready()
        assert str(truncated) in str(err.value)
        with pytest.raises(ModelError):
            list(backend.stream_chat(_messages("hi"), GenerationParams(max_tokens=2)))
    finally:
        backend.close()


def test_the_tiny_bundled_model_is_not_given_the_text_tool_protocol(backend: LlamaCppBackend) -> None:
    backend.ensure_ready()
    caps = backend.capabilities()
    assert caps.tools is False and caps.text_tools is False  # 135M parameters: it would invent calls


# A persona-sized system prompt: a few hundred tokens that the chat's next turn must not evaluate again.
_SOUL = " ".join(
    f"Rule {i}: you are Aria, a calm companion who remembers small details, answers briefly and kindly, "
    f"and asks one question at a time about the person's day number {i}."
    for i in range(12)
)
_GREEDY = GenerationParams(max_tokens=12, temperature=0.0, seed=1)


def _chat_then_internal_then_chat(
    backend: LlamaCppBackend,
) -> tuple[EvalStats | None, EvalStats | None, EvalStats | None]:
    """A chat turn, an internal structured request on the same model, then the chat's next turn."""
    chat = [ChatMessage(role="system", content=_SOUL), ChatMessage(role="user", content="Hi, I'm home.")]
    reply = "".join(c.text for c in backend.stream_chat(chat, _GREEDY))
    first = backend.last_eval
    internal = [
        ChatMessage(role="system", content="Classify the emotion of the message."),
        ChatMessage(role="user", content="Hi, I'm home."),
    ]
    schema = {"type": "object", "properties": {"emotion": {"type": "string"}}, "required": ["emotion"]}
    list(backend.stream_chat(internal, _GREEDY, json_schema=schema))
    between = backend.last_eval
    chat += [ChatMessage(role="assistant", content=reply), ChatMessage(role="user", content="Long day.")]
    assert "".join(c.text for c in backend.stream_chat(chat, _GREEDY))  # whole: last_eval is set at the end
    return first, between, backend.last_eval


def test_an_internal_request_leaves_the_chat_prefix_in_place(backend: LlamaCppBackend) -> None:
    soul_tokens = backend.count_tokens(_SOUL)
    first, between, second = _chat_then_internal_then_chat(backend)
    assert first is not None and between is not None and second is not None
    assert first.prompt_evaluated >= soul_tokens  # llama.cpp's counter sees a cold prompt whole
    assert between.context != first.context  # internal work got a context of its own
    assert second.context == first.context
    # The next chat turn evaluates only what is new since its last turn, not the soul again.
    assert second.prompt_evaluated < soul_tokens / 4


def test_chat_turns_around_internal_work_copy_no_kv_state(
    bundled_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's default state cache used to save the whole KV state after every request and restore it
    before the chat's next turn: a copy that grows with the conversation. Nothing is copied now."""
    from llama_cpp import Llama

    copies: list[str] = []
    real_save, real_load = Llama.save_state, Llama.load_state
    monkeypatch.setattr(Llama, "save_state", lambda self: copies.append("save") or real_save(self))
    monkeypatch.setattr(Llama, "load_state", lambda self, s: copies.append("load") or real_load(self, s))
    backend = LlamaCppBackend(bundled_model, n_ctx=1024, state_cache_mb=256)
    try:
        backend.ensure_ready()
        _, _, second = _chat_then_internal_then_chat(backend)
        assert copies == []
        assert second is not None and second.prompt_evaluated < backend.count_tokens(_SOUL) / 4
    finally:
        backend.close()


def test_one_context_still_answers_requests_in_turn(bundled_model: Path) -> None:
    backend = LlamaCppBackend(bundled_model, n_ctx=1024, contexts=1)
    try:
        first, between, second = _chat_then_internal_then_chat(backend)
        assert [s.context if s else None for s in (first, between, second)] == [0, 0, 0]
    finally:
        backend.close()


def test_a_long_prompt_stops_during_its_evaluation_and_the_persons_request_goes_first(
    backend: LlamaCppBackend,
) -> None:
    """A background request with a long prompt (a dream's material) is cancelled while llama.cpp still
    evaluates it: it ends without a word, and the person's request, queued meanwhile, is answered."""
    from nexus_ark.providers.base import model_priority

    material = " ".join(f"Note {i}: Yui made a blue bowl in pottery class on a rainy day." for i in range(18))
    cancel = threading.Event()
    background: list = []

    def dream() -> None:
        with model_priority(1):
            background.extend(
                backend.stream_chat(
                    [
                        ChatMessage(role="system", content=material),
                        ChatMessage(role="user", content="Reflect."),
                    ],
                    GenerationParams(max_tokens=32),
                    cancel,
                )
            )

    worker = threading.Thread(target=dream)
    worker.start()
    worker.join(0.3)  # queued and being evaluated (some 800 tokens: longer than this here)
    cancel.set()
    reply = "".join(
        c.text
        for c in backend.stream_chat(
            [ChatMessage(role="user", content="Hi!")], GenerationParams(max_tokens=8)
        )
    )
    worker.join(60)
    assert reply.strip()
    assert [c.finish_reason for c in background if c.finish_reason] == ["cancelled"]
    assert not "".join(c.text for c in background)  # stopped before its first word


def test_the_context_window_is_the_loaded_models_own_else_the_configured_one(
    backend: LlamaCppBackend,
) -> None:
    # The budgets of a turn, a compression and a dream step all read it: a llama.cpp model opened with a
    # context of 1024 has 1024 tokens whatever persona.toml says; a backend that cannot tell has the setting.
    assert context_window(backend, 4096) == 1024
    assert context_window(ScriptedBackend(["hi"]), 4096) == 4096
