"""The approval card: a persona's turn (on its own thread) asks, the card shows who wants what with which
arguments, and the person's button is the answer the turn gets; Stop or closing answers no; the UI thread
never waits on itself."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from nexus_ark.mcp_tools.faults import ToolInfo
from nexus_ark.mcp_tools.offer import ApprovalRequest
from ui.chat.tool_approval import ApprovalCard, ToolApprovals
from ui.util import i18n

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")  # offscreen platform, shown pane
WEATHER = ToolInfo("helper", "weather", "Today's weather in a city.", {"type": "object"})


PANES: list[QWidget] = []  # kept alive for the test: the card is the pane's child


def _card(qtbot) -> ApprovalCard:
    """The card inside a conversation pane, as the window holds it (not a window of its own)."""
    pane = QWidget()
    qtbot.addWidget(pane)
    PANES.append(pane)
    card = ApprovalCard(pane)
    QVBoxLayout(pane).addWidget(card)
    pane.show()
    return card


def _ask_on_a_thread(
    approvals: ToolApprovals, request: ApprovalRequest
) -> tuple[threading.Thread, list[str]]:
    answers: list[str] = []
    thread = threading.Thread(target=lambda: answers.append(approvals.ask(request)))
    thread.start()
    return thread, answers


def test_the_card_shows_the_request_and_the_button_pressed_is_the_answer(qtbot) -> None:
    i18n.set_language("en")
    card = _card(qtbot)
    approvals = ToolApprovals(card)
    thread, answers = _ask_on_a_thread(approvals, ApprovalRequest("Aria", WEATHER, {"city": "Kyoto"}))
    qtbot.waitUntil(lambda: card.request is not None)
    assert card.title.text() == "Aria wants to use the tool weather of the server helper."
    assert card.what.text() == "What it does: Today's weather in a city."
    assert '"city": "Kyoto"' in card.arguments.text()
    qtbot.mouseClick(card.once_button, Qt.MouseButton.LeftButton)
    thread.join(5)
    assert answers == ["once"] and card.request is None


def test_two_requests_are_shown_one_after_the_other_and_stop_denies_what_waits(qtbot) -> None:
    card = _card(qtbot)
    approvals = ToolApprovals(card)
    first, first_answer = _ask_on_a_thread(approvals, ApprovalRequest("Aria", WEATHER, {"city": "Kyoto"}))
    qtbot.waitUntil(lambda: card.request is not None)
    second, second_answer = _ask_on_a_thread(approvals, ApprovalRequest("Aria", WEATHER, {"city": "Osaka"}))
    qtbot.waitUntil(lambda: len(approvals.queue) == 2)
    qtbot.mouseClick(card.always_button, Qt.MouseButton.LeftButton)
    first.join(5)
    assert first_answer == ["always"] and '"city": "Osaka"' in card.arguments.text()
    approvals.deny_all()  # Stop
    second.join(5)
    assert second_answer == ["deny"] and card.request is None


def test_the_ui_thread_and_a_closed_window_get_no_without_waiting(qtbot) -> None:
    card = _card(qtbot)
    approvals = ToolApprovals(card)
    assert approvals.ask(ApprovalRequest("Aria", WEATHER, {})) == "deny"
    approvals.close()
    thread, answers = _ask_on_a_thread(approvals, ApprovalRequest("Aria", WEATHER, {}))
    thread.join(5)
    assert answers == ["deny"]
