"""The LiteLLM backend over real HTTP: llama-cpp-python's OpenAI-compatible server serving the bundled model
on 127.0.0.1, and the loopback fault server for what real servers do when things go wrong."""

from __future__ import annotations

import threading
import time

import pytest

from nexus_ark.errors import (
    MissingApiKeyError,
    ProviderHTTPError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from nexus_ark.mind.schemas import EMOTION_VALUES, DreamInsight, EmotionReading
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.litellm_backend import LiteLLMBackend
from nexus_ark.providers.registry import default_factory
from nexus_ark.providers.stream_guard import RetryPolicy, Timeouts
from nexus_ark.providers.structured import generate_structured
from tests.integration.conftest import free_port
from tests.integration.structured_checks import GREEDY, read_emotion

pytestmark = pytest.mark.integration
FAST = Timeouts(connect_s=2, first_token_s=10, between_tokens_s=1)


def _ask(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="system", content="You are helpful."), ChatMessage(role="user", content=text)]


def test_streams_from_a_real_openai_compatible_server(llama_server: str) -> None:
    backend = LiteLLMBackend("openai/local", api_base=llama_server)
    backend.ensure_ready()
    chunks = list(backend.stream_chat(_ask("Name two animals."), GenerationParams(max_tokens=32, seed=5)))
    texts = [c.text for c in chunks if c.text]
    assert len(texts) >= 3 and "".join(texts).strip()
    assert chunks[-1].finish_reason in ("stop", "length")


def test_structured_output_through_the_server(llama_server: str) -> None:
    backend = LiteLLMBackend("openai/local", api_base=llama_server)
    reading = read_emotion(backend, "My grandmother passed away last night.")
    assert EMOTION_VALUES[reading.emotion] < 0, f"a bereavement read as {reading.emotion}"
    insight = generate_structured(
        backend,
        _ask("Reflect on a day spent talking about gardening with the user."),
        DreamInsight,
        params=GREEDY.model_copy(update={"max_tokens": 512}),
    )
    assert insight.strategy.strip() and insight.insight.strip()
    assert "garden" in insight.model_dump_json().lower(), "the reflection is about the day it was given"


def test_capabilities_are_facts_about_the_model_known_before_the_first_turn() -> None:
    """From LiteLLM's model map, without a request or a key; a local alias it does not know calls no tools."""
    cloud = LiteLLMBackend("openai/gpt-4o-mini").capabilities()
    assert (cloud.tools, cloud.response_format) == (True, "json_schema")
    local = LiteLLMBackend("openai/local", api_base="http://127.0.0.1:9/v1").capabilities()
    assert (local.tools, local.response_format) == (False, "json_object_schema")


def test_structured_output_setting_reaches_the_request(ollama_wire) -> None:
    config = ModelConfig(
        spec="litellm:openai/echo", api_base=f"{ollama_wire.url}/v1", structured_output="json_object"
    )
    backend = default_factory(config)
    schema = EmotionReading.model_json_schema()
    chunks = backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=8), json_schema=schema)
    text = "".join(c.text for c in chunks)
    assert text == "Hello"
    sent = [r for r in ollama_wire.requests if r["path"] == "/v1/chat/completions"][-1]
    assert sent["response_format"] == {"type": "json_object"}, "plain JSON mode, as configured"


def test_cancel_mid_stream(llama_server: str) -> None:
    backend = LiteLLMBackend("openai/local", api_base=llama_server)
    cancel = threading.Event()
    texts = []
    for chunk in backend.stream_chat(
        _ask("Tell a very long story."), GenerationParams(max_tokens=200), cancel
    ):
        if chunk.text:
            texts.append(chunk.text)
            if len(texts) == 2:
                cancel.set()
        last = chunk
    assert last.finish_reason == "cancelled" and len(texts) < 10


def test_missing_api_key_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    backend = LiteLLMBackend("anthropic/claude-sonnet-4-5")
    with pytest.raises(MissingApiKeyError) as err:
        backend.ensure_ready()
    assert "anthropic" in str(err.value) and "ANTHROPIC_API_KEY" in str(err.value)


