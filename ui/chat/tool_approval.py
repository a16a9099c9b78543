"""The approval card: before an MCP tool set to "ask" runs, the conversation shows which persona wants to
run it, the server and the tool, what the tool says it does and the arguments as the model wrote them, with
Allow once / Always allow / Deny. The turn waits on the persona's queue thread (never the UI thread) for the
answer; Stop, closing the window or ten minutes without an answer deny it, and the model is told in words.

ToolApprovals is the asker the core calls (app.tools.asker): it hands each request to the UI thread with a
queued signal and waits on an Event; requests arriving together are shown one after another."""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QThread, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from nexus_ark.mcp_tools.offer import Approval, ApprovalRequest
from ui.util.i18n import tr

WAIT_S = 600.0  # an unanswered card is a "no" after this long: a turn never waits forever
ARGUMENTS_SHOWN = 600  # characters of the arguments on the card (all of them in its tooltip)


@dataclass
class Pending:
    request: ApprovalRequest
    answered: threading.Event = field(default_factory=threading.Event)
    answer: Approval = "deny"

    def settle(self, answer: Approval) -> None:
        self.answer = answer
        self.answered.set()


class ApprovalCard(QFrame):
    """The card itself; `answered(answer)` when a button is pressed."""

    answered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolApproval")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel()
        self.title.setObjectName("toolApprovalTitle")
        self.title.setWordWrap(True)
        self.what = QLabel()
        self.what.setWordWrap(True)
        self.arguments = QLabel()
        self.arguments.setObjectName("toolArguments")
        self.arguments.setWordWrap(True)
        self.arguments.setStyleSheet("font-family: monospace;")
        self.once_button = QPushButton()
        self.once_button.setObjectName("allowOnce")
        self.always_button = QPushButton()
        self.always_button.setObjectName("allowAlways")
        self.deny_button = QPushButton()
        self.deny_button.setObjectName("denyTool")
        for button, answer in (
            (self.once_button, "once"),
            (self.always_button, "always"),
            (self.deny_button, "deny"),
        ):
            button.clicked.connect(lambda _c=False, a=answer: self.answered.emit(a))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.deny_button, self.always_button, self.once_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.what)
        layout.addWidget(self.arguments)
        layout.addLayout(buttons)
        self.request: ApprovalRequest | None = None
        self.setVisible(False)

    def show_request(self, request: ApprovalRequest | None) -> None:
        self.request = request
        self.retranslate()
        self.setVisible(request is not None)

    def retranslate(self) -> None:
        self.once_button.setText(tr("Allow once"))
        self.always_button.setText(tr("Always allow"))
        self.deny_button.setText(tr("Deny"))
        request = self.request
        if request is None:
            return
        self.title.setText(
            tr(
                "{persona} wants to use the tool {tool} of the server {server}.",
                persona=request.persona,
                tool=request.tool.name,
                server=request.tool.server,
            )
        )
        self.what.setText(
            tr("What it does: {what}", what=request.tool.description or tr("(the tool does not say)"))
        )
        shown = json.dumps(request.arguments, ensure_ascii=False, indent=1)
        self.arguments.setText(shown if len(shown) <= ARGUMENTS_SHOWN else shown[:ARGUMENTS_SHOWN] + " …")
        self.arguments.setToolTip(shown[:20_000])


class ToolApprovals(QObject):
    """The window's asker: `ask` is called on a persona's queue thread and waits for the card's answer."""

    _arrived = Signal(object)  # a Pending, delivered on the UI thread

    def __init__(self, card: ApprovalCard) -> None:
        super().__init__(card)
        self.card = card
        self.queue: deque[Pending] = deque()
        self._closed = False
        self._arrived.connect(self._show)
        card.answered.connect(lambda answer: self._settle(answer))

    def ask(self, request: ApprovalRequest) -> Approval:
        if QThread.currentThread() is self.thread() or self._closed:
            return "deny"  # the UI thread never waits on itself; a closed window answers no
        pending = Pending(request)
        self._arrived.emit(pending)
        pending.answered.wait(WAIT_S)
        return pending.answer

    def _show(self, pending: Pending) -> None:
        self.queue.append(pending)
        if self.card.request is None:
            self.card.show_request(pending.request)

    def _settle(self, answer: str) -> None:
        if not self.queue:
            return
        self.queue.popleft().settle(
            "once" if answer == "once" else "always" if answer == "always" else "deny"
        )
        self.card.show_request(self.queue[0].request if self.queue else None)

    def deny_all(self) -> None:
        """Stop was pressed, or the persona changed: every waiting request is a no."""
        while self.queue:
            self.queue.popleft().settle("deny")
        self.card.show_request(None)

    def close(self) -> None:
        self._closed = True
        self.deny_all()
