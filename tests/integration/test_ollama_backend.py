"""The Ollama backend through the real ollama client, against a loopback server speaking Ollama's wire format.

No Ollama binary can be installed on this machine: tests/integration/wire_server.py speaks the documented
/api/tags, /api/show, /api/chat (NDJSON) and /api/embed routes, with replies from the real bundled model and
vectors from the bundled e5, and refuses tools for a model without them as real Ollama does.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from nexus_ark.agent.session import ChatSession, TurnResult
from nexus_ark.errors import (
    ModelNotInstalledError,
    ProviderHTTPError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.schemas import EMOTION_VALUES
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatMessage, GenerationParams, ToolSpec
from nexus_ark.providers.ollama_backend import OllamaBackend
from nexus_ark.providers.stream_guard import RetryPolicy, Timeouts
from nexus_ark.providers.tools import ToolBox, run_tool_loop
from tests.integration.conftest import free_port
from tests.integration.structured_checks import read_emotion
from tests.integration.wire_server import CAPABILITIES, EMBED_MODEL, NO_TOOLS_MODEL, SERVED_MODEL, WireServer

pytestmark = pytest.mark.integration
FAST = Timeouts(connect_s=2, first_token_s=10, between_tokens_s=1)


def _ask(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


def test_lists_installed_models(ollama_wire) -> None:
    models = OllamaBackend(SERVED_MODEL, ollama_wire.url).list_models()
    assert [m.name for m in models] == list(CAPABILITIES)
    served = next(m for m in models if m.name == SERVED_MODEL)
    assert (served.parameter_size, served.size_bytes) == ("135M", 98_000_000)


def test_streams_a_real_reply(ollama_wire) -> None:
    backend = OllamaBackend(SERVED_MODEL, ollama_wire.url)
    backend.ensure_ready()
    chunks = list(backend.stream_chat(_ask("Name a fruit."), GenerationParams(max_tokens=24, seed=3)))
    assert sum(1 for c in chunks if c.text) >= 2
    assert chunks[-1].finish_reason in ("stop", "length")
    sent = ollama_wire.requests[-1]
    assert sent["stream"] is True and sent["options"]["num_predict"] == 24 and sent["options"]["seed"] == 3


def test_structured_output_uses_format_schema(ollama_wire) -> None:
    backend = OllamaBackend(SERVED_MODEL, ollama_wire.url)
    reading = read_emotion(backend, "My grandmother passed away last night.")
    assert EMOTION_VALUES[reading.emotion] < 0, f"a bereavement read as {reading.emotion}"
    sent = ollama_wire.requests[-1]
    assert sent["format"]["properties"]["emotion"]["enum"][0] == "joy", "the schema went as `format`"


def test_native_tool_call_round_trip(ollama_wire) -> None:
    backend = OllamaBackend("tool-caller", ollama_wire.url)
    tools = ToolBox()
    seen = []
    tools.add(
        ToolSpec(
            name="search_memory",
            description="Search memory.",
            parameters={"type": "object", "properties": {"query": {"type": "string"}}},
        ),
        lambda args: seen.append(args) or "Luna is the user's cat",
    )
    result = run_tool_loop(
        backend, _ask("What is my cat called?"), tools, params=GenerationParams(max_tokens=32)
    )
    assert result.native and seen == [{"query": "cats"}]
    assert result.text == "The tool said: Luna is the user's cat"
    assert ollama_wire.requests[-1]["messages"][-1] == {
        "role": "tool",
        "content": "Luna is the user's cat",
        "tool_name": "search_memory",
    }


def test_embeddings_carry_meaning(ollama_wire) -> None:
    import numpy as np

    ferry, boat, tax = np.array(
        OllamaBackend(EMBED_MODEL, ollama_wire.url).embed(
            ["The ferry leaves at nine.", "When does the boat depart?", "I filed my tax return."]
        )
    )
    assert ferry.shape == (384,)
    assert ferry @ boat > ferry @ tax + 0.05, "a paraphrase is nearer than an unrelated sentence"


def test_model_not_installed_says_how_to_install(ollama_wire) -> None:
    backend = OllamaBackend("qwen2.5:7b", ollama_wire.url)
    with pytest.raises(ModelNotInstalledError) as err:
        backend.ensure_ready()
    assert "qwen2.5:7b" in str(err.value) and "ollama pull qwen2.5:7b" in str(err.value)
    with pytest.raises(ModelNotInstalledError):
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))


def test_server_down_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    backend = OllamaBackend(SERVED_MODEL, url, timeouts=FAST, retry=RetryPolicy(attempts=2, backoff_s=0.01))
    with pytest.raises(ProviderUnavailableError) as err:
        backend.ensure_ready()
    assert f"Ollama is not running at {url}" in str(err.value)
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError):
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))
    assert time.monotonic() - started < 5


def test_http_500_is_retried_then_typed(ollama_wire) -> None:
    before = len(ollama_wire.requests)
    backend = OllamaBackend(
        "fault-500", ollama_wire.url, timeouts=FAST, retry=RetryPolicy(attempts=3, backoff_s=0.01)
    )
    with pytest.raises(ProviderHTTPError) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))
    assert err.value.status == 500 and err.value.transient
    assert len(ollama_wire.requests) - before == 3, "a transient error is retried, up to the attempt limit"


def test_retries_stay_within_the_wait_for_the_first_token(ollama_wire) -> None:
    """A server that never sends the first word: three attempts took three times first_token_s while the
    message named one (issue 23, defect 11). The person's wait is the budget, retries included."""
    backend = OllamaBackend(
        "fault-silent",
        ollama_wire.url,
        timeouts=Timeouts(connect_s=2, first_token_s=1, between_tokens_s=1),
        retry=RetryPolicy(attempts=3, backoff_s=0.01),
    )
    started = time.monotonic()
    with pytest.raises(ProviderTimeoutError) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))
    waited = time.monotonic() - started
    assert "sent nothing for 1 s while waiting for the first token" in str(err.value)
    # Three attempts of 1 s each took 3 s; the margin is for a loaded machine.
    assert waited < 2.5, f"waited {waited:.1f} s for a first token promised within 1 s"


