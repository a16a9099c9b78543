"""The inbox: every message a persona wrote on its own, newest first, with why; unread ones in bold. Above
them, what waits for the person: the personas' proposals to change their souls (issue 25), each opened for
review in a window of its own.

Read on a worker through read-only connections (app.life.inbox); opening one shows that persona's
conversation (the main window marks it read there); "Mark all as read" goes through each persona's runtime.
The proposals are read through each persona's runtime (NexusApp.open_soul_proposals) on another worker, so
a persona busy with a turn delays only them, and read again when a persona proposes or its soul changes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.memory.inbox import InboxEntry
from nexus_ark.soul.records import SoulProposal
from ui.soul.proposal_sources import local_time
from ui.soul.review_window import SoulReviewWindow
from ui.util.core_events import SOUL_TOPICS, CoreEvents
from ui.util.i18n import tr
from ui.util.reasons import why_line
from ui.util.tasks import run_in_background, while_open

SLUG_ROLE = Qt.ItemDataRole.UserRole
PROPOSAL_ROLE = Qt.ItemDataRole.UserRole + 1
SOUL_ROWS_SHOWN = 4  # rows of proposals before the list scrolls


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
        # What waits for the person: proposals to change a soul.
        self.waiting_label = QLabel()
        self.waiting_label.setObjectName("waitingLabel")
        font = self.waiting_label.font()
        font.setBold(True)
        self.waiting_label.setFont(font)
        self.soul_list = QTreeWidget()
        self.soul_list.setObjectName("soulProposals")
        self.soul_list.setColumnCount(2)
        self.soul_list.setHeaderHidden(True)
        self.soul_list.setRootIsDecorated(False)
        self.soul_list.header().setStretchLastSection(False)
        self.soul_list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.soul_list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.soul_list.itemActivated.connect(self._review_item)
        self.soul_list.itemSelectionChanged.connect(self._show_review_button)
        self.waiting_label.setBuddy(self.soul_list)
        self.review_button = QPushButton()
        self.review_button.setObjectName("reviewProposal")
        self.review_button.clicked.connect(self._review_selected)
        waiting_row = QHBoxLayout()
        waiting_row.addWidget(self.waiting_label, 1)
        waiting_row.addWidget(self.review_button)
        waiting = QVBoxLayout()
        waiting.setContentsMargins(0, 0, 0, 0)
        waiting.addLayout(waiting_row)
        waiting.addWidget(self.soul_list)
        self.waiting = QWidget()
        self.waiting.setObjectName("waitingForYou")
        self.waiting.setLayout(waiting)
        self.waiting.hide()
        self.proposals: list[tuple[str, SoulProposal]] = []
        self.reviews: dict[tuple[str, int], SoulReviewWindow] = {}
        self.core_events: CoreEvents | None = None
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
        layout.addWidget(self.waiting)
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
        self.waiting_label.setText(tr("Waiting for you"))
        self.review_button.setText(tr("Review…"))
        for row, (slug, proposal) in enumerate(self.proposals):
            item = self.soul_list.topLevelItem(row)
            if item is not None:
                item.setText(0, self._request(slug, proposal))
        for row, (_slug, entry) in enumerate(self.entries):  # why each was written, in the new language
            item = self.tree.topLevelItem(row)
            if item is not None:
                item.setText(3, why_line(entry.meta.get("autonomous") or {}))
        self._show_count()

    def reload(self) -> None:
        self.status.setText(tr("Loading…"))
        run_in_background(self.app.life.inbox, while_open(self, self._show), while_open(self, self._failed))
        self.reload_proposals()

    def reload_proposals(self) -> None:
        run_in_background(
            self.app.souls.open_proposals,
            while_open(self, self._show_proposals),
            while_open(self, self._failed),
        )

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

    # -- proposals to change a soul --------------------------------------------------------------------
    def _request(self, slug: str, proposal: SoulProposal) -> str:
        return tr(
            "{name} would like to change “{section}”",
            name=self.names.get(slug, slug),
            section=proposal.section,
        )

    def _show_proposals(self, proposals: list[tuple[str, SoulProposal]]) -> None:
        selected = self._selected_proposal()
        self.proposals = proposals
        self.soul_list.clear()
        for slug, proposal in proposals:
            item = QTreeWidgetItem([self._request(slug, proposal), local_time(proposal.created_at)])
            item.setData(0, SLUG_ROLE, slug)
            item.setData(0, PROPOSAL_ROLE, proposal.id)
            item.setToolTip(0, proposal.reason)
            self.soul_list.addTopLevelItem(item)
            if selected == (slug, proposal.id):
                item.setSelected(True)
                self.soul_list.setCurrentItem(item)
        first = self.soul_list.topLevelItem(0)
        if first is not None and not self.soul_list.selectedItems():
            self.soul_list.setCurrentItem(first)
        rows = min(len(proposals), SOUL_ROWS_SHOWN)
        row_height = self.soul_list.sizeHintForRow(0) if proposals else 0
        self.soul_list.setFixedHeight(rows * row_height + 2 * self.soul_list.frameWidth() + 2)
        self.waiting.setVisible(bool(proposals))
        self._show_review_button()

    def _selected_proposal(self) -> tuple[str, int] | None:
        item = self.soul_list.currentItem()
        if item is None:
            return None
        return item.data(0, SLUG_ROLE), int(item.data(0, PROPOSAL_ROLE))

    def _show_review_button(self) -> None:
        self.review_button.setEnabled(self.soul_list.currentItem() is not None)

    def _review_selected(self) -> None:
        item = self.soul_list.currentItem()
        if item is not None:
            self._review_item(item)

    def _review_item(self, item: QTreeWidgetItem) -> None:
        slug, proposal_id = item.data(0, SLUG_ROLE), int(item.data(0, PROPOSAL_ROLE))
        found = next((p for s, p in self.proposals if s == slug and p.id == proposal_id), None)
        if found is not None:
            self.review(slug, found)

    def review(self, slug: str, proposal: SoulProposal) -> SoulReviewWindow:
        """The proposal's review window (the one already open for it, brought to the front)."""
        key = (slug, proposal.id)
        self.reviews = {k: w for k, w in self.reviews.items() if isValid(w) and w.isVisible()}  # closed ones
        window = self.reviews.get(key)
        if window is None:
            window = SoulReviewWindow(self.app, slug, proposal, self.names.get(slug, slug), self.names, self)
            window.settled.connect(self.reload_proposals)
            self.reviews[key] = window
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    def _on_event(self, topic: str, _payload: dict[str, Any]) -> None:
        if topic in SOUL_TOPICS:
            self.reload_proposals()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.core_events is None:  # a persona proposing while the inbox is open shows at once
            self.core_events = CoreEvents(self.app.events, None, SOUL_TOPICS, parent=self)
            self.core_events.happened.connect(self._on_event)

    def hideEvent(self, event: QHideEvent) -> None:
        if self.core_events is not None and not event.spontaneous():
            self.core_events.close()
            self.core_events.deleteLater()
            self.core_events = None
        super().hideEvent(event)

    # -- the messages --------------------------------------------------------------------------------
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
                self.app.life.mark_read(slug)

        run_in_background(run, lambda _: self.reload(), self._failed)