def test_key_from_an_env_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_OPENAI_KEY", "sk-test-123")
    backend = LiteLLMBackend("openai/gpt-4o-mini", api_key_ref="${MY_OPENAI_KEY}")
    assert backend._api_key() == "sk-test-123"


def test_server_down_is_named() -> None:
    base = f"http://127.0.0.1:{free_port()}/v1"
    backend = LiteLLMBackend(
        "openai/local", api_base=base, timeouts=FAST, retry=RetryPolicy(attempts=2, backoff_s=0.01)
    )
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))
    assert base in str(err.value)
    assert time.monotonic() - started < 10


def test_http_500_is_retried_then_typed(ollama_wire) -> None:
    before = len(ollama_wire.requests)
    backend = LiteLLMBackend(
        "openai/fault-500",
        api_base=f"{ollama_wire.url}/v1",
        timeouts=FAST,
        retry=RetryPolicy(attempts=2, backoff_s=0.01),
    )
    with pytest.raises(ProviderHTTPError) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))
    assert err.value.status == 500
    assert len(ollama_wire.requests) - before == 2


@pytest.mark.parametrize(
    ("model", "error"),
    [
        ("fault-stall", ProviderTimeoutError),
        ("fault-malformed", ProviderProtocolError),
        ("fault-disconnect", ProviderProtocolError),
        ("fault-unterminated", ProviderProtocolError),  # cut mid-event, body ended: no finish, no [DONE]
    ],
)
def test_mid_stream_faults_are_typed_and_quick(ollama_wire, model, error) -> None:
    backend = LiteLLMBackend(
        f"openai/{model}",
        api_base=f"{ollama_wire.url}/v1",
        timeouts=FAST,
        retry=RetryPolicy(attempts=3, backoff_s=0.01),
    )
    received = []
    started = time.monotonic()
    with pytest.raises(error):
        for chunk in backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=8)):
            received.append(chunk.text)
    assert "".join(received) == "Hello", "the text before the fault reached the caller"
    assert time.monotonic() - started < 4


def test_a_web_page_at_the_address_is_said_to_be_one(ollama_wire) -> None:
    """A web server answering 200 with HTML read "closed in the middle of the reply" (issue 23, defect 12)."""
    backend = LiteLLMBackend("openai/fault-html", api_base=f"{ollama_wire.url}/v1", timeouts=FAST)
    with pytest.raises(ProviderProtocolError) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=8)))
    said = str(err.value)
    assert "not with an OpenAI-compatible stream" in said and "check the address" in said
    assert "closed in the middle" not in said


def test_litellm_embedder_over_openai_compatible_http(ollama_wire) -> None:
    """The LiteLLM embedder against a loopback /v1/embeddings (served by the bundled e5 model)."""
    import numpy as np

    from nexus_ark.providers.embedders import LiteLLMEmbedder, default_embedder

    embedder = LiteLLMEmbedder("openai/e5-small", api_base=f"{ollama_wire.url}/v1")
    assert embedder.model_id == "litellm:openai/e5-small" and embedder.dim == 384
    remote = embedder.embed_passages(["The ferry leaves at nine.", "桜が咲きました。"])
    local = default_embedder().embed_passages(["The ferry leaves at nine.", "桜が咲きました。"])
    assert remote.shape == (2, 384)
    assert np.allclose(remote, local, atol=1e-5), "the same vectors arrive over HTTP"


def test_litellm_embedder_is_built_offline_and_a_down_server_is_a_typed_error() -> None:
    from nexus_ark.providers.embedders import make_embedder

    base = f"http://127.0.0.1:{free_port()}/v1"
    embedder = make_embedder("litellm:openai/e5-small", api_base=base)  # nothing listens: no error yet
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError) as err:
        embedder.embed_query("hello")
    assert base in str(err.value)
    assert "[embedder]" in err.value.hint and "persona" not in err.value.hint
    assert time.monotonic() - started < 10