def test_a_web_page_at_the_address_is_said_to_be_one(ollama_wire) -> None:
    """A web server answering 200 with HTML read as a malformed stream chunk (issue 23, defect 12)."""
    backend = OllamaBackend("fault-html", ollama_wire.url, timeouts=FAST)
    with pytest.raises(ProviderProtocolError) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=4)))
    said = str(err.value)
    assert f"Ollama at {ollama_wire.url} answered with a web page" in said and "check the address" in said


@pytest.mark.parametrize(
    ("model", "error", "words"),
    [
        ("fault-stall", ProviderTimeoutError, "sent nothing for 1 s"),
        ("fault-malformed", ProviderProtocolError, "malformed stream chunk"),
        ("fault-disconnect", ProviderProtocolError, "closed in the middle"),
    ],
)
def test_mid_stream_faults_keep_the_partial_reply(ollama_wire, tmp_path: Path, model, error, words) -> None:
    backend = OllamaBackend(
        model, ollama_wire.url, timeouts=FAST, retry=RetryPolicy(attempts=3, backoff_s=0.01)
    )
    started = time.monotonic()
    with pytest.raises(error) as err:
        list(backend.stream_chat(_ask("hi"), GenerationParams(max_tokens=8), threading.Event()))
    assert words in str(err.value)
    assert time.monotonic() - started < 4, "no hang past the timeout, and no retry after the first token"

    persona = PersonaStore(tmp_path / "p").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    result = next(r for r in ChatSession(persona, memory, backend).send("hi") if isinstance(r, TurnResult))
    assert result.status == "error" and result.text == "Hello" and words in result.error
    stored = memory.messages.recent()[-1]
    assert (stored.content, stored.status) == ("Hello", "error")


def test_cancel_mid_stream(ollama_wire) -> None:
    backend = OllamaBackend(SERVED_MODEL, ollama_wire.url)
    cancel = threading.Event()
    texts = []
    for chunk in backend.stream_chat(
        _ask("Write a long story about a fox."), GenerationParams(max_tokens=200), cancel
    ):
        if chunk.text:
            texts.append(chunk.text)
            cancel.set()
        last = chunk
    assert last.finish_reason == "cancelled" and len(texts) <= 3


MEMORIES = [
    "The ferry to the island leaves at nine in the morning.",
    "Mika's sister Hana is a nurse in Osaka.",
    "The user is allergic to peanuts.",
    "We planted tomatoes and basil on the balcony.",
    "The user's laptop battery died during the meeting.",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What time does the boat depart?", 0),
        ("Which food must the user avoid?", 2),
        ("What do we grow at home?", 3),
    ],
)
def test_ollama_embedder_recall_finds_a_paraphrase(ollama_wire, tmp_path: Path, query, expected) -> None:
    from nexus_ark.memory.archive import NewItem
    from nexus_ark.providers.embedders import OllamaEmbedder

    embedder = OllamaEmbedder(EMBED_MODEL, ollama_wire.url)
    memory = MemoryStore(tmp_path / "m.db")
    try:
        for text in MEMORIES:
            memory.archive.add(NewItem(kind="message", text=text))
        assert memory.archive.embed_pending(embedder) == len(MEMORIES)
        assert embedder.model_id == f"ollama:{EMBED_MODEL}" and embedder.dim == 384
        hits = memory.archive.search(query, embedder, k=3, mode="vector")
        assert hits[0].text == MEMORIES[expected], [h.text for h in hits]
    finally:
        memory.close()


def test_embedder_is_built_offline_and_a_down_server_names_the_embedder_setting() -> None:
    from nexus_ark.providers.embedders import make_embedder

    url = f"http://127.0.0.1:{free_port()}"
    embedder = make_embedder(f"ollama:{EMBED_MODEL}", api_base=url)  # nothing listens: no error yet
    assert embedder.model_id == f"ollama:{EMBED_MODEL}"
    with pytest.raises(ProviderUnavailableError) as err:
        embedder.embed_query("hello")
    assert f"Ollama is not running at {url}" in str(err.value)
    assert "[embedder]" in err.value.hint and "persona" not in err.value.hint


