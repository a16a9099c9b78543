"""The one tool loop (providers.tools.stream_tool_loop) as chat uses it, on a deterministic native caller.

The caller stands in for a model that calls tools natively, the way Ollama streams one: a request that
offers tools is answered with a tool call, a request after a tool result with a sentence. Over real HTTP
the same paths are covered in tests/integration/test_ollama_backend.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from nexus_ark.agent.session import MAX_TOOL_ROUNDS, ChatSession, ReplyDelta, TurnResult
from nexus_ark.errors import ToolsUnsupportedError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import (
    Capabilities,
    ChatBackend,
    ChatMessage,
    ChatRequest,
    GenerationParams,
    StreamChunk,
    ToolCall,
    ToolSpec,
)
from nexus_ark.providers.tools import ToolBox, ToolLoopResult, ToolUse, stream_tool_loop

ANSWER = "Your cat is called Luna."


class _NativeCaller(ChatBackend):
    """Calls the first offered tool until it has seen `calls_wanted` results, then answers word by word.
    With `refuses`, it rejects any request that carries tools, as Ollama does for a model without them."""

    model_id = "native-caller"

    def __init__(self, *, calls_wanted: int = 1, refuses: bool = False) -> None:
        self.calls_wanted = calls_wanted
        self.refuses = refuses
        self.requests: list[ChatRequest] = []

    def _learn_capabilities(self) -> Capabilities:
        return Capabilities(tools=True)

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        self.requests.append(request)
        if request.tools and self.refuses:
            raise ToolsUnsupportedError("native-caller does not support tools", status=400)
        seen = sum(1 for m in request.messages if m.role == "tool")
        if request.tools and seen < self.calls_wanted:
            call = ToolCall(id=f"call_{seen}", name=request.tools[0].name, arguments={"query": "cat"})
            yield StreamChunk(finish_reason="tool_calls", tool_calls=(call,))
            return
        for i, word in enumerate(ANSWER.split(" ")):
            if request.cancel is not None and request.cancel.is_set():
                yield StreamChunk(finish_reason="cancelled")
                return
            yield StreamChunk(text=word if i == 0 else f" {word}")
        yield StreamChunk(finish_reason="stop")


def _toolbox(log: list[dict], on_call=None) -> ToolBox:
    tools = ToolBox()

    def search(args: dict) -> str:
        log.append(args)
        if on_call is not None:
            on_call()
        return "Mika's cat is Luna"

    tools.add(
        ToolSpec(
            name="search_memory",
            description="Search memory.",
            parameters={"type": "object", "properties": {"query": {"type": "string"}}},
        ),
        search,
    )
    return tools


def _session(tmp_path: Path, backend: ChatBackend) -> ChatSession:
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    return ChatSession(persona, MemoryStore(tmp_path / "m.db"), backend)


def _turn(session: ChatSession, text: str, cancel: threading.Event | None = None) -> tuple[str, TurnResult]:
    *deltas, result = session.send(text, cancel)
    assert isinstance(result, TurnResult) and all(isinstance(d, ReplyDelta) for d in deltas)
    return "".join(d.text for d in deltas), result


def test_loop_streams_text_and_reports_each_tool_use() -> None:
    log: list[dict] = []
    events = list(
        stream_tool_loop(
            _NativeCaller(),
            [ChatMessage(role="user", content="What is my cat called?")],
            _toolbox(log),
            params=GenerationParams(),
        )
    )
    uses = [e for e in events if isinstance(e, ToolUse)]
    texts = [e.text for e in events if isinstance(e, StreamChunk) and e.text]
    assert [(u.call.name, u.call.arguments, u.output) for u in uses] == [
        ("search_memory", {"query": "cat"}, "Mika's cat is Luna")
    ]
    assert len(texts) == len(ANSWER.split(" ")) and "".join(texts) == ANSWER, "streamed word by word"
    first_text = next(e for e in events if isinstance(e, StreamChunk) and e.text)
    assert events.index(uses[0]) < events.index(first_text), "the tool ran before the answer"
    result = events[-1]
    assert isinstance(result, ToolLoopResult)
    assert (result.text, result.turns, result.native, result.hit_turn_limit) == (ANSWER, 2, True, False)
    assert log == [{"query": "cat"}]


def test_chat_turn_streams_the_answer_and_records_the_calls(tmp_path: Path) -> None:
    backend = _NativeCaller()
    session = _session(tmp_path, backend)
    streamed, result = _turn(session, "What is my cat called?")
    assert streamed == ANSWER and result.status == "complete" and not result.error
    [recorded] = result.meta["tool_calls"]
    assert recorded["name"] == "search_memory" and recorded["arguments"] == {"query": "cat"}
    assert recorded["result"], "what the memory tool answered is kept with the reply"
    # The model saw the tool's answer in the round after its call.
    second = backend.requests[1].messages
    assert second[-2].tool_calls and second[-1].role == "tool" and second[-1].name == "search_memory"
    stored = session.memory.messages.recent()[-1]
    assert (stored.content, stored.status) == (ANSWER, "complete")
    assert stored.meta["tool_calls"][0]["name"] == "search_memory"
    session.memory.close()


def test_a_model_that_keeps_calling_tools_is_asked_to_answer_without_them(tmp_path: Path) -> None:
    backend = _NativeCaller(calls_wanted=99)
    session = _session(tmp_path, backend)
    streamed, result = _turn(session, "What is my cat called?")
    assert len(result.meta["tool_calls"]) == MAX_TOOL_ROUNDS
    assert [bool(r.tools) for r in backend.requests] == [True] * MAX_TOOL_ROUNDS + [False]
    assert streamed == ANSWER and result.status == "complete"
    session.memory.close()


def test_tools_a_model_refuses_are_dropped_and_not_offered_again(tmp_path: Path) -> None:
    backend = _NativeCaller(refuses=True)
    session = _session(tmp_path, backend)
    streamed, result = _turn(session, "Hello!")
    assert (streamed, result.status, result.error) == (ANSWER, "complete", "")
    assert [bool(r.tools) for r in backend.requests] == [True, False], "refused once, sent again without"
    _streamed, again = _turn(session, "Hello again!")
    assert again.status == "complete"
    assert [bool(r.tools) for r in backend.requests] == [True, False, False], "remembered for the model"
    assert backend.capabilities().tools is False
    session.memory.close()


def test_stop_during_a_tool_round_ends_the_turn_as_stopped(tmp_path: Path) -> None:
    cancel = threading.Event()
    backend = _NativeCaller()
    session = _session(tmp_path, backend)
    session.turns.tools = lambda **_: _toolbox([], on_call=cancel.set)  # type: ignore[method-assign]
    streamed, result = _turn(session, "What is my cat called?", cancel)
    assert result.status == "stopped" and streamed == ""
    assert len(backend.requests) == 1, "no round after the stop"
    session.memory.close()
