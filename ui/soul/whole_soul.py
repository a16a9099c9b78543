"""The whole soul beside a proposal (the review's Whole soul…): persona.md as it is now, and as it would be
with the section changed (the person's edit included), side by side with what changes marked and scrolled
into view. Everything else in the file is the same byte for byte (soul/sections.replace), which the person
sees here instead of taking on trust."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from ui.soul.diff_view import SideBySide
from ui.util import theme
from ui.util.i18n import tr


class WholeSoulDialog(QDialog):
    def __init__(self, name: str, section: str, now: str, after: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("wholeSoulDialog")
        self.name, self.section = name, section
        self.resize(1000, 720)
        self.note = QLabel()
        self.note.setWordWrap(True)
        theme.set_tone(self.note, "muted")
        self.diff = SideBySide()
        self.diff.before.setObjectName("wholeSoulNow")
        self.diff.after.setObjectName("wholeSoulAfter")
        self.diff.set_texts(now, after)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.diff, 1)
        layout.addWidget(buttons)
        self.retranslate()
        self._show_change()

    def retranslate(self) -> None:
        self.setWindowTitle(
            tr("{name}'s whole soul, with “{section}” changed", name=self.name, section=self.section)
        )
        self.note.setText(
            tr("Only the marked lines change; everything else in the soul stays exactly as it is.")
        )
        self.diff.before_caption.setText(tr("Now"))
        self.diff.after_caption.setText(tr("After the change"))
        self.close_button.setText(tr("Close"))

    def _show_change(self) -> None:
        """The first changed line of the new soul (as set_texts marked it) scrolled into view (the panes
        scroll together)."""
        lines = self.diff.after.marks.lines
        if not lines:
            return
        block = self.diff.after.document().findBlockByNumber(lines[0])
        if block.isValid():
            self.diff.after.setTextCursor(QTextCursor(block))
            self.diff.after.centerCursor()
