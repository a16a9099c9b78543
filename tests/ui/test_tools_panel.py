"""Settings → Tools, driven as a person would, against the real MCP test server
(tests/integration/mcp_test_server.py): its tools listed, a decision per tool for a persona kept in
tools.toml, servers added by pasting the mcpServers JSON and removed again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from nexus_ark.app import NexusApp
from nexus_ark.mcp_tools.approvals import load_decisions
from ui.settings.settings_dialog import SettingsDialog
from ui.util import i18n

SERVER = Path(__file__).resolve().parents[1] / "integration" / "mcp_test_server.py"
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")  # offscreen platform


@pytest.fixture
def dialog(qtbot, tmp_path: Path):
    i18n.set_language("en")
    app = NexusApp(tmp_path / "data").open()
    server = {"command": sys.executable, "args": [str(SERVER)], "useWhen": "the weather or sums"}
    (app.layout.root / "mcp.json").write_text(json.dumps({"mcpServers": {"test": server}}), encoding="utf-8")
    dialog = SettingsDialog(app, current_persona="aria")
    qtbot.addWidget(dialog)
    dialog.show()
    yield dialog
    dialog.close()
    app.close()


def _tools_listed(dialog: SettingsDialog) -> dict[str, list[str]]:
    tree = dialog.tools.tree
    return {
        tree.topLevelItem(i).text(0): [
            tree.topLevelItem(i).child(j).text(0) for j in range(tree.topLevelItem(i).childCount())
        ]
        for i in range(tree.topLevelItemCount())
    }


def test_the_tools_tab_lists_a_servers_tools_and_keeps_a_decision_per_persona(
    qtbot, dialog: SettingsDialog
) -> None:
    dialog.tabs.setCurrentWidget(dialog.tools)
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Tools"
    qtbot.waitUntil(lambda: "weather" in _tools_listed(dialog).get("test", []), timeout=60_000)
    assert dialog.tools.persona() == "aria", "it opens on the persona the window shows"
    box = dialog.tools.findChild(QComboBox, "decision:test:weather")
    assert box is not None and box.isEnabled() and box.currentText() == "Ask every time"
    box.setCurrentIndex(box.findData("always"))
    folder = dialog.app.personas.store.load("aria").folder
    qtbot.waitUntil(lambda: load_decisions(folder).decision("test", "weather") == "always", timeout=10_000)

    dialog.tools.scope.setCurrentIndex(0)  # every persona: decisions are a persona's
    qtbot.waitUntil(
        lambda: dialog.tools.findChild(QComboBox, "decision:test:weather") is not None, timeout=60_000
    )
    qtbot.waitUntil(
        lambda: not dialog.tools.findChild(QComboBox, "decision:test:weather").isEnabled(), timeout=60_000
    )


def test_pasting_a_config_adds_its_server_and_remove_takes_it_away(qtbot, dialog: SettingsDialog) -> None:
    dialog.tabs.setCurrentWidget(dialog.tools)
    qtbot.waitUntil(lambda: "test" in _tools_listed(dialog), timeout=60_000)
    pasted = {"mcpServers": {"second": {"command": sys.executable, "args": [str(SERVER)]}}}
    dialog.tools.paste(json.dumps(pasted))
    qtbot.waitUntil(lambda: "add" in _tools_listed(dialog).get("second", []), timeout=60_000)
    stored = json.loads(
        (dialog.app.personas.store.load("aria").folder / "mcp.json").read_text(encoding="utf-8")
    )
    assert list(stored["mcpServers"]) == ["second"], "pasted into the persona chosen above"

    tree = dialog.tools.tree
    second = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "second"
    )
    tree.setCurrentItem(second.child(0))
    assert dialog.tools.remove_button.isEnabled()
    dialog.tools.remove_selected()
    qtbot.waitUntil(lambda: "second" not in _tools_listed(dialog), timeout=60_000)


def test_a_broken_paste_says_what_is_wrong_and_adds_nothing(qtbot, dialog: SettingsDialog) -> None:
    dialog.tabs.setCurrentWidget(dialog.tools)
    qtbot.waitUntil(lambda: "test" in _tools_listed(dialog), timeout=60_000)
    dialog.tools.paste('{"mcpServers": {"x": {"args": []}}}')
    qtbot.waitUntil(lambda: "command" in dialog.status.text(), timeout=10_000)
    assert "the pasted text" in dialog.status.text()
    assert not (dialog.app.personas.store.load("aria").folder / "mcp.json").exists()


def test_the_persona_editor_opens_the_tools_of_its_persona(qtbot, tmp_path: Path) -> None:
    from ui.main.main_window import MainWindow
    from ui.personas.persona_editor import PersonaEditor

    i18n.set_language("en")
    app = NexusApp(tmp_path / "data").open()
    window = MainWindow(app)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(
            lambda: window.current_slug == "aria" and window.send_button.isEnabled(), timeout=60_000
        )
        window.openers.edit_persona()
        editor = window.findChild(PersonaEditor)
        assert editor is not None and editor.tools_button.text() == "Tools…"
        qtbot.mouseClick(editor.tools_button, Qt.MouseButton.LeftButton)
        dialog = window.findChild(SettingsDialog)
        assert dialog is not None and dialog.tabs.currentWidget() is dialog.tools
        qtbot.waitUntil(lambda: dialog.tools.persona() == "aria", timeout=30_000)
    finally:
        window.close()
        app.close()
