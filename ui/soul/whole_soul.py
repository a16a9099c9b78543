"""The whole soul beside a proposal (the review's Whole soul…): persona.md as it is now, and as it would be
with the section changed (the person's edit included), side by side with what changes marked and scrolled
into view. Everything else in the file is the same byte for byte (soul/sections.replace), which the person
sees here instead of taking on trust."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from nexus_ark.soul import sections
from ui.soul.diff_view import SideBySide, compare, shown
from ui.util import theme
from ui.util.i18n import tr


def soul_after(soul: str, section: str, text: str) -> str:
    """persona.md as it would be once the section says `text` (a section it lacks is added at the end)."""
    return sections.replace(soul, section, text)


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
        self._show_change(now, after)

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

    def _show_change(self, now: str, after: str) -> None:
        """The first changed line of the new soul scrolled into view (the panes scroll together)."""
        _before, marks = compare(shown(now), shown(after))
        if not marks.lines:
            return
        block = self.diff.after.document().findBlockByNumber(marks.lines[0])
        if block.isValid():
            self.diff.after.setTextCursor(QTextCursor(block))
            self.diff.after.centerCursor()
