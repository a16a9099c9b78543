"""MCP servers for real: a stdio server written with the `mcp` SDK (tests/integration/mcp_test_server.py),
the same server over streamable HTTP on 127.0.0.1, and the reference servers through npx where Node is
here. Each fault gives a typed notice and leaves the hub working; what reached the server is checked on the
server's side (its call log)."""

from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.mcp_tools.faults import ToolFaultError, ToolInfo
from nexus_ark.mcp_tools.hub import MAX_RESULT_CHARS, McpHub
from nexus_ark.mcp_tools.servers import ServerConfig
from tests.conftest import run_cli

pytestmark = pytest.mark.integration
SERVER = Path(__file__).with_name("mcp_test_server.py")


def _calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def call_log(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


@pytest.fixture
def stdio_server(call_log: Path) -> ServerConfig:
    return ServerConfig(
        command=sys.executable, args=[str(SERVER)], env={"MCP_CALL_LOG": str(call_log)}, timeoutSeconds=4
    )


@pytest.fixture
def hub() -> Iterator[McpHub]:
    hub = McpHub(lambda reference: "")
    yield hub
    hub.close()


def _tools(hub: McpHub, name: str, config: ServerConfig) -> dict[str, ToolInfo]:
    return {tool.name: tool for tool in hub.tools(name, config)}


def test_a_stdio_server_lists_its_tools_runs_one_and_its_stderr_reaches_our_log(
    hub: McpHub, stdio_server: ServerConfig, call_log: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nexus_ark.mcp_tools")
    tools = _tools(hub, "test", stdio_server)
    assert {"add", "weather", "big", "slow", "crash", "garbage"} <= set(tools)
    assert tools["weather"].description == "Today's weather in a city."
    assert tools["add"].input_schema["required"] == ["a", "b"]

    outcome = hub.call("test", stdio_server, tools["add"], {"a": 2, "b": 40})
    assert outcome.text == "42" and not outcome.is_error
    assert _calls(call_log) == [{"tool": "add", "arguments": {"a": 2, "b": 40}}]
    deadline = time.monotonic() + 10
    while "MCP server test: adding 2 and 40" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "MCP server test: adding 2 and 40" in caplog.text
    assert hub.running() == ["test"]


def test_arguments_that_do_not_fit_the_schema_never_reach_the_server(
    hub: McpHub, stdio_server: ServerConfig, call_log: Path
) -> None:
    tools = _tools(hub, "test", stdio_server)
    with pytest.raises(ToolFaultError) as refused:
        hub.call("test", stdio_server, tools["add"], {"a": "two", "b": 3})
    assert refused.value.fault.kind == "schema"
    assert "test:add" in str(refused.value) and "a" in str(refused.value)
    assert _calls(call_log) == [], "the server saw nothing"


def test_a_result_too_large_for_the_prompt_is_cut_saying_so(hub: McpHub, stdio_server: ServerConfig) -> None:
    tools = _tools(hub, "test", stdio_server)
    outcome = hub.call("test", stdio_server, tools["big"], {"characters": 50_000})
    assert outcome.cut_from == 50_000
    assert outcome.text.startswith("x" * MAX_RESULT_CHARS)
    assert f"the result was 50000 characters; the first {MAX_RESULT_CHARS} are shown" in outcome.text


def test_a_hanging_tool_times_out_and_garbage_is_no_answer_and_the_server_still_serves(
    hub: McpHub, stdio_server: ServerConfig
) -> None:
    tools = _tools(hub, "test", stdio_server)
    for tool, arguments in ((tools["slow"], {"seconds": 30}), (tools["garbage"], {})):
        started = time.monotonic()
        with pytest.raises(ToolFaultError) as late:
            hub.call("test", stdio_server, tool, arguments)
        assert late.value.fault.kind == "timeout" and "did not answer within 4 s" in str(late.value)
        assert time.monotonic() - started < 15
    assert hub.call("test", stdio_server, tools["add"], {"a": 1, "b": 1}).text == "2"


def test_a_crash_starts_the_server_again_once_and_a_second_crash_stops_it_for_good(
    hub: McpHub, stdio_server: ServerConfig, call_log: Path
) -> None:
    tools = _tools(hub, "test", stdio_server)
    with pytest.raises(ToolFaultError) as first:
        hub.call("test", stdio_server, tools["crash"], {})
    assert first.value.fault.kind == "crash" and "stopped" in str(first.value)
    assert hub.call("test", stdio_server, tools["add"], {"a": 1, "b": 2}).text == "3", "started again"
    with pytest.raises(ToolFaultError):
        hub.call("test", stdio_server, tools["crash"], {})
    with pytest.raises(ToolFaultError) as given_up:
        hub.call("test", stdio_server, tools["add"], {"a": 1, "b": 2})
    assert given_up.value.fault.kind == "crash" and "stopped twice" in str(given_up.value)
    assert [c["tool"] for c in _calls(call_log)] == ["crash", "add", "crash"]


@pytest.mark.parametrize(
    "config",
    [
        ServerConfig(command="/nonexistent/mcp-server"),
        ServerConfig(command=sys.executable, args=["-c", "import sys; sys.exit(1)"]),
    ],
    ids=["missing-program", "exits-at-once"],
)
def test_a_server_that_cannot_start_is_a_start_fault_in_words(hub: McpHub, config: ServerConfig) -> None:
    with pytest.raises(ToolFaultError) as refused:
        hub.tools("broken", config)
    assert refused.value.fault.kind == "start"
    assert "The tool server broken could not start" in str(refused.value)
    assert "Traceback" not in str(refused.value)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_a_server_over_http_on_loopback(hub: McpHub, call_log: Path, transport: str) -> None:
    """Streamable HTTP, and SSE (the transport older servers still speak)."""
    port = _free_port()
    env = {"MCP_CALL_LOG": str(call_log), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), f"--{transport}", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        path = "/mcp" if transport == "http" else "/sse"
        config = ServerConfig(url=f"http://127.0.0.1:{port}{path}", headers={"X-Test": "yes"}, type=transport)
        tools = _tools(hub, "web", config)
        assert (
            hub.call("web", config, tools["weather"], {"city": "Kyoto"}).text == "Sunny in Kyoto, 21 degrees."
        )
        assert _calls(call_log) == [{"tool": "weather", "arguments": {"city": "Kyoto"}}]
    finally:
        hub.close()
        proc.terminate()
        proc.wait(10)


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("--data-dir", str(data_dir), "tools", *args, timeout=180)


@pytest.mark.slow
def test_the_terminal_imports_a_claude_desktop_config_lists_and_calls_without_a_model(
    tmp_path: Path, call_log: Path
) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(
        json.dumps(
            {
                "globalShortcut": "Ctrl+Space",
                "mcpServers": {
                    "test": {
                        "command": sys.executable,
                        "args": [str(SERVER)],
                        "env": {"MCP_CALL_LOG": str(call_log)},
                        "useWhen": "the weather or sums",
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    data = tmp_path / "data"
    imported = _cli(data, "import", str(config))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split("\t")[0] == "test"

    listed = _cli(data, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (server,) = json.loads(listed.stdout)["servers"]
    assert (
        server["name"] == "test"
        and server["transport"] == "stdio"
        and server["use_when"] == "the weather or sums"
    )
    assert {"add", "weather"} <= {tool["name"] for tool in server["tools"]}

    called = _cli(data, "call", "test:weather", "--args", '{"city": "Osaka"}')
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "Sunny in Osaka, 21 degrees."
    assert _calls(call_log)[-1] == {"tool": "weather", "arguments": {"city": "Osaka"}}

    wrong = _cli(data, "call", "test:add", "--args", '{"a": 1}')
    assert wrong.returncode == 2 and "'b' is a required property" in wrong.stderr and wrong.stdout == ""

    removed = _cli(data, "remove", "test")
    assert removed.returncode == 0 and removed.stdout.strip() == "test"
    assert json.loads(_cli(data, "list", "--json").stdout) == {"servers": []}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"mcpServers": {"x": {"args": ["a"]}}}', "command"),
        ('{"mcpServers": {"x": {"url": "ftp://host"}}}', "http"),
        ('{"mcpServers": {"bad name!": {"command": "x"}}}', "bad name!"),
        ('{"servers": {}}', "mcpServers"),
        ('{"mcpServers": {"x": ', "not valid JSON"),
    ],
    ids=["no-command-or-url", "url-scheme", "server-name", "not-mcp", "broken-json"],
)
def test_a_bad_config_names_its_file_and_field_and_exits_2(tmp_path: Path, text: str, named: str) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(text, encoding="utf-8")
    refused = _cli(tmp_path / "data", "import", str(config))
    assert refused.returncode == 2
    assert str(config) in refused.stderr and named in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (tmp_path / "data" / "mcp.json").exists(), "nothing was added"


NPX = shutil.which("npx")


@pytest.mark.slow
@pytest.mark.skipif(NPX is None, reason="Node's npx is not installed (.ci/run installs it on Debian)")
def test_the_reference_servers_everything_and_filesystem_through_npx(hub: McpHub, tmp_path: Path) -> None:
    """@modelcontextprotocol/server-everything and server-filesystem from the npm registry: the first run
    downloads them (npx caches them afterwards)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "note.txt").write_text("The plum jam recipe needs lemon.", encoding="utf-8")
    everything = ServerConfig(
        command=str(NPX), args=["-y", "@modelcontextprotocol/server-everything"], timeoutSeconds=60
    )
    tools = _tools(hub, "everything", everything)
    assert "echo" in tools
    assert (
        "Hello from Nexus Ark"
        in hub.call("everything", everything, tools["echo"], {"message": "Hello from Nexus Ark"}).text
    )

    files = ServerConfig(
        command=str(NPX),
        args=["-y", "@modelcontextprotocol/server-filesystem", str(shared)],
        timeoutSeconds=60,
    )
    tools = _tools(hub, "files", files)
    reader = tools.get("read_text_file") or tools["read_file"]
    assert "lemon" in hub.call("files", files, reader, {"path": str(shared / "note.txt")}).text
    outside = hub.call("files", files, reader, {"path": "/etc/hostname"})
    assert outside.is_error, "the filesystem server refuses a path outside the folder it was given"
