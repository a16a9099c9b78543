"""How `nexus-ark chat` asks before an MCP tool set to "ask" runs: on a terminal, on stderr, and the answer
typed decides; piped, only the tools named with --allow-tool run and the others are said once on stderr.
stdout (the replies) carries none of it."""

from __future__ import annotations

import io

import pytest

from nexus_ark.cli.tools import terminal_asker
from nexus_ark.mcp_tools.faults import ToolInfo
from nexus_ark.mcp_tools.offer import ApprovalRequest

WEATHER = ApprovalRequest(
    "Aria", ToolInfo("helper", "weather", "Today's weather in a city.", {}), {"city": "Kyoto"}
)


@pytest.mark.parametrize(
    ("typed", "answer"), [("o\n", "once"), ("always\n", "always"), ("d\n", "deny"), ("", "deny")]
)
def test_on_a_terminal_the_answer_typed_decides(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], typed: str, answer: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    assert terminal_asker(set(), interactive=True)(WEATHER) == answer
    out, err = capsys.readouterr()
    assert out == ""
    assert 'Aria wants to run helper:weather (Today\'s weather in a city.) with {"city": "Kyoto"}.' in err
    assert "Allow it? [o]nce, [a]lways, [d]eny:" in err


def test_piped_only_the_tools_allowed_on_the_command_line_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert terminal_asker({"helper:weather"}, interactive=False)(WEATHER) == "once"
    assert terminal_asker(set(), interactive=False)(WEATHER) == "deny"
    out, err = capsys.readouterr()
    assert out == "" and "--allow-tool helper:weather lets it" in err
