"""The dashboard's open questions: what makes the persona curious, which the person may mark resolved or
delete (after a confirmation). Changes go through the window's writer; the table is redrawn from the next
read of the database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.memory.components import OpenQuestion
from nexus_ark.memory.store import MemoryStore
from ui.life.dashboard_data import local_time, sources_text
from ui.util.i18n import tr
from ui.util.tables import cell_text

Write = Callable[[Callable[[MemoryStore], Any], Callable[[Any], None]], None]
ID_COLUMN = 6


class QuestionsPanel(QWidget):
    def __init__(self, write: Write, persona_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._write = write
        self.persona_name = persona_name
        self.questions: list[OpenQuestion] = []
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.table = QTableWidget(0, 7)
        self.table.setObjectName("openQuestions")
        self.table.setColumnHidden(ID_COLUMN, True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, 6):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.resolve_button = QPushButton()
        self.resolve_button.clicked.connect(self.resolve_selected)
        self.delete_button = QPushButton()
        self.delete_button.clicked.connect(lambda: self.delete_selected())
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.delete_button)
        buttons.addWidget(self.resolve_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.retranslate()

    def retranslate(self) -> None:
        self.intro.setText(
            tr(
                "What {name} wonders about. Open questions feed its curiosity; "
                "resolve one it no longer needs to ask, or delete it.",
                name=self.persona_name,
            )
        )
        self.table.setHorizontalHeaderLabels(
            [tr("Question"), tr("Topic"), tr("Priority"), tr("Asked"), tr("Status"), tr("Sources"), "id"]
        )
        self.resolve_button.setText(tr("Mark resolved"))
        self.delete_button.setText(tr("Delete…"))
        self.show_questions(self.questions)

    def show_questions(self, questions: list[OpenQuestion]) -> None:
        # Open questions first (as the core orders them: highest priority first), then the resolved ones.
        self.questions = sorted(questions, key=lambda q: q.resolved_at is not None)
        self.table.setRowCount(len(self.questions))
        for row, q in enumerate(self.questions):
            if q.resolved_at is None:
                status = tr("open")
            elif q.resolved_by == "user":
                status = tr("resolved by you")
            else:
                status = tr("answered in conversation")
            values = [
                q.question,
                q.topic,
                f"{q.priority:.1f}",
                local_time(q.created_at),
                status,
                sources_text(q.source_ids),
                str(q.id),
            ]
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                if col == 0 and q.context:
                    item.setToolTip(tr("Context: {text}", text=q.context))
                if q.resolved_at is not None:
                    item.setForeground(self.palette().placeholderText())
                self.table.setItem(row, col, item)
        self.table.resizeRowsToContents()

    def _selected_ids(self) -> list[int]:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return [int(cell_text(self.table, r, ID_COLUMN)) for r in rows]

    def resolve_selected(self) -> None:
        ids = self._selected_ids()
        if not ids:
            return

        def resolve(store: MemoryStore) -> None:
            for question_id in ids:
                store.components.resolve_question(question_id, by="user")

        self._write(resolve, lambda _: None)

    def delete_selected(self, ask: bool = True) -> None:
        ids = self._selected_ids()
        if not ids:
            return
        if ask:
            answer = QMessageBox.question(
                self,
                tr("Delete questions"),
                tr("Delete {count} questions? The persona stops wondering about them.", count=len(ids)),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return

        def delete(store: MemoryStore) -> None:
            for question_id in ids:
                store.components.delete_question(question_id)

        self._write(delete, lambda _: None)
