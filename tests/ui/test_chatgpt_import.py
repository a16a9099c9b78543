"""File > Import a ChatGPT export: the export becomes the open persona's earlier conversations on a worker,
with progress and a Stop that keeps what was read; the person is told how it went, in their language; the
conversation shown stays their own with the persona. Real window, real SQLite, the scripted mind."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QPushButton

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.main.main_window import MainWindow
from ui.memory import chatgpt_actions
from ui.util import i18n

EXPORT = Path(__file__).resolve().parents[1] / "data" / "chatgpt" / "conversations.json"
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate")


@pytest.fixture
def window(qtbot, data_dir: Path):
    core = NexusApp(
        data_dir,
        clock=FixedClock(datetime(2026, 11, 22, 10, 0, tzinfo=UTC)),
        backend_factory=lambda config: ScriptedMind(),
    ).open()
    i18n.set_language("en")
    win = MainWindow(core)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.current_slug == "aria" and win.ready, timeout=60_000)
    yield win
    win.close()
    core.close()
    i18n.set_language("en")


def _result(qtbot, win: MainWindow) -> str:
    def shown() -> list[QMessageBox]:
        return [b for b in win.findChildren(QMessageBox, "chatgpt-result") if b.isVisible()]

    qtbot.waitUntil(lambda: bool(shown()), timeout=60_000)
    box = shown()[0]
    box.hide()
    return box.text()


def _rooms(win: MainWindow) -> dict[str, int]:
    store = win.app.personas.open_memory("aria", read_only=True)
    try:
        return dict(store.db.execute("select room, count(*) from messages group by room"))
    finally:
        store.close()


def _long_export(path: Path, conversations: int) -> Path:
    """A made-up export of many short conversations (a question and its answer each)."""
    made = []
    for i in range(conversations):
        nodes = {"root": {"id": "root", "message": None, "parent": None, "children": [f"u{i}"]}}
        for role, node, parent, child in (
            ("user", f"u{i}", "root", f"a{i}"),
            ("assistant", f"a{i}", f"u{i}", None),
        ):
            nodes[node] = {
                "id": node,
                "message": {
                    "id": node,
                    "author": {"role": role},
                    "create_time": 1_700_000_000 + i * 60 + (role == "assistant") * 10,
                    "content": {"content_type": "text", "parts": [f"{role} line of conversation {i}"]},
                },
                "parent": parent,
                "children": [child] if child else [],
            }
        made.append({"title": f"Day {i}", "id": f"conv-{i:05d}", "mapping": nodes, "current_node": f"a{i}"})
    path.write_text(json.dumps(made), encoding="utf-8")
    return path


def test_an_export_is_imported_with_progress_and_the_conversation_shown_stays_the_persons(qtbot, window):
    shown_before = window.chat.toPlainText()
    chatgpt_actions.ChatGPTImport(window, window.app, "aria", "Aria", EXPORT)
    progress = window.findChild(QProgressDialog, "chatgpt-import")
    assert (
        progress is not None
        and "conversations.json" in progress.labelText()
        and "Aria" in progress.labelText()
    )
    text = _result(qtbot, window)
    assert "9 messages from 3 conversations are now in Aria's memory (0 were there already)" in text
    rooms = _rooms(window)
    assert sum(n for room, n in rooms.items() if room.startswith("chatgpt:")) == 9 and len(rooms) >= 3
    assert window.chat.toPlainText() == shown_before  # the view shows the person's own conversation

    chatgpt_actions.ChatGPTImport(window, window.app, "aria", "Aria", EXPORT)  # again: nothing twice
    assert "0 messages from 3 conversations are now in Aria's memory (9 were there already)" in _result(
        qtbot, window
    )


@pytest.mark.slow
def test_stop_keeps_what_was_read_and_importing_again_finishes_it(qtbot, window, tmp_path: Path):
    export = _long_export(tmp_path / "conversations.json", 3000)
    running = chatgpt_actions.ChatGPTImport(window, window.app, "aria", "Aria", export)
    stop = running.dialog.findChild(QPushButton)
    assert stop is not None and stop.text() == "Stop"
    stop.click()  # at once: the conversation being read is finished, then the import ends
    text = _result(qtbot, window)
    assert "Stopped before the end: import the same file again to finish." in text
    first = sum(n for room, n in _rooms(window).items() if room.startswith("chatgpt:"))
    assert 0 < first < 6000

    chatgpt_actions.ChatGPTImport(window, window.app, "aria", "Aria", export)
    again = _result(qtbot, window)
    assert "Stopped" not in again and f"({first} were there already)" in again
    assert sum(n for room, n in _rooms(window).items() if room.startswith("chatgpt:")) == 6000


def test_in_a_japanese_window_the_import_and_a_broken_file_are_told_in_japanese(
    qtbot, window, tmp_path: Path
):
    window.change_language("ja")
    assert window.menus.import_chatgpt_action.text() == "ChatGPT のエクスポートを読み込む…"
    chatgpt_actions.ChatGPTImport(window, window.app, "aria", "Aria", EXPORT)
    assert "3 件の会話から 9 件のメッセージがAriaの記憶に入りました" in _result(qtbot, window)

    broken = tmp_path / "broken.json"
    broken.write_text('{"not": "a list"}', encoding="utf-8")
    chatgpt_actions.ChatGPTImport(window, window.app, "aria", "Aria", broken)
    text = _result(qtbot, window)
    assert str(broken) in text and "ChatGPT" in text and "is not a ChatGPT export" not in text
