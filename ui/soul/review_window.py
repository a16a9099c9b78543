"""Reviewing a persona's proposal to change one section of its soul (issue 25): the section now beside the
proposal with what changed marked, the persona's reason, what it drew on (messages and memories, read on a
worker), and the proposed text in a box the person may edit before accepting. Accept or Decline run on a
worker through NexusApp (the persona's owner writes persona.md and its history); Later just closes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

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
from nexus_ark.errors import NexusArkError
from nexus_ark.soul import sections
from nexus_ark.soul.records import SoulProposal
from ui.soul.diff_view import SideBySide, shown
from ui.soul.whole_soul import WholeSoulDialog
from ui.util import theme
from ui.util.i18n import N_, tr
from ui.util.tasks import run_in_background

SNIPPET = 160  # characters of a source shown in its line (the whole text is its tooltip)
# What an archive item is, as the Memory window names it.
ITEM_KINDS = {
    "message": N_("conversation"),
    "episode": N_("episode"),
    "entity": N_("person or thing"),
    "insight": N_("dream diary"),
    "goal": N_("goal"),
    "core": N_("core memory"),
    "kb_chunk": N_("document"),
}


@dataclass(frozen=True)
class Source:
    """One thing the persona drew on, as read from its memory (plain data: made on a worker)."""

    ref: str  # "msg:12", "item:7"
    found: bool
    created_at: str = ""
    speaker: str = ""  # a message's speaker and role
    role: str = ""
    kind: str = ""  # an item's kind
    text: str = ""


def read_sources(app: NexusApp, slug: str, refs: list[str]) -> list[Source]:
    """The proposal's sources from a read-only connection to the persona's memory. Blocks: on a worker."""
    store = app.open_memory(slug)
    try:
        found: list[Source] = []
        for ref in refs:
            what, _, raw = ref.partition(":")
            try:
                number = int(raw)
            except ValueError:
                found.append(Source(ref, False))
                continue
            if what == "msg":
                try:
                    message = store.messages.get(number)
                except NexusArkError:  # forgotten since
                    found.append(Source(ref, False))
                    continue
                found.append(
                    Source(ref, True, message.created_at, message.speaker, message.role, text=message.content)
                )
            elif what == "item":
                item = store.archive.get(number)
                if item is None:
                    found.append(Source(ref, False))
                    continue
                found.append(
                    Source(
                        ref,
                        True,
                        str(item.get("created_at") or ""),
                        kind=str(item.get("kind") or ""),
                        text=str(item.get("text") or ""),
                    )
                )
            else:
                found.append(Source(ref, False))
        return found
    finally:
        store.close()


def section_now(app: NexusApp, slug: str, heading: str) -> str | None:
    """The section as persona.md says it now ("" when it has none; None: the file could not be read).
    Reads the persona's files: on a worker."""
    try:
        soul = app.personas.load(slug).soul
    except NexusArkError:
        return None
    found = sections.find(soul, heading)
    return found.content if found is not None else ""


def local_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1].rstrip() + "…"


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
        self.changed_since = False
        self.sources: list[Source] | None = None
        self.sources_error = ""
        self.busy = False
        self.resize(900, 700)

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

        self.diff = SideBySide()
        self.changed_note = QLabel()
        self.changed_note.setObjectName("soulChangedSince")
        self.changed_note.setWordWrap(True)
        self.changed_note.hide()

        self.sources_caption = QLabel()
        self.source_list = QListWidget()
        self.source_list.setObjectName("soulSources")
        self.source_list.setWordWrap(True)
        self.source_list.setAlternatingRowColors(True)
        self.sources_caption.setBuddy(self.source_list)

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
        self.whole_dialog: WholeSoulDialog | None = None

        top = QVBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.diff, 1)
        top.addWidget(self.changed_note)
        upper = QWidget()
        upper.setLayout(top)
        middle = QVBoxLayout()
        middle.setContentsMargins(0, 0, 0, 0)
        middle.addWidget(self.sources_caption)
        middle.addWidget(self.source_list, 1)
        sources_part = QWidget()
        sources_part.setLayout(middle)
        lower = QVBoxLayout()
        lower.setContentsMargins(0, 0, 0, 0)
        lower.addWidget(self.editor_caption)
        lower.addWidget(self.editor_hint)
        lower.addWidget(self.editor, 1)
        editor_part = QWidget()
        editor_part.setLayout(lower)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        for part in (upper, sources_part, editor_part):
            self.splitter.addWidget(part)
        for index, share in enumerate((5, 2, 3)):  # a section is short: the comparison needs no more
            self.splitter.setStretchFactor(index, share)

        buttons = QHBoxLayout()
        buttons.addWidget(self.whole_button)
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.decline_button)
        buttons.addWidget(self.later_button)
        buttons.addWidget(self.accept_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.reason_caption)
        layout.addWidget(self.reason)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(buttons)

        for caption in (self.reason_caption, self.sources_caption, self.editor_caption):
            bold = caption.font()
            bold.setBold(True)
            caption.setFont(bold)
        self.retranslate()
        self._compare()
        self.editor.setFocus()  # where the person's own words go (not a caret in a read-only pane)
        self.editor.moveCursor(QTextCursor.MoveOperation.End)
        self._load()

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
            self.now_text, self.changed_since = now, True
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
        if not source.found:
            return tr("{ref}: no longer in memory", ref=source.ref)
        when = local_time(source.created_at)
        if source.kind:  # a memory
            kind = tr(ITEM_KINDS[source.kind]) if source.kind in ITEM_KINDS else source.kind
            return f"{when} · {kind}: {_snippet(source.text)}"
        if source.role == "user":
            who = tr("You")
        elif source.speaker in (self.slug, "assistant"):
            who = self.name
        else:
            who = self.names.get(source.speaker, source.speaker)
        return f"{when} · {who}: {_snippet(source.text)}"

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
            lambda: app.accept_soul_proposal(slug, proposal_id, edited),
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
            lambda: app.decline_soul_proposal(slug, proposal_id),
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
