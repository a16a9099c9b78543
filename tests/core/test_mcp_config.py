"""The MCP servers' configuration (the mcpServers JSON other apps write) and the person's decisions per
tool: read as those apps write them, refused naming the file and field, secrets never in the file."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nexus_ark.errors import ConfigError
from nexus_ark.mcp_tools.approvals import decide, load_decisions, may_run
from nexus_ark.mcp_tools.servers import add_servers, describe, parse_servers, read_servers, servers_for

CLAUDE_DESKTOP = {
    "globalShortcut": "Alt+Space",
    "mcpServers": {
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ken/notes"],
        },
        "calendar": {
            "command": "uvx",
            "args": ["calendar-mcp", "--token", "cal-secret-123"],
            "env": {"CALENDAR_API_KEY": "sk-live-abc", "REGION": "jp", "HOME_TOKEN": "${HOME_TOKEN}"},
        },
        "weather": {
            "type": "streamable-http",
            "url": "https://weather.example/mcp",
            "headers": {"Authorization": "Bearer wx-456", "Accept-Language": "ja"},
            "useWhen": "the person asks about the weather",
        },
        "old": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
    },
}


def test_a_claude_desktop_config_reads_with_each_transport_and_its_other_keys_left_alone() -> None:
    servers = parse_servers(json.dumps(CLAUDE_DESKTOP), "claude_desktop_config.json")
    assert sorted(servers) == ["calendar", "files", "old", "weather"]
    assert servers["files"].transport() == "stdio" and servers["files"].args[-1] == "/home/ken/notes"
    assert servers["weather"].transport() == "http" and servers["weather"].use_when.startswith("the person")
    assert servers["old"].transport() == "sse"


class MemoryKeyring:
    def __init__(self) -> None:
        self.saved: dict[str, str] = {}

    def store(self, entry: str, value: str) -> str:
        self.saved[entry] = value
        return f"keyring:nexus-ark/{entry}"


def test_secrets_go_to_the_keyring_and_the_file_keeps_only_references(tmp_path: Path) -> None:
    keyring = MemoryKeyring()
    path = tmp_path / "mcp.json"
    added, moved = add_servers(path, parse_servers(json.dumps(CLAUDE_DESKTOP), "x.json"), keyring.store)
    assert added == ["calendar", "files", "old", "weather"]
    assert sorted(moved) == ["calendar: env.CALENDAR_API_KEY", "weather: headers.Authorization"]
    text = path.read_text(encoding="utf-8")
    assert "sk-live-abc" not in text and "wx-456" not in text
    assert keyring.saved == {
        "mcp/calendar/env/CALENDAR_API_KEY": "sk-live-abc",
        "mcp/weather/headers/Authorization": "Bearer wx-456",
    }
    stored = read_servers(path)
    assert stored["calendar"].env == {
        "CALENDAR_API_KEY": "keyring:nexus-ark/mcp/calendar/env/CALENDAR_API_KEY",
        "REGION": "jp",
        "HOME_TOKEN": "${HOME_TOKEN}",
    }
    assert json.loads(text)["mcpServers"]["weather"]["useWhen"] == "the person asks about the weather"


def test_a_server_as_listed_never_shows_a_secret_given_as_an_argument() -> None:
    servers = parse_servers(json.dumps(CLAUDE_DESKTOP), "x.json")
    line = str(describe("calendar", servers["calendar"]))
    assert "cal-secret-123" not in line and "calendar-mcp --token …" in line


def test_a_persona_server_replaces_the_apps_of_the_same_name_and_disabled_ones_are_left_out(
    tmp_path: Path,
) -> None:
    app_file, persona = tmp_path / "mcp.json", tmp_path / "aria"
    persona.mkdir()
    app_file.write_text(json.dumps({"mcpServers": {"a": {"command": "one"}, "b": {"command": "two"}}}))
    (persona / "mcp.json").write_text(
        json.dumps({"mcpServers": {"a": {"command": "mine"}, "b": {"command": "two", "disabled": True}}})
    )
    merged = servers_for(app_file, persona)
    assert list(merged) == ["a"] and merged["a"][0].command == "mine" and merged["a"][1] == "persona"
    assert list(servers_for(app_file, None)) == ["a", "b"]


def test_decisions_are_ask_by_default_kept_per_tool_and_a_turn_without_the_person_never_asks(
    tmp_path: Path,
) -> None:
    assert load_decisions(tmp_path).decision("weather", "forecast") == "ask"
    decide(tmp_path, "weather:forecast", "always")
    decide(tmp_path, "files:write_file", "never")
    decisions = load_decisions(tmp_path)
    assert decisions.decision("weather", "forecast") == "always"
    assert decisions.decision("files", "write_file") == "never"
    decide(tmp_path, "weather:forecast", "ask")
    assert "weather:forecast" not in (tmp_path / "tools.toml").read_text(encoding="utf-8")
    assert may_run("ask", person_present=True) is None, "the person is asked"
    assert may_run("ask", person_present=False) is False, "a turn the persona started does not run it"
    assert may_run("always", person_present=False) is True
    assert may_run("never", person_present=True) is False


def test_a_broken_tools_file_is_refused_naming_the_file_and_the_tool(tmp_path: Path) -> None:
    (tmp_path / "tools.toml").write_text('[tools]\n"weather:forecast" = "sometimes"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_decisions(tmp_path)
    assert "tools.toml" in str(refused.value) and "weather:forecast" in str(refused.value)
    (tmp_path / "tools.toml").write_text('[tools]\n"no-colon" = "always"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_decisions(tmp_path)
    assert "no-colon" in str(refused.value) and "SERVER:TOOL" in str(refused.value)


def _mutations(rnd: random.Random, seed_text: str) -> str:
    choice = rnd.randrange(6)
    if choice == 0:
        return '{"mcpServers": ' * rnd.randint(500, 3000)
    if choice == 1:
        return seed_text.replace('"jp"', "9" * rnd.randint(4301, 20000))
    if choice == 2:
        cut = rnd.randrange(len(seed_text))
        return seed_text[:cut]
    if choice == 3:
        raw = json.loads(seed_text)
        name = rnd.choice(list(raw["mcpServers"]))
        raw["mcpServers"][name][
            rnd.choice(["command", "args", "env", "url", "headers", "timeoutSeconds"])
        ] = rnd.choice([None, 10**30, -1, [], {}, "", "x" * 10000, [[[]]]])
        return json.dumps(raw)
    if choice == 4:
        data = bytearray(seed_text.encode())
        for _ in range(rnd.randint(1, 8)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        return data.decode("utf-8", "replace")
    return json.dumps({"mcpServers": {f"s{i}": {"command": "x"} for i in range(rnd.randint(0, 3000))}})


def test_mutated_configs_read_or_are_refused_in_words_never_a_traceback() -> None:
    seed_text = json.dumps(CLAUDE_DESKTOP)
    rnd = random.Random(35)
    outcomes = {"read": 0, "refused": 0}
    for _ in range(300):
        text = _mutations(rnd, seed_text)
        try:
            parse_servers(text, "fuzzed.json")
            outcomes["read"] += 1
        except ConfigError as exc:
            assert "fuzzed.json" in str(exc) and len(str(exc)) < 2000
            outcomes["refused"] += 1
    assert outcomes["read"] > 10 and outcomes["refused"] > 100, outcomes
