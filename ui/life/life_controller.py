"""What the window does for the personas' lives between conversations: messages they write first arrive
(in the open conversation with their reason, or as unread counts in the persona list and the tray badge),
the inbox, the tray's pause, and telling the runtime when the person is typing.

Everything that reads or writes memory runs on workers (ui/util/tasks.py); the core's events come through
ui/util/core_events.py on the UI thread.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QPlainTextEdit, QWidget
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.soul.records import SoulProposal
from ui.life.inbox_window import InboxWindow
from ui.life.tray import Tray, open_conversation_on_click
from ui.util.core_events import APP_TOPICS, SOUL_TOPICS, CoreEvents
from ui.util.i18n import tr
from ui.util.open_persona import OpenPersona
from ui.util.persona_list import PersonaList
from ui.util.reasons import why_line
from ui.util.tasks import run_in_background, while_open

log = logging.getLogger(__name__)


class Conversation(Protocol):
    """The chat view, as far as this needs it (ui/chat is a sibling: not imported)."""

    def add_message(
        self,
        who: str,
        role: str,
        text: str,
        *,
        timestamp: str | None = None,
        status: str = "complete",
        why: str = "",
        message_id: int | None = None,
        version_ids: list[int] | None = None,
    ) -> None: ...

    def window(self) -> QWidget: ...


class LifeController(QObject):
    """Drives the widgets it is given; what it wants of the window it asks by signal."""

    open_requested = Signal(str)  # the inbox's "open this conversation"

    def __init__(
        self,
        app: NexusApp,
        shown: OpenPersona,
        *,
        chat: Conversation,
        persona_list: PersonaList,
        message_input: QPlainTextEdit,
        inbox_action: QAction,
        tray: Tray | None,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.shown = shown
        self.chat = chat
        self.persona_list = persona_list
        self.input = message_input
        self.inbox_action = inbox_action
        self.tray = tray
        self.unread: dict[str, int] = {}
        self.waiting = 0  # proposals to change a soul that wait for the person (in the inbox too)
        self._waiting_reads = 0
        self.inbox_window: InboxWindow | None = None
        # A click on a notification opens that conversation.
        app.life.notifications.notification_click = open_conversation_on_click
        self.events = CoreEvents(app.events, None, (*APP_TOPICS, *SOUL_TOPICS), parent=self)
        self.events.happened.connect(self._on_event)
        message_input.textChanged.connect(self._typing)
        if tray is not None:
            tray.pause_toggled.connect(app.life.set_paused)

    def start(self) -> None:
        """Wake every persona (on a worker: each opens its memory) and start the scheduler; the unread
        counts come back when they are open. The real app calls this; tests drive the ticks themselves."""

        def wake() -> dict[str, int]:
            self.app.personas.open_all()
            self.app.life.start()
            return self.app.life.unread_counts()

        def woken(counts: dict[str, int]) -> None:
            self._counts(counts)
            self.count_waiting()

        run_in_background(wake, woken, lambda message: log.warning("personas not woken: %s", message))

    def count_waiting(self) -> None:
        """How many proposals to change a soul wait for the person (on a worker; the newest read wins)."""
        self._waiting_reads += 1
        token, app = self._waiting_reads, self.app

        def counted(count: int) -> None:
            if token == self._waiting_reads:
                self.waiting = count
                self.apply()

        run_in_background(
            lambda: len(app.souls.open_proposals()),
            counted,
            lambda message: log.warning("soul proposals not counted: %s", message),
        )

    # -- events -----------------------------------------------------------------------------------
    def _on_event(self, topic: str, payload: dict[str, Any]) -> None:
        if topic in SOUL_TOPICS:
            self.count_waiting()
            return
        if topic != "autonomous_message":
            return
        slug = payload["persona"]
        shown = slug == self.shown.slug and self.shown.idle()
        if shown:
            self.chat.add_message(
                self.shown.name,
                "assistant",
                payload["text"],
                timestamp=(payload.get("reason") or {}).get("time"),  # when it was written, not now
                why=why_line(payload.get("reason") or {}),
                message_id=payload["message_id"],
                version_ids=[payload["message_id"]],
            )
        window = self.chat.window()  # the top-level window the conversation is in
        if shown and window.isVisible() and not window.isMinimized():
            self.mark_read(slug, [payload["message_id"]])
        else:
            self.unread[slug] = int(payload.get("unread", self.unread.get(slug, 0) + 1))
            self.apply()
        self._reload_inbox()

    def _counts(self, counts: dict[str, int]) -> None:
        self.unread.update(counts)
        if self.shown.slug and self.unread.get(self.shown.slug):
            self.mark_read(self.shown.slug)  # the conversation on screen shows them
        self.apply()

    def mark_read(self, slug: str, message_ids: list[int] | None = None) -> None:
        """The person sees this conversation: its messages written first are read."""
        if message_ids is None:
            self.unread[slug] = 0
            self.apply()
        if self.app.personas.runtime_if_open(slug) is None:
            return
        run_in_background(
            lambda: self.app.life.mark_read(slug, message_ids),
            lambda _: self._reload_inbox(),
            lambda message: log.warning("could not mark read: %s", message),
        )

    # -- what the person sees -----------------------------------------------------------------------
    def total(self) -> int:
        return sum(self.unread.values())

    def apply(self) -> None:
        """Unread counts beside the personas' names and on the tray icon; the inbox's menu item counts the
        proposals waiting there too."""
        self.persona_list.show_unread(self.unread)
        total = self.total()
        if self.tray is not None:
            self.tray.set_unread(total)
        inbox = total + self.waiting
        self.inbox_action.setText(tr("Inbox ({count})…", count=inbox) if inbox else tr("Inbox…"))

    def _reload_inbox(self) -> None:
        if self.inbox_window is not None and self.inbox_window.isVisible():
            self.inbox_window.reload()

    def show_inbox(self) -> None:
        names = self.persona_list.names()
        if self.inbox_window is None:
            self.inbox_window = InboxWindow(self.app, names, self.chat.window())
            self.inbox_window.open_requested.connect(self.open_requested)
        else:
            self.inbox_window.names = names
            self.inbox_window.reload()
        self.inbox_window.show()
        self.inbox_window.raise_()

    def review_proposal(self, slug: str, proposal_id: int) -> None:
        """A soul proposal's notification clicked: the inbox, and the proposal's review over it (read on a
        worker; one decided meanwhile stays in the inbox's history and opens nothing)."""
        self.show_inbox()
        inbox = self.inbox_window
        app = self.app

        def found(proposal: SoulProposal) -> None:
            if proposal.state == "open" and inbox is not None and isValid(inbox):
                inbox.review(slug, proposal)

        run_in_background(
            lambda: app.souls.proposal(slug, proposal_id),
            while_open(self.chat.window(), found),
            lambda message: log.warning("soul proposal %s of %s not opened: %s", proposal_id, slug, message),
        )

    def _typing(self) -> None:
        runtime = self.app.personas.runtime_if_open(self.shown.slug)
        if runtime is not None:  # a float set: cheap enough for every keystroke
            runtime.set_typing(bool(self.input.toPlainText().strip()))