def test_stand_in_refuses_tools_like_real_ollama(ollama_wire) -> None:
    """The loopback server answers as real Ollama does when tools go to a model without them."""
    import json
    import urllib.error
    import urllib.request

    body = {
        "model": NO_TOOLS_MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "t", "description": "", "parameters": {}}}],
    }
    url = f"{ollama_wire.url}/api/chat"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 400
    assert json.loads(err.value.read()) == {
        "error": f"registry.ollama.ai/library/{NO_TOOLS_MODEL} does not support tools"
    }


def test_capabilities_are_asked_of_the_server(ollama_wire) -> None:
    assert OllamaBackend(NO_TOOLS_MODEL, ollama_wire.url).capabilities().tools is False
    assert OllamaBackend("tool-caller", ollama_wire.url).capabilities().tools is True
    shown = [r for r in ollama_wire.requests if r["path"] == "/api/show"]
    assert {r["model"] for r in shown} >= {NO_TOOLS_MODEL, "tool-caller"}


def _chat_requests(server: WireServer, model: str, since: int) -> list[dict]:
    return [r for r in server.requests[since:] if r["path"] == "/api/chat" and r["model"] == model]


def test_persona_on_a_model_without_tools_answers(ollama_wire, tmp_path: Path) -> None:
    persona = PersonaStore(tmp_path / "p").create("Aria")
    assert persona.settings.conversation.tools, "memory tools are on by default"
    memory = MemoryStore(tmp_path / "m.db")
    backend = OllamaBackend(NO_TOOLS_MODEL, ollama_wire.url)
    backend.ensure_ready()
    before = len(ollama_wire.requests)
    session = ChatSession(persona, memory, backend)
    result = next(r for r in session.send("Hello!") if isinstance(r, TurnResult))
    assert result.status == "complete" and result.text and not result.error
    sent = _chat_requests(ollama_wire, NO_TOOLS_MODEL, before)
    assert len(sent) == 1 and not sent[0].get("tools"), "no tools offered, so no refusal"
    assert memory.messages.recent()[-1].content == result.text
    memory.close()


def test_a_server_that_refuses_tools_anyway_is_answered_without_them(shared_llama, tmp_path: Path) -> None:
    """An Ollama that does not list capabilities still refuses tools: the turn is sent again without them,
    and the model is not offered tools again."""
    persona = PersonaStore(tmp_path / "p").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    with WireServer(shared_llama, list_capabilities=False) as old:
        session = ChatSession(persona, memory, OllamaBackend(NO_TOOLS_MODEL, old.url))
        first = next(r for r in session.send("Hello!") if isinstance(r, TurnResult))
        second = next(r for r in session.send("How are you?") if isinstance(r, TurnResult))
        sent = _chat_requests(old, NO_TOOLS_MODEL, 0)
    assert (first.status, first.error) == ("complete", "") and first.text
    assert (second.status, second.error) == ("complete", "") and second.text
    assert [bool(r.get("tools")) for r in sent] == [True, False, False]
    memory.close()


def test_chat_turn_uses_memory_tools_natively(ollama_wire, tmp_path: Path) -> None:
    from nexus_ark.memory.conversation_index import Turn, index_turns

    persona = PersonaStore(tmp_path / "p").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    index_turns(
        memory.archive,
        [
            Turn(
                speaker="Mika",
                text="Our cats are called Luna and Sol.",
                created_at="2026-01-01T10:00:00",
                source_id="cats",
            )
        ],
    )
    backend = OllamaBackend("tool-caller", ollama_wire.url)
    session = ChatSession(persona, memory, backend)
    result = next(r for r in session.send("What are my cats called?") if isinstance(r, TurnResult))
    assert result.status == "complete"
    assert result.text.startswith("The tool said: [item") and "Luna and Sol" in result.text
    assert result.meta["tool_calls"][0]["name"] == "search_memory"
    assert result.meta["tool_calls"][0]["arguments"] == {"query": "cats"}
    offered = [r for r in ollama_wire.requests if r.get("model") == "tool-caller"][-2]
    assert {t["function"]["name"] for t in offered["tools"]} >= {"search_memory", "archive_memory"}
    stored = memory.messages.recent()[-1]
    assert stored.content == result.text and stored.meta["tool_calls"]
    memory.close()


def test_tools_can_be_turned_off_per_persona(ollama_wire, tmp_path: Path) -> None:
    persona = PersonaStore(tmp_path / "p").create("Aria")
    persona.settings.conversation.tools = False
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(persona, memory, OllamaBackend("tool-caller", ollama_wire.url))
    before = len(ollama_wire.requests)
    list(session.send("Hello?"))
    assert "tools" not in ollama_wire.requests[before] or not ollama_wire.requests[before]["tools"]
    memory.close()
