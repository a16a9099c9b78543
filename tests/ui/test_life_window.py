"""The window while personas live on their own (real SQLite, the runtime on the injectable clock, a scripted
mind): a message written first appears in the open conversation with its reason, unread counts show beside
the persona and clear when the conversation is opened, the inbox lists what was written with why, and a
notification's click opens the conversation."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.life.tray import open_conversation_on_click
from ui.main.main_window import MainWindow
from ui.util import i18n
from ui.util.persona_list import UNREAD_ROLE

NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
# The offscreen platform warns about what it cannot do for a shown window.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate")


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


@pytest.fixture
def window(qtbot, data_dir: Path):
    clock = FixedClock(NOON)
    core = NexusApp(data_dir, clock=clock, backend_factory=lambda config: ScriptedMind()).open()
    i18n.set_language("en")
    for slug in ("aria", "hikari"):  # each persona last heard from the person three days ago
        core.personas.memory(slug).messages.add(
            speaker="user",
            role="user",
            content="Off on a trip!",
            created_at=iso(clock.now() - timedelta(days=3)),
        )
    win = MainWindow(core)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.send_button.isEnabled(), timeout=60_000)
    yield win
    win.close()
    core.close()


def live(core: NexusApp, slug: str) -> None:
    """A scheduler tick for one persona, run to its end (as the app's scheduler would, every minute)."""
    runtime = core.personas.runtime(slug)
    tick(runtime)
    assert runtime.queue.wait_idle(60)
    assert runtime.queue.wait_idle(60)


def list_row(win: MainWindow, slug: str) -> QModelIndex:
    """The persona's row in the list, as the list is now."""
    model = win.persona_list.personas
    row = model.row_of(slug)
    assert row >= 0, slug
    return model.index(row)


def item_text(win: MainWindow, slug: str) -> str:
    return list_row(win, slug).data()


def test_a_message_written_first_appears_in_the_open_conversation_with_its_reason(qtbot, window):
    assert window.current_slug == "aria"
    live(window.app, "aria")
    qtbot.waitUntil(lambda: "wrote first" in window.chat.toPlainText(), timeout=10_000)
    text = window.chat.toPlainText()
    assert "Hi! I was thinking about" in text and "It has been 3 days" in text
    qtbot.waitUntil(
        lambda: window.app.personas.runtime("aria").inbox.unread() == 0, timeout=10_000
    )  # seen: read
    assert "●" not in item_text(window, "aria")


def test_unread_counts_show_beside_another_persona_and_clear_when_its_conversation_opens(qtbot, window):
    live(window.app, "hikari")
    qtbot.waitUntil(lambda: "● 1" in item_text(window, "hikari"), timeout=10_000)
    row = list_row(window, "hikari")
    assert row.data(UNREAD_ROLE) == 1 and row.data(Qt.ItemDataRole.FontRole).bold()
    assert window.life.total() == 1 and "(1)" in window.menus.inbox_action.text()
    qtbot.mouseClick(  # the person clicks Hikari in the list
        window.persona_list.viewport(),
        Qt.MouseButton.LeftButton,
        pos=window.persona_list.visualRect(row).center(),
    )
    qtbot.waitUntil(lambda: window.ready and window.current_slug == "hikari", timeout=30_000)
    qtbot.waitUntil(lambda: window.app.personas.runtime("hikari").inbox.unread() == 0, timeout=10_000)
    assert "●" not in item_text(window, "hikari") and window.life.total() == 0
    row = list_row(window, "hikari")
    assert row.data(UNREAD_ROLE) == 0 and row.data(Qt.ItemDataRole.FontRole) is None
    # The history (read on its own thread) shows it with its reason.
    qtbot.waitUntil(lambda: "wrote first" in window.chat.toPlainText(), timeout=10_000)


def test_the_inbox_lists_what_was_written_with_why_and_opens_the_conversation(qtbot, window):
    live(window.app, "hikari")
    qtbot.waitUntil(lambda: window.life.total() == 1, timeout=10_000)
    window.life.show_inbox()
    inbox = window.life.inbox_window
    qtbot.waitUntil(lambda: inbox.tree.topLevelItemCount() == 1, timeout=10_000)
    item = inbox.tree.topLevelItem(0)
    assert item.text(0) == "ひかり" and item.font(0).bold() and "3" in item.text(3)
    inbox.tree.itemActivated.emit(item, 0)
    qtbot.waitUntil(lambda: window.current_slug == "hikari" and window.ready, timeout=30_000)
    qtbot.waitUntil(lambda: window.app.personas.runtime("hikari").inbox.unread() == 0, timeout=10_000)


def test_a_notification_click_from_another_thread_opens_that_conversation(qtbot, window):
    window.hide()
    clicked = open_conversation_on_click("hikari")
    thread = threading.Thread(target=clicked)  # the notifier calls back on its own thread
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: window.isVisible() and window.current_slug == "hikari", timeout=10_000)


def test_typing_in_the_box_holds_autonomy_back(qtbot, window):
    window.input.setPlainText("I was just about to say")
    assert window.app.personas.runtime("aria").typing
    live(window.app, "aria")
    assert (
        window.app.personas.runtime("aria").inbox.unread() == 0
        and "wrote first" not in window.chat.toPlainText()
    )
    window.input.clear()
    assert not window.app.personas.runtime("aria").typing


def test_a_clicked_notification_brings_its_persona_and_an_unknown_one_changes_nothing(qtbot, window):
    qtbot.waitUntil(lambda: window.persona_list.personas.rowCount() == 2, timeout=10_000)  # read on a worker
    window.show_conversation("hikari")  # what a click on hikari's desktop notification does
    qtbot.waitUntil(lambda: window.current_slug == "hikari" and window.ready, timeout=60_000)
    window.show_conversation("gone")  # a persona deleted since its notification was shown
    assert window.current_slug == "hikari"
