"""The inbox: every message a persona wrote on its own, newest first, with why; unread ones in bold.

Read on a worker through read-only connections (NexusApp.inbox); opening one shows that persona's
conversation (the main window marks it read there); "Mark all as read" goes through each persona's runtime.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.memory.inbox import InboxEntry
from ui.util.i18n import tr
from ui.util.reasons import why_line
from ui.util.tasks import run_in_background

SLUG_ROLE = Qt.ItemDataRole.UserRole


class InboxWindow(QDialog):
    open_requested = Signal(str)  # persona slug

    def __init__(self, app: NexusApp, names: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inboxWindow")
        self.app = app
        self.names = names
        self.resize(760, 420)
        self.tree = QTreeWidget()
        self.tree.setObjectName("inboxList")
        self.tree.setColumnCount(4)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.itemActivated.connect(self._open)
        self.status = QLabel()
        self.mark_all = QPushButton()
        self.mark_all.setObjectName("markAllRead")
        self.mark_all.clicked.connect(self._mark_all)
        self.close_button = QPushButton()
        self.close_button.clicked.connect(self.close)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.mark_all)
        row.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        self.entries: list[tuple[str, InboxEntry]] = []
        self.retranslate()
        self.reload()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Inbox"))
        self.tree.setHeaderLabels([tr("Persona"), tr("Time"), tr("Message"), tr("Why")])
        self.mark_all.setText(tr("Mark all as read"))
        self.close_button.setText(tr("Close"))
        for row, (_slug, entry) in enumerate(self.entries):  # why each was written, in the new language
            item = self.tree.topLevelItem(row)
            if item is not None:
                item.setText(3, why_line(entry.meta.get("autonomous") or {}))
        self._show_count()

    def reload(self) -> None:
        self.status.setText(tr("Loading…"))
        run_in_background(self.app.inbox, self._show, self._failed)

    def _show(self, entries: list[tuple[str, InboxEntry]]) -> None:
        self.entries = entries
        self.tree.clear()
        for slug, entry in entries:
            when = datetime.fromisoformat(entry.created_at).astimezone().strftime("%Y-%m-%d %H:%M")
            first = next((line for line in entry.text.splitlines() if line.strip()), entry.text)
            who = self.names.get(slug, slug)
            if entry.room_title:  # written first in a room: the room is named beside the persona
                who = f"{who} · {entry.room_title}"
            item = QTreeWidgetItem([who, when, first, why_line(entry.meta.get("autonomous") or {})])
            item.setData(0, SLUG_ROLE, slug)
            item.setToolTip(2, entry.text)
            if entry.read_at is None:
                font = QFont(item.font(0))
                font.setBold(True)
                for column in range(4):
                    item.setFont(column, font)
            self.tree.addTopLevelItem(item)
        for column in (0, 1):
            self.tree.resizeColumnToContents(column)
        self.tree.setColumnWidth(2, 300)
        self._show_count()

    def _show_count(self) -> None:
        if not hasattr(self, "entries"):
            return
        unread = sum(1 for _, e in self.entries if e.read_at is None)
        self.status.setText(
            tr("No messages yet: when a persona writes first, it lands here.")
            if not self.entries
            else tr("{unread} unread of {total}", unread=unread, total=len(self.entries))
        )

    def _failed(self, message: str) -> None:
        self.status.setText(tr("Error: {message}", message=message.splitlines()[0]))

    def _open(self, item: QTreeWidgetItem) -> None:
        self.open_requested.emit(item.data(0, SLUG_ROLE))

    def _mark_all(self) -> None:
        slugs = sorted({slug for slug, e in self.entries if e.read_at is None})

        def run() -> None:
            for slug in slugs:
                self.app.mark_read(slug)

        run_in_background(run, lambda _: self.reload(), self._failed)
