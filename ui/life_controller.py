"""What the window does for the personas' lives between conversations: messages they write first arrive
(in the open conversation with their reason, or as unread counts in the persona list and the tray badge),
the inbox, the tray's pause, and telling the runtime when the person is typing.

Everything that reads or writes memory runs on workers (ui/tasks.py); the core's events come through
ui/core_events.py on the UI thread.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QFont

from nexus_ark.app import NexusApp
from ui.core_events import APP_TOPICS, CoreEvents
from ui.i18n import tr
from ui.inbox_window import InboxWindow, why_line
from ui.tasks import run_in_background
from ui.tray import open_conversation_on_click

if TYPE_CHECKING:
    from ui.main_window import MainWindow

log = logging.getLogger(__name__)


class LifeController(QObject):
    def __init__(self, window: MainWindow, app: NexusApp) -> None:
        super().__init__(window)
        self.window = window
        self.app = app
        self.unread: dict[str, int] = {}
        self.inbox_window: InboxWindow | None = None
        app.notification_click = open_conversation_on_click  # a click opens that conversation
        self.events = CoreEvents(app.events, None, APP_TOPICS, parent=self)
        self.events.happened.connect(self._on_event)
        window.input.textChanged.connect(self._typing)
        if window.tray is not None:
            window.tray.pause_toggled.connect(app.set_autonomy_paused)

    def start(self) -> None:
        """Wake every persona (on a worker: each opens its memory) and start the scheduler; the unread
        counts come back when they are open. The real app calls this; tests drive the ticks themselves."""

        def wake() -> dict[str, int]:
            self.app.open_runtimes()
            self.app.start_life()
            return self.app.unread_counts()

        run_in_background(wake, self._counts, lambda message: log.warning("personas not woken: %s", message))

    def refresh_counts(self) -> None:
        run_in_background(self.app.unread_counts, self._counts, lambda message: log.warning("%s", message))

    # -- events -----------------------------------------------------------------------------------
    def _on_event(self, topic: str, payload: dict[str, Any]) -> None:
        if topic != "autonomous_message":
            return
        slug = payload["persona"]
        window = self.window
        shown = slug == window.current_slug and window._ready and not window.streaming
        if shown:
            window.chat.add_message(
                window.current_name,
                "assistant",
                payload["text"],
                timestamp=(payload.get("reason") or {}).get("time"),  # when it was written, not now
                why=why_line(payload.get("reason") or {}),
                message_id=payload["message_id"],
                version_ids=[payload["message_id"]],
            )
        if shown and window.isVisible() and not window.isMinimized():
            self.mark_read(slug, [payload["message_id"]])
        else:
            self.unread[slug] = int(payload.get("unread", self.unread.get(slug, 0) + 1))
            self.apply()
        self._reload_inbox()

    def _counts(self, counts: dict[str, int]) -> None:
        self.unread.update(counts)
        if self.window.current_slug and self.unread.get(self.window.current_slug):
            self.mark_read(self.window.current_slug)  # the conversation on screen shows them
        self.apply()

    def mark_read(self, slug: str, message_ids: list[int] | None = None) -> None:
        """The person sees this conversation: its messages written first are read."""
        if message_ids is None:
            self.unread[slug] = 0
            self.apply()
        if self.app.runtime_if_open(slug) is None:
            return
        run_in_background(
            lambda: self.app.mark_read(slug, message_ids),
            lambda _: self._reload_inbox(),
            lambda message: log.warning("could not mark read: %s", message),
        )

    # -- what the person sees -----------------------------------------------------------------------
    def total(self) -> int:
        return sum(self.unread.values())

    def apply(self) -> None:
        """Unread counts beside the personas' names, and on the tray icon."""
        plist = self.window.persona_list
        for row in range(plist.count()):
            item = plist.item(row)
            slug = item.data(Qt.ItemDataRole.UserRole)
            count = self.unread.get(slug, 0)
            base = item.text().split("  ●", 1)[0]
            item.setText(f"{base}  ● {count}" if count else base)
            font = QFont(item.font())
            font.setBold(bool(count))
            item.setFont(font)
            if count:
                item.setToolTip(tr("{count} unread messages written first", count=count))
        if self.window.tray is not None:
            self.window.tray.set_unread(self.total())
        total = self.total()
        self.window.inbox_action.setText(tr("Inbox ({count})…", count=total) if total else tr("Inbox…"))

    def _reload_inbox(self) -> None:
        if self.inbox_window is not None and self.inbox_window.isVisible():
            self.inbox_window.reload()

    def show_inbox(self) -> None:
        names = {}
        plist = self.window.persona_list
        from ui.main_window import NAME_ROLE

        for row in range(plist.count()):
            item = plist.item(row)
            names[item.data(Qt.ItemDataRole.UserRole)] = item.data(NAME_ROLE)
        if self.inbox_window is None:
            self.inbox_window = InboxWindow(self.app, names, self.window)
            self.inbox_window.open_requested.connect(self.window.show_conversation)
        else:
            self.inbox_window.names = names
            self.inbox_window.reload()
        self.inbox_window.show()
        self.inbox_window.raise_()

    def _typing(self) -> None:
        runtime = self.app.runtime_if_open(self.window.current_slug)
        if runtime is not None:  # a float set: cheap enough for every keystroke
            runtime.set_typing(bool(self.window.input.toPlainText().strip()))
