"""An MCP tool in the real window: the persona's model (a scripted stand-in that calls the tool when it is
offered) asks to run the weather tool of the real SDK test server; the approval card in the conversation
shows who, which tool of which server, what it does and the arguments; Allow once runs it and the reply uses
what it said; Deny and Stop tell the model no, and the server never hears of it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl

from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from ui.main.main_window import MainWindow
from ui.util import i18n

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")
SERVER = Path(__file__).resolve().parents[1] / "integration" / "mcp_test_server.py"
CALL = '<tool_call>{"name": "helper__weather", "arguments": {"city": "Kyoto"}}</tool_call>'


def _model(messages: Sequence[ChatMessage]) -> str:
    last = messages[-1].content
    if "<tool_result" in last:
        return "The tool said: " + last.split(">", 1)[1].split("</tool_result>")[0]
    return CALL if "helper__weather" in messages[0].content else "No tools here."


@pytest.fixture
def window(qtbot, data_dir: Path, tmp_path: Path) -> Iterator[MainWindow]:
    core = NexusApp(
        data_dir,
        backend_factory=lambda config: ScriptedBackend(_model, text_tools=True, parameters=4_000_000_000),
    ).open()
    log = tmp_path / "calls.jsonl"
    server = {"command": sys.executable, "args": [str(SERVER)], "env": {"MCP_CALL_LOG": str(log)}}
    (core.layout.root / "mcp.json").write_text(
        json.dumps({"mcpServers": {"helper": server}}), encoding="utf-8"
    )
    i18n.set_language("en")
    win = MainWindow(core)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.send_button.isEnabled() and win.current_slug == "aria", timeout=60_000)
    win.call_log = log  # type: ignore[attr-defined]
    yield win
    win.close()
    core.close()


def _ask_about_the_weather(qtbot, window: MainWindow) -> None:
    window.input.setPlainText("What is the weather in Kyoto?")
    window.turns.send_message()
    qtbot.waitUntil(window.tool_approval.isVisible, timeout=60_000)


def _calls(window: MainWindow) -> list[str]:
    log: Path = window.call_log  # type: ignore[attr-defined]
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


def test_the_card_asks_and_allow_once_runs_the_tool_and_the_reply_uses_it(qtbot, window: MainWindow) -> None:
    _ask_about_the_weather(qtbot, window)
    card = window.tool_approval
    assert card.title.text() == "Aria wants to use the tool weather of the server helper."
    assert card.what.text() == "What it does: Today's weather in a city."
    assert '"city": "Kyoto"' in card.arguments.text()
    with qtbot.waitSignal(window.turn_finished, timeout=60_000) as finished:
        qtbot.mouseClick(card.once_button, Qt.MouseButton.LeftButton)
    assert finished.args[0].text == "The tool said: Sunny in Kyoto, 21 degrees."
    assert card.isHidden() and _calls(window) == ["weather"]

    # The call folds into the conversation under the reply: one line, opened with its "show" link.
    qtbot.waitUntil(lambda: "⚙ Used helper:weather — show" in window.chat.toPlainText(), timeout=10_000)
    assert "→ Sunny in Kyoto" not in window.chat.toPlainText()
    window.chat.anchorClicked.emit(QUrl(f"nexus:tools/{finished.args[0].reply_id}"))
    assert 'helper:weather {"city": "Kyoto"} → Sunny in Kyoto, 21 degrees.' in window.chat.toPlainText()
    assert "⚙ Used helper:weather — hide" in window.chat.toPlainText()


def test_deny_and_stop_tell_the_model_no_and_the_server_hears_nothing(qtbot, window: MainWindow) -> None:
    _ask_about_the_weather(qtbot, window)
    with qtbot.waitSignal(window.turn_finished, timeout=60_000) as finished:
        qtbot.mouseClick(window.tool_approval.deny_button, Qt.MouseButton.LeftButton)
    assert "declined to run helper:weather" in finished.args[0].text
    _ask_about_the_weather(qtbot, window)
    with qtbot.waitSignal(window.turn_finished, timeout=60_000):
        qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    assert window.tool_approval.isHidden() and _calls(window) == []
