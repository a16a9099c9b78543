"""Reviewing a persona's proposal to change one section of its soul (issue 25): the section now beside the
proposal with what changed marked, the persona's reason, what it drew on (messages and memories, read on a
worker), and the proposed text in a box the person may edit before accepting. Accept or Decline run on a
worker through NexusApp (the persona's owner writes persona.md and its history); Later just closes."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.soul import sections
from nexus_ark.soul.records import SoulProposal
from ui.soul.diff_view import SideBySide, shown
from ui.soul.proposal_sources import Source, local_time, read_sources, section_now, source_line
from ui.soul.whole_soul import WholeSoulDialog
from ui.util import theme
from ui.util.i18n import tr
from ui.util.tasks import run_in_background


class SoulReviewWindow(QDialog):
    """One proposal, reviewed. `decided(slug, proposal id, state)` once it is accepted or declined, and
    `settled()` after every answer (a refusal too: decided elsewhere meanwhile). Closed while its decision is
    under way, it stays (hidden) until the answer comes, so both are still sent; then it is deleted."""

    decided = Signal(str, int, str)
    settled = Signal()

    def __init__(
        self,
        app: NexusApp,
        slug: str,
        proposal: SoulProposal,
        name: str,
        names: dict[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("soulReviewWindow")
        self.app = app
        self.slug = slug
        self.proposal = proposal
        self.name = name
        self.names = names or {}
        self.now_text = proposal.current_text
        self.sources: list[Source] | None = None
        self.sources_error = ""
        self.busy = False
        self.resize(900, 700)
        self.whole_dialog: WholeSoulDialog | None = None
        self._build_header(proposal)
        self._build_comparison()
        self._build_sources()
        self._build_editor(proposal)
        self._build_buttons()
        self._lay_out()
        self.retranslate()
        self._compare()
        self.editor.setFocus()  # where the person's own words go (not a caret in a read-only pane)
        self.editor.moveCursor(QTextCursor.MoveOperation.End)
        self._load()

    # -- building ---------------------------------------------------------------------------------
    def _build_header(self, proposal: SoulProposal) -> None:
        """The title, when and how it was proposed, and the persona's reason."""
        self.heading = QLabel()
        self.heading.setObjectName("soulReviewHeading")
        self.heading.setWordWrap(True)
        font = self.heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.heading.setFont(font)
        self.subtitle = QLabel()
        self.subtitle.setObjectName("soulReviewWhen")
        theme.set_tone(self.subtitle, "muted")
        self.reason_caption = QLabel()
        self.reason = QLabel(proposal.reason)
        self.reason.setObjectName("soulReason")
        self.reason.setWordWrap(True)
        self.reason.setTextFormat(Qt.TextFormat.PlainText)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        theme.set_tone(self.reason, "note-box")

    def _build_comparison(self) -> None:
        """The section now beside the proposal (or the edit), and the note that it changed since."""
        self.diff = SideBySide()
        self.changed_note = QLabel()
        self.changed_note.setObjectName("soulChangedSince")
        self.changed_note.setWordWrap(True)
        self.changed_note.hide()

    def _build_sources(self) -> None:
        self.sources_caption = QLabel()
        self.source_list = QListWidget()
        self.source_list.setObjectName("soulSources")
        self.source_list.setWordWrap(True)
        self.source_list.setAlternatingRowColors(True)
        self.sources_caption.setBuddy(self.source_list)

    def _build_editor(self, proposal: SoulProposal) -> None:
        """The proposed text to edit; the comparison follows the edit a moment after typing stops."""
        self.editor_caption = QLabel()
        self.editor_hint = QLabel()
        self.editor_hint.setWordWrap(True)
        theme.set_tone(self.editor_hint, "muted")
        self.editor = QPlainTextEdit(proposal.proposed_text)
        self.editor.setObjectName("soulEditedText")
        self.editor_caption.setBuddy(self.editor)
        self._diff_timer = QTimer(self)
        self._diff_timer.setSingleShot(True)
        self._diff_timer.setInterval(150)
        self._diff_timer.timeout.connect(self._compare)
        self.editor.textChanged.connect(self._edited)

    def _build_buttons(self) -> None:
        self.status = QLabel()
        self.status.setObjectName("soulReviewStatus")
        self.status.setWordWrap(True)
        self.decline_button = QPushButton()
        self.decline_button.setObjectName("declineProposal")
        self.decline_button.clicked.connect(self.ask_decline)
        self.later_button = QPushButton()
        self.later_button.setObjectName("laterProposal")
        self.later_button.clicked.connect(self.close)
        self.accept_button = QPushButton()
        self.accept_button.setObjectName("acceptProposal")
        self.accept_button.setDefault(True)
        self.accept_button.clicked.connect(self.accept_proposal)
        self.whole_button = QPushButton()  # the whole soul now and with this change, side by side
        self.whole_button.setObjectName("wholeSoul")
        self.whole_button.clicked.connect(self.show_whole_soul)

    def _lay_out(self) -> None:
        """The header above three panes (comparison, sources, editor) that share the height, then the
        buttons with the status line; captions in bold."""
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        panes = (  # each pane's widgets, and the one that takes the height left
            ((self.diff, self.changed_note), self.diff),
            ((self.sources_caption, self.source_list), self.source_list),
            ((self.editor_caption, self.editor_hint, self.editor), self.editor),
        )
        for widgets, stretched in panes:
            self.splitter.addWidget(_pane(widgets, stretched))
        for index, share in enumerate((5, 2, 3)):  # a section is short: the comparison needs no more
            self.splitter.setStretchFactor(index, share)
        buttons = QHBoxLayout()
        buttons.addWidget(self.whole_button)
        buttons.addWidget(self.status, 1)
        for button in (self.decline_button, self.later_button, self.accept_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        for label in (self.heading, self.subtitle, self.reason_caption, self.reason):
            layout.addWidget(label)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(buttons)
        for caption in (self.reason_caption, self.sources_caption, self.editor_caption):
            bold = caption.font()
            bold.setBold(True)
            caption.setFont(bold)

    # -- texts ------------------------------------------------------------------------------------
    def title_text(self) -> str:
        return tr("{name} would like to change “{section}”", name=self.name, section=self.proposal.section)

    def retranslate(self) -> None:
        title = self.title_text()
        self.setWindowTitle(title)
        self.heading.setText(title)
        origin = (
            tr("Proposed {when}, after a dream", when=local_time(self.proposal.created_at))
            if self.proposal.origin == "dream"
            else tr("Proposed {when}, during a conversation", when=local_time(self.proposal.created_at))
        )
        self.subtitle.setText(origin)
        self.reason_caption.setText(tr("Why {name} wants this:", name=self.name))
        self.diff.before_caption.setText(tr("Now"))
        self.diff.after_caption.setText(self._after_caption())
        self.diff.before.setPlaceholderText(
            tr("There is no such section yet: it would be added at the end of the soul.")
        )
        self.changed_note.setText(
            tr("This section was changed after the proposal was made: “Now” shows it as it is today.")
        )
        self.sources_caption.setText(tr("What {name} drew on:", name=self.name))
        self.editor_caption.setText(tr("Edit before accepting:"))
        self.editor_hint.setText(
            tr("Only this section changes; the rest of the soul stays exactly as it is.")
        )
        self.whole_button.setText(tr("Whole soul…"))
        self.decline_button.setText(tr("Decline…"))
        self.later_button.setText(tr("Later"))
        self.accept_button.setText(tr("Accept"))
        self._show_sources()

    def _after_caption(self) -> str:
        return tr("With your edits") if self.edited() else tr("Proposed")

    def edited(self) -> bool:
        return self.editor.toPlainText().strip() != self.proposal.proposed_text.strip()

    # -- reading ----------------------------------------------------------------------------------
    def _load(self) -> None:
        slug, proposal, app = self.slug, self.proposal, self.app
        run_in_background(
            lambda: read_sources(app, slug, proposal.sources), self._sources_read, self._sources_failed
        )
        run_in_background(lambda: section_now(app, slug, proposal.section), self._now_read, lambda _m: None)

    def _sources_read(self, sources: list[Source]) -> None:
        if isValid(self):
            self.sources = sources
            self._show_sources()

    def _sources_failed(self, message: str) -> None:
        if isValid(self):
            self.sources, self.sources_error = [], message
            self._show_sources()

    def _now_read(self, now: str | None) -> None:
        if not isValid(self) or now is None:
            return
        if sections.normalised(now) != sections.normalised(self.proposal.current_text):
            self.now_text = now
            self.changed_note.show()
            self._compare()

    def _show_sources(self) -> None:
        self.source_list.clear()
        if self.sources is None:
            self.source_list.addItem(tr("Loading…"))
            return
        if self.sources_error:
            self.source_list.addItem(tr("Error: {message}", message=self.sources_error.splitlines()[0]))
        elif not self.sources:
            self.source_list.addItem(tr("No sources were given."))
        for source in self.sources:
            item = QListWidgetItem(self.source_line(source))
            item.setData(Qt.ItemDataRole.UserRole, source.ref)
            if source.found:
                item.setToolTip(source.text)
            self.source_list.addItem(item)

    def source_line(self, source: Source) -> str:
        return source_line(source, self.slug, self.name, self.names)

    def show_whole_soul(self) -> None:
        """persona.md now and with this change (the edit as it stands), side by side: read on a worker."""
        slug, app, section, text = self.slug, self.app, self.proposal.section, self.editor.toPlainText()

        def read() -> tuple[str, str]:
            soul = app.personas.load(slug).soul
            return soul, sections.replace(soul, section, text)  # a section it lacks goes at the end

        def show(souls: tuple[str, str]) -> None:
            if not isValid(self):
                return
            if self.whole_dialog is not None and isValid(self.whole_dialog):
                self.whole_dialog.close()
            self.whole_dialog = WholeSoulDialog(self.name, section, *souls, self)
            self.whole_dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self.whole_dialog.show()

        def failed(message: str) -> None:
            if isValid(self):
                self.status.setText(message)
                theme.set_tone(self.status, "error")

        run_in_background(read, show, failed)

    # -- the comparison follows the edit ----------------------------------------------------------
    def _edited(self) -> None:
        self.accept_button.setEnabled(not self.busy and bool(self.editor.toPlainText().strip()))
        self._diff_timer.start()

    def _compare(self) -> None:
        self.diff.after_caption.setText(self._after_caption())
        self.diff.set_texts(shown(self.now_text), self.editor.toPlainText())

    def done(self, result: int) -> None:
        """Closed (decided, Later, Esc or the title bar): deleted once the answer to a decision under way
        has come (the window's parent holds no reference to it that could keep it)."""
        super().done(result)
        if not self.busy:
            self.deleteLater()

    # -- deciding ---------------------------------------------------------------------------------
    def accept_proposal(self) -> None:
        text = self.editor.toPlainText()
        if not text.strip() or self.busy:
            return
        slug, proposal_id, app = self.slug, self.proposal.id, self.app
        edited = text if self.edited() else None  # None: exactly what was proposed
        self._work(tr("Changing the soul…"))
        run_in_background(
            lambda: app.souls.accept(slug, proposal_id, edited),
            lambda _version: self._answered("accepted"),
            self._refused,
        )

    def ask_decline(self) -> None:
        """Ask first (not blocking: the box is window-modal and answers through a signal)."""
        if self.busy:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            tr("Decline this change?"),
            tr(
                "{name}'s soul stays as it is, and {name} will not propose this change again.",
                name=self.name,
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("declineConfirm")
        yes = box.button(QMessageBox.StandardButton.Yes)
        yes.setText(tr("Decline"))
        yes.clicked.connect(self.decline)
        box.button(QMessageBox.StandardButton.Cancel).setText(tr("Cancel"))
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def decline(self) -> None:
        if self.busy:
            return
        slug, proposal_id, app = self.slug, self.proposal.id, self.app
        self._work(tr("Declining…"))
        run_in_background(
            lambda: app.souls.decline(slug, proposal_id),
            lambda _proposal: self._answered("declined"),
            self._refused,
        )

    def _work(self, message: str) -> None:
        self.busy = True
        self.status.setText(message)
        theme.set_tone(self.status, "muted")
        for button in (self.accept_button, self.decline_button):
            button.setEnabled(False)

    def _answered(self, state: str) -> None:
        if not isValid(self):  # its parent went, and it with it
            return
        self.busy = False
        self.decided.emit(self.slug, self.proposal.id, state)
        self.settled.emit()
        if self.isVisible():
            self.close()
        else:  # closed while it was being decided
            self.deleteLater()

    def _refused(self, message: str) -> None:
        if not isValid(self):
            return
        self.busy = False
        self.settled.emit()
        if not self.isVisible():
            self.deleteLater()
            return
        self.status.setText(message)
        theme.set_tone(self.status, "error")
        self.decline_button.setEnabled(True)
        self.accept_button.setEnabled(bool(self.editor.toPlainText().strip()))


def _pane(widgets: tuple[QWidget, ...], stretched: QWidget) -> QWidget:
    """Widgets one above the other, `stretched` taking what height is left (a pane of the splitter)."""
    column = QVBoxLayout()
    column.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        column.addWidget(widget, 1 if widget is stretched else 0)
    pane = QWidget()
    pane.setLayout(column)
    return pane
