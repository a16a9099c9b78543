"""A debug view of the prompt: the exact messages a message would be sent with and what each section costs
(the window's face of `nexus-ark prompt`). Built on a pool thread: it loads the model to count tokens."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.agent.prompt import BuiltPrompt
from nexus_ark.app import NexusApp
from ui.util.i18n import LanguageTexts, tr
from ui.util.tasks import run_in_background


class PromptView(QDialog):
    """Every text is set through its LanguageTexts: a language switch shows them all again in the new
    language."""

    def __init__(self, app: NexusApp, slug: str, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.app, self.slug = app, slug
        self.texts = LanguageTexts()
        self.texts.follow(lambda: self.setWindowTitle(tr("Prompt of the next message")))
        self.resize(900, 640)
        self.text = QLineEdit(text)
        self.texts.follow(lambda: self.text.setPlaceholderText(tr("A message to build the prompt for")))
        self.text.returnPressed.connect(self.refresh)
        show = QPushButton()
        self.texts.follow(lambda: show.setText(tr("Show")))
        show.clicked.connect(self.refresh)
        self.sections = QTableWidget(0, 3)
        self.sections.setObjectName("promptSections")
        self.texts.follow(
            lambda: self.sections.setHorizontalHeaderLabels([tr("Section"), tr("Tokens"), tr("Cut")])
        )
        header = self.sections.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.sections.verticalHeader().setVisible(False)
        self.messages = QPlainTextEdit()
        self.messages.setObjectName("promptMessages")
        self.messages.setReadOnly(True)
        self.status = QLabel()
        row = QHBoxLayout()
        row.addWidget(self.text, 1)
        row.addWidget(show)
        splitter = QSplitter()
        splitter.addWidget(self.sections)
        splitter.addWidget(self.messages)
        splitter.setSizes([320, 580])
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)
        if text.strip():
            self.refresh()

    def retranslate(self) -> None:
        self.texts.retranslate()

    def refresh(self) -> None:
        text = self.text.text().strip()
        if not text:
            return
        self.say(lambda: tr("Building the prompt…"))
        app, slug = self.app, self.slug
        run_in_background(lambda: app.personas.preview_prompt(slug, text), self._show, self._failed)

    def say(self, text: Callable[[], str]) -> None:
        """The status line; text() is asked again after a language switch (the latest message only)."""
        self.texts.follow(lambda: self.status.setText(text()), key="status")

    def _show(self, built: BuiltPrompt) -> None:
        self.sections.setRowCount(len(built.sections))
        for row, section in enumerate(built.sections):
            values = [section.name, str(section.tokens), ""]
            for col, value in enumerate(values):
                self.sections.setItem(row, col, QTableWidgetItem(value))
        cut = [section.cut for section in built.sections]
        self.texts.follow(lambda: self._label_cut(cut), key="cut")
        self.messages.setPlainText(
            "\n\n".join(f"── {message.role} ──\n{message.content}" for message in built.messages)
        )
        total = sum(section.tokens for section in built.sections)
        self.say(lambda: tr("{tokens} tokens in all.", tokens=total))

    def _label_cut(self, cut: list[bool]) -> None:
        for row, was_cut in enumerate(cut):
            item = self.sections.item(row, 2)
            if item is not None:
                item.setText(tr("yes") if was_cut else "")

    def _failed(self, message: str) -> None:
        self.say(lambda: message)
