"""Search in the conversation (Ctrl+F): a bar above it with the hits' count and buttons between them.

The bar only says what was asked; the window searches the whole conversation on the history thread (not
just what is shown) and brings a hit's page into view.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from ui.util.i18n import tr

DEBOUNCE_MS = 250  # typing a word searches once, not once a letter


class SearchField(QLineEdit):
    """Enter goes to the next (older) hit, Shift+Enter to the newer one, Esc closes."""

    step = Signal(int)
    escape = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.step.emit(+1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else -1)
            return
        if event.key() == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        super().keyPressEvent(event)


class SearchBar(QWidget):
    query = Signal(str)  # the text to find ("" when cleared)
    step = Signal(int)  # -1: an older hit, +1: a newer one
    closed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("searchBar")
        self.field = SearchField()
        self.field.setObjectName("searchField")
        self.field.setClearButtonEnabled(True)
        self.count_label = QLabel()
        self.count_label.setObjectName("searchCount")
        self.older_button = QToolButton()
        self.older_button.setText("↑")
        self.newer_button = QToolButton()
        self.newer_button.setText("↓")
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(self.older_button)
        layout.addWidget(self.newer_button)
        layout.addWidget(self.close_button)
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(lambda: self.query.emit(self.field.text().strip()))
        self.field.textChanged.connect(lambda _text: self._timer.start())
        self.field.step.connect(self.step)
        self.field.escape.connect(self.close_bar)
        self.older_button.clicked.connect(lambda: self.step.emit(-1))
        self.newer_button.clicked.connect(lambda: self.step.emit(+1))
        self.close_button.clicked.connect(self.close_bar)
        self.setVisible(False)
        self.retranslate()

    def open_bar(self) -> None:
        self.setVisible(True)
        self.field.setFocus()
        self.field.selectAll()

    def close_bar(self) -> None:
        self._timer.stop()
        self.setVisible(False)
        self.closed.emit()

    def show_count(self, current: int, total: int, searched: bool) -> None:
        """current is 1-based (0: none chosen)."""
        if not searched:
            self.count_label.setText("")
        elif total == 0:
            self.count_label.setText(tr("No matches"))
        else:
            self.count_label.setText(tr("{current} of {total}", current=current, total=total))
        self.older_button.setEnabled(current > 1)
        self.newer_button.setEnabled(0 < current < total)

    def retranslate(self) -> None:
        self.field.setPlaceholderText(tr("Search in this conversation"))
        self.older_button.setToolTip(tr("Older match (Enter)"))
        self.newer_button.setToolTip(tr("Newer match (Shift+Enter)"))
        self.close_button.setToolTip(tr("Close the search (Esc)"))
