"""The message box under a conversation (a persona's or a room's)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QInputMethodEvent, QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit


class MessageInput(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line. While an input method composes (Japanese kana being
    turned into kanji), Enter belongs to the input method: it commits the composition, it never sends."""

    submitted = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.composing = False

    def inputMethodEvent(self, event: QInputMethodEvent) -> None:
        self.composing = bool(event.preeditString())
        super().inputMethodEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self.composing:
                return  # the input method's to handle: neither a send nor a new line
            if not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.submitted.emit()
                return
        super().keyPressEvent(event)
