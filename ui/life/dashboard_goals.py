"""The dashboard's goals board: short- and long-term goals with status, priority and progress notes. The
person adds a goal, edits its text and priority, adds a note, completes or abandons it. The core refuses
empty texts; its message is shown and nothing is saved."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.errors import NexusArkError
from nexus_ark.memory.components import Goal, GoalStatus
from nexus_ark.memory.store import MemoryStore
from ui.life.dashboard_data import local_time, sources_text
from ui.util import theme
from ui.util.i18n import N_, tr
from ui.util.tables import cell_text

Write = Callable[..., None]  # (fn(store), on_done(value), on_error(message))
ID_COLUMN = 5
TERMS = {"short": N_("short-term"), "long": N_("long-term")}
STATUSES = {"active": N_("active"), "completed": N_("completed"), "abandoned": N_("abandoned")}


class GoalsPanel(QWidget):
    def __init__(self, write: Write, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._write = write
        self.goals: list[Goal] = []
        self.editing_id = ""  # "" while a new goal is being written
        self.table = QTableWidget(0, 6)
        self.table.setObjectName("goals")
        self.table.setColumnHidden(ID_COLUMN, True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col in (0, 2, 3, 4):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._selected)

        self.term = QComboBox()
        for key in TERMS:
            self.term.addItem("", key)
        self.text = QPlainTextEdit()
        self.text.setObjectName("goalText")
        self.text.setMaximumHeight(90)
        self.priority = QSpinBox()
        self.priority.setRange(1, 9)
        self.notes = QListWidget()
        self.notes.setObjectName("goalNotes")
        self.notes.setMaximumHeight(150)
        self.sources = QLabel()
        theme.set_tone(self.sources, "muted")
        self.sources.setWordWrap(True)
        self.note = QLineEdit()
        self.note.setObjectName("goalNote")
        self.new_button = QPushButton()
        self.new_button.clicked.connect(self.new_goal)
        self.save_button = QPushButton()
        self.save_button.clicked.connect(self.save)
        self.note_button = QPushButton()
        self.note_button.clicked.connect(self.add_note)
        self.complete_button = QPushButton()
        self.complete_button.clicked.connect(lambda: self.set_status("completed"))
        self.abandon_button = QPushButton()
        self.abandon_button.clicked.connect(lambda: self.set_status("abandoned"))
        self.message = QLabel()
        self.message.setObjectName("goalMessage")
        self.message.setWordWrap(True)

        self.form = QFormLayout()
        self.form_labels = [QLabel() for _ in range(5)]
        note_row = QHBoxLayout()
        note_row.addWidget(self.note, 1)
        note_row.addWidget(self.note_button)
        fields = (self.term, self.text, self.priority, self.notes)
        for label, field in zip(self.form_labels[:4], fields, strict=True):
            self.form.addRow(label, field)
        self.form.addRow(self.form_labels[4], note_row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addStretch(1)
        buttons.addWidget(self.abandon_button)
        buttons.addWidget(self.complete_button)
        buttons.addWidget(self.save_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addLayout(self.form)
        right_layout.addWidget(self.sources)
        right_layout.addStretch(1)
        right_layout.addWidget(self.message)
        right_layout.addLayout(buttons)
        splitter = QSplitter()
        splitter.addWidget(self.table)
        splitter.addWidget(right)
        splitter.setSizes([560, 400])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.retranslate()
        self.new_goal()

    def retranslate(self) -> None:
        self.table.setHorizontalHeaderLabels(
            [tr("Term"), tr("Goal"), tr("Status"), tr("Priority"), tr("Notes"), "id"]
        )
        for index, key in enumerate(TERMS):
            self.term.setItemText(index, tr(TERMS[key]))
        labels = [tr("Term"), tr("Goal"), tr("Priority"), tr("Progress notes"), tr("New note")]
        for widget, label in zip(self.form_labels, labels, strict=True):
            widget.setText(label)
        self.priority.setToolTip(tr("1 is the most important."))
        self.note.setPlaceholderText(tr("What moved forward, or why it ends"))
        self.new_button.setText(tr("New goal"))
        self.save_button.setText(tr("Save"))
        self.note_button.setText(tr("Add note"))
        self.complete_button.setText(tr("Complete"))
        self.abandon_button.setText(tr("Abandon"))
        self.show_goals(self.goals)

    # -- showing --------------------------------------------------------------------------------------
    def show_goals(self, goals: list[Goal]) -> None:
        order = {"active": 0, "completed": 1, "abandoned": 2}
        self.goals = sorted(goals, key=lambda g: (order.get(g.status, 3), g.term != "short", g.priority))
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.goals))
        selected_row = -1
        for row, goal in enumerate(self.goals):
            values = [
                tr(TERMS.get(goal.term, goal.term)),
                goal.goal,
                tr(STATUSES.get(goal.status, goal.status)),
                str(goal.priority),
                str(len(goal.progress_notes)),
                goal.id,
            ]
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                if goal.status != "active":
                    item.setForeground(self.palette().placeholderText())
                self.table.setItem(row, col, item)
            if goal.id == self.editing_id:
                selected_row = row
        if selected_row >= 0:
            self.table.selectRow(selected_row)
        self.table.blockSignals(False)
        self.table.resizeRowsToContents()
        current = self.current()
        if current is not None:  # notes and sources follow the database; the text being typed stays
            self._show_details(current)

    def current(self) -> Goal | None:
        return next((g for g in self.goals if g.id == self.editing_id), None) if self.editing_id else None

    def select(self, goal_id: str) -> None:
        for row in range(self.table.rowCount()):
            if cell_text(self.table, row, ID_COLUMN) == goal_id:
                self.table.selectRow(row)
                return

    def _selected(self) -> None:
        rows = {i.row() for i in self.table.selectedIndexes()}
        if not rows:
            return
        goal_id = cell_text(self.table, min(rows), ID_COLUMN)
        goal = next((g for g in self.goals if g.id == goal_id), None)
        if goal is None:
            return
        self.editing_id = goal.id
        self.term.setCurrentIndex(list(TERMS).index(goal.term))
        self.term.setEnabled(False)
        self.text.setPlainText(goal.goal)
        self.priority.setValue(max(1, min(9, goal.priority)))
        self.message.setText("")
        self._show_details(goal)

    def _show_details(self, goal: Goal) -> None:
        self.notes.clear()
        self.notes.addItems(goal.progress_notes)
        self.sources.setText(
            tr(
                "{status} · {sources} · updated {time}",
                status=tr(STATUSES.get(goal.status, goal.status)),
                sources=sources_text(goal.source_ids),
                time=local_time(goal.updated_at),
            )
        )
        active = goal.status == "active"
        self.complete_button.setEnabled(active)
        self.abandon_button.setEnabled(active)
        self.note_button.setEnabled(True)

    def new_goal(self) -> None:
        self.table.clearSelection()
        self.editing_id = ""
        self.term.setEnabled(True)
        self.text.clear()
        self.priority.setValue(1)
        self.notes.clear()
        self.sources.setText("")
        self.message.setText("")
        for button in (self.complete_button, self.abandon_button, self.note_button):
            button.setEnabled(False)
        self.text.setFocus()

    # -- changes ----------------------------------------------------------------------------------
    def _run(self, fn: Callable[[MemoryStore], Any], done_text: str) -> None:
        def done(goal: Goal) -> None:
            self.editing_id = goal.id
            self.note.clear()
            theme.set_tone(self.message, "success")
            self.message.setText(done_text)

        theme.set_tone(self.message, "muted")
        self.message.setText(tr("Saving…"))
        self._write(fn, done, self.show_error)

    def show_error(self, message: str) -> None:
        theme.set_tone(self.message, "error")
        self.message.setText(message)  # the core's refusals come translated (ui.util.tasks)

    def save(self) -> None:
        text, priority, goal_id = self.text.toPlainText().strip(), self.priority.value(), self.editing_id
        term = self.term.currentData()

        def save(store: MemoryStore) -> Goal:
            c = store.components
            if not goal_id:
                return c.put_goal(Goal(term=term, goal=text, priority=priority))
            goal = c.goal(goal_id)
            if goal is None:  # deleted meanwhile (a dream, the command line)
                raise NexusArkError(f"There is no goal {goal_id!r}.")
            return c.put_goal(goal.model_copy(update={"goal": text, "priority": priority}))

        self._run(save, tr("Saved."))

    def add_note(self) -> None:
        if not self.editing_id:
            return
        goal_id, note = self.editing_id, self.note.text()
        self._run(lambda store: store.components.add_progress(goal_id, note), tr("Note added."))

    def set_status(self, status: GoalStatus) -> None:
        if not self.editing_id:
            return
        goal_id, note = self.editing_id, self.note.text()
        done = tr("Goal completed.") if status == "completed" else tr("Goal abandoned.")
        self._run(lambda store: store.components.set_goal_status(goal_id, status, note), done)
