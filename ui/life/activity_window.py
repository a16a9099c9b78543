"""The persona's activity timeline, shown to the person (the window's face of `nexus-ark activity`):
what happened, newest first, filtered by kind, by time and by words, with each entry's details.

Every read runs in order on the window's lane (ui/util/tasks.py) with its own read-only connection
(ui/util/readers.py); the window holds no connection at all. The table's model fetches lazily
(canFetchMore/fetchMore): a page at a time, by key, as the person scrolls back, so a timeline of 100,000
entries is never loaded at once. New entries arrive on top without losing the place: after each finished
turn, when the window is shown again, and every few seconds while it is open (dreams, imports and
compression write to the timeline too). Closing never waits: a query in flight finishes on its lane, its
result is dropped, and the lane closes the connection.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.memory.activity import ActivityEntry, ActivityLog
from nexus_ark.memory.db import database_error, sqlite
from ui.life.activity_model import (
    COLUMNS,
    ENTRY_ROLE,
    KIND_LABELS,
    PAGE,
    SINCE_CHOICES,
    ActivityModel,
    Filters,
    Found,
    TimelineReader,
    details_html,
    error_colour,
    kind_label,
)
from ui.util.i18n import N_, LanguageTexts, sources_saying, tr
from ui.util.tasks import SerialWorker

POLL_MS = 5000  # while the window is open, look for new entries this often (an indexed query that finds none)
FILTER_DELAY_MS = 300  # typing in the filter waits this long for the next key before querying


class ActivityWindow(QDialog):
    """Every text is set through self.texts: a language switch shows them all again in the new language."""

    def __init__(self, app: NexusApp, slug: str, parent=None, name: str | None = None) -> None:
        """name: the persona's name when the caller knows it; the slug stands in until the worker has read
        the persona. Reads nothing here: a persona that cannot be opened shows why in the status line."""
        super().__init__(parent)
        self.app = app
        self.slug = slug
        self.texts = LanguageTexts()
        self._show_name(name or slug)
        self.resize(980, 640)

        self._reader = TimelineReader(app, slug)
        self.worker = SerialWorker(f"activity-{slug}")
        self._closing = False
        self._generation = 0  # a reload makes every answer asked for before it stale
        self._loading = False  # a reload is in flight
        self._newer_running = False
        self._newer_wanted = False  # new entries were announced while a query ran: look once it is in
        self._loaded_once = False
        self.filters = Filters()
        self.total = 0

        filters = self._build_filters()
        self._build_table()
        self.details = QTextBrowser()
        self.details.setObjectName("activityDetails")
        self.details.setOpenLinks(False)
        self.texts.follow(lambda: self.details.setPlaceholderText(tr("Choose an entry to see its details.")))
        self.status = QLabel()
        self.status.setObjectName("activityStatus")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([440, 150])
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)

        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.load_newer)
        self.texts.follow(self._label_choices)
        self.texts.follow(self._label_table)
        self.reload()

    def retranslate(self) -> None:
        self.texts.retranslate()

    # -- building ---------------------------------------------------------------------------------
    def _build_filters(self) -> QHBoxLayout:
        """The kind and time choices, the words to look for (read a moment after typing stops), Refresh."""
        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("activityKind")
        self.kind_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.kind_combo.addItem("", None)
        self.kind_combo.currentIndexChanged.connect(self.reload)
        self.since_combo = QComboBox()
        self.since_combo.setObjectName("activitySince")
        for key, _label in SINCE_CHOICES:
            self.since_combo.addItem("", key)
        self.since_combo.currentIndexChanged.connect(self.reload)
        self.text_filter = QLineEdit()
        self.text_filter.setObjectName("activityFilter")
        self.texts.follow(lambda: self.text_filter.setPlaceholderText(tr("Filter the summaries…")))
        self.text_filter.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self.reload)
        self.text_filter.textEdited.connect(lambda _text: self._filter_timer.start())
        self.text_filter.returnPressed.connect(self.reload)
        self.refresh_button = QPushButton()
        self.texts.follow(lambda: self.refresh_button.setText(tr("Refresh")))
        self.refresh_button.setObjectName("activityRefresh")
        self.refresh_button.setAutoDefault(False)  # Enter in the filter reloads once, not twice
        self.refresh_button.setShortcut(QKeySequence.StandardKey.Refresh)
        self.refresh_button.clicked.connect(self.reload)
        filters = QHBoxLayout()
        for caption, combo in ((N_("Kind:"), self.kind_combo), (N_("Since:"), self.since_combo)):
            filters.addWidget(self._caption(caption, combo))
            filters.addWidget(combo)
            filters.addSpacing(12)
        filters.addWidget(self.text_filter, 1)
        filters.addWidget(self.refresh_button)
        return filters

    def _caption(self, text: str, buddy: QWidget) -> QLabel:
        label = QLabel()
        self.texts.follow(lambda: label.setText(tr(text)))
        label.setBuddy(buddy)
        return label

    def _build_table(self) -> None:
        """The entries, fetched as they scroll into view: one compact line each, widths from the font."""
        self.model = ActivityModel(self)
        self.model.more_wanted.connect(self._fetch_older)
        self.table = QTableView()
        self.table.setObjectName("activityTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setShowGrid(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        # Widths from the font, not from the rows: measuring contents would read every row fetched so far.
        metrics = self.table.fontMetrics()
        self.table.verticalHeader().setDefaultSectionSize(metrics.height() + 8)  # compact, one line a row
        header.resizeSection(0, metrics.horizontalAdvance("0000-00-00 00:00:00") + 24)
        self.table.selectionModel().currentRowChanged.connect(self._show_details)

    def _show_name(self, name: str) -> None:
        self.persona_name = name
        self.texts.follow(lambda: self.setWindowTitle(tr("Activity of {name}", name=name)), key="title")

    def _label_choices(self) -> None:
        """The filters' choices in the person's language (their data, what is chosen, stay as they are)."""
        self.kind_combo.setItemText(0, tr("All kinds"))
        for index in range(1, self.kind_combo.count()):
            self.kind_combo.setItemText(index, kind_label(self.kind_combo.itemData(index)))
        for index, (_key, label) in enumerate(SINCE_CHOICES):
            self.since_combo.setItemText(index, tr(label))

    def _label_table(self) -> None:
        """Headers, kinds and summaries (the kind column wide enough for the longest kind) and the details
        shown, translated."""
        self.model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)
        self.model.retranslate()
        metrics = self.table.fontMetrics()
        widest_kind = max(metrics.horizontalAdvance(kind_label(k)) for k in KIND_LABELS)
        self.table.horizontalHeader().resizeSection(
            1, max(widest_kind, metrics.horizontalAdvance(tr(COLUMNS[1]))) + 28
        )
        self._show_details(self.table.currentIndex())

    def say(self, text: Callable[[], str]) -> None:
        """The status line; text() is asked again after a language switch (the latest message only)."""
        self.texts.follow(lambda: self.status.setText(text()), key="status")

    # -- queries, on the worker thread ----------------------------------------------------------------
    def _ask(self, query, on_done) -> None:
        """Run query(activity log) on the worker; on_done(result) on the UI thread unless the window has
        closed or a reload made the answer stale."""
        reader, generation = self._reader, self._generation

        def task() -> Any:
            try:
                return reader.activity(query)
            except sqlite.Error as exc:  # a damaged, locked or vanished file, in words a person can act on
                raise database_error(exc, reader.path) from exc

        def done(value: Any) -> None:
            if not self._closing and generation == self._generation:
                on_done(value)

        def failed(message: str) -> None:
            if self._closing or generation != self._generation:
                return
            self._loading = self._newer_running = self.model.fetching = False
            self.say(lambda: f"<span style='color:{error_colour()}'>{html.escape(message)}</span>")

        self.worker.run(task, done, failed)

    def current_filters(self) -> Filters:
        since_key = self.since_combo.currentData()
        now = self.app.clock.now()
        since = {
            "hour": now - timedelta(hours=1),
            "today": now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0),
            "week": now - timedelta(days=7),
            "month": now - timedelta(days=30),
        }.get(since_key)
        text = self.text_filter.text().strip()
        return Filters(
            kind=self.kind_combo.currentData(), since=since, text=text, templates=tuple(sources_saying(text))
        )

    @Slot()
    def reload(self) -> None:
        """Read the timeline again from its newest entry, with the filters as they are now."""
        if self._closing:
            return
        self._filter_timer.stop()
        self._generation += 1
        self._loading, self._newer_running, self._newer_wanted = True, False, False
        self.model.fetching = True  # no page of the old answer is asked for meanwhile
        self.filters = filters = self.current_filters()
        self.say(lambda: tr("Loading…"))

        reader = self._reader

        def query(log: ActivityLog) -> Found:
            return Found(
                log.page(**filters.query(), limit=PAGE + 1),
                log.count(**filters.query()),
                log.kinds(),
                reader.name,
            )

        self._ask(query, self._reloaded)

    def _reloaded(self, found: Found) -> None:
        self._loading = False
        if found.name and found.name != self.persona_name:
            self._show_name(found.name)
        self._loaded_once = True
        selected = self.selected_entry()
        self.model.reset(found.entries[:PAGE], has_more=len(found.entries) > PAGE)
        self.total = found.total
        self._set_kinds(found.kinds)
        if selected is not None:
            self._select_id(selected.id)
        self._show_details(self.table.currentIndex())
        self._show_count()
        self._after_query()

    @Slot()
    def _fetch_older(self) -> None:
        """The next page back in time (the model asked: the person scrolled to the bottom)."""
        key, filters = self.model.last_key(), self.filters
        if key is None:
            self.model.fetching = False
            return
        self._ask(lambda log: log.page(**filters.query(), before=key, limit=PAGE + 1), self._fetched_older)

    def _fetched_older(self, entries: list[ActivityEntry]) -> None:
        self.model.append(entries[:PAGE], has_more=len(entries) > PAGE)
        self._show_count()

    @Slot()
    def load_newer(self) -> None:
        """Add entries written since the newest one shown (after a turn, on show, on the poll). Few of
        them go on top; more than a page means a reload from the top."""
        if self._closing:
            return
        if self._loading or self._newer_running:
            self._newer_wanted = True  # asked again once the query in flight is in
            return
        if not self._loaded_once:  # the first read failed: the refresh button reads from the top
            return
        self._newer_running, self._newer_wanted = True, False
        key, filters = self.model.first_key(), self.filters

        def query(log: ActivityLog) -> Found:
            entries = log.page(**filters.query(), after=key, limit=PAGE + 1)
            return Found(entries, log.count(**filters.query()) if entries else -1, log.kinds())

        self._ask(query, self._loaded_newer)

    def _loaded_newer(self, found: Found) -> None:
        self._newer_running = False
        self._set_kinds(found.kinds)
        if len(found.entries) > PAGE:
            self.reload()
            return
        if found.entries:
            self.model.prepend(found.entries)
            self.total = found.total
            self._show_count()
        self._after_query()

    def _after_query(self) -> None:
        if self._newer_wanted:
            self.load_newer()

    # -- showing --------------------------------------------------------------------------------------
    def _set_kinds(self, kinds: list[str]) -> None:
        """All kinds, then each kind the timeline holds (and the one chosen, even if none is left)."""
        chosen = self.kind_combo.currentData()
        order = list(KIND_LABELS)  # the known kinds in the order a turn writes them, later ones after
        wanted = sorted(
            {*kinds, *([chosen] if chosen else [])},
            key=lambda k: (order.index(k), "") if k in order else (len(order), k),
        )
        present = [self.kind_combo.itemData(i) for i in range(1, self.kind_combo.count())]
        if present == wanted:
            return
        self.kind_combo.blockSignals(True)
        try:
            while self.kind_combo.count() > 1:
                self.kind_combo.removeItem(1)
            for kind in wanted:
                self.kind_combo.addItem(kind_label(kind), kind)
            self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(chosen)) if chosen else 0)
        finally:
            self.kind_combo.blockSignals(False)

    def set_kind(self, kind: str | None) -> None:
        """Show one kind (None: all of them); the combo lists a kind even before the timeline has it."""
        if kind is not None and self.kind_combo.findData(kind) < 0:
            self.kind_combo.blockSignals(True)
            self.kind_combo.addItem(kind_label(kind), kind)
            self.kind_combo.blockSignals(False)
        self.kind_combo.setCurrentIndex(0 if kind is None else self.kind_combo.findData(kind))

    def set_since(self, key: str) -> None:
        self.since_combo.setCurrentIndex(self.since_combo.findData(key))

    def _show_count(self) -> None:
        shown, total = self.model.rowCount(), self.total
        if total == 0:
            filtered = self.filters != Filters()
            self.say(
                lambda: tr("No entries match these filters.") if filtered else tr("Nothing happened yet.")
            )
        else:
            self.say(lambda: tr("Showing {shown} of {total} entries.", shown=shown, total=total))

    def selected_entry(self) -> ActivityEntry | None:
        index = self.table.currentIndex()
        return self.model.data(index, ENTRY_ROLE) if index.isValid() else None

    def _select_id(self, entry_id: int) -> None:
        for row, entry in enumerate(self.model.entries):
            if entry.id == entry_id:
                self.table.selectRow(row)
                return

    @Slot(QModelIndex, QModelIndex)
    def _show_details(self, index: QModelIndex, _previous: QModelIndex | None = None) -> None:
        entry = self.model.data(index, ENTRY_ROLE) if index.isValid() else None
        self.details.setHtml(details_html(entry) if entry is not None else "")

    # -- lifecycle ------------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():
            self.load_newer()
            self._poll.start()

    def hideEvent(self, event) -> None:
        if not event.spontaneous():
            self._poll.stop()
        super().hideEvent(event)

    def _shut(self) -> None:
        """Once: drop what is in flight and let the worker close its own connection when idle."""
        if self._closing:
            return
        self._closing = True
        self._poll.stop()
        self._filter_timer.stop()
        self.worker.close(self._reader.close)

    def done(self, result: int) -> None:
        self._shut()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._shut()
        super().closeEvent(event)
