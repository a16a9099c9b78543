"""The soul's history (issue 25): every version of the persona's persona.md, newest first, with when, who
changed it and why; the chosen version's text; a comparison with any other version; and restoring one.

Every read and the restore run on workers (ui.util.tasks) through NexusApp (soul_versions, restore_soul),
which runs them on the persona's own queue; the window holds the versions it was given and never waits.
The list is read again when the soul changes anywhere (the core's "soul_changed": the editor saved, a
proposal was accepted, a version restored), keeping the versions the person was looking at.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.soul.records import SoulVersion
from ui.soul import history_text
from ui.util import theme
from ui.util.core_events import CoreEvents
from ui.util.i18n import LanguageTexts, tr
from ui.util.tasks import run_in_background, while_open

ID_ROLE = Qt.ItemDataRole.UserRole
TEXT_PAGE, COMPARISON_PAGE = 0, 1


class SoulHistoryWindow(QDialog):
    """Every text is set through self.texts: a language switch shows them all again in the new language."""

    loaded = Signal()  # the versions were read and are shown
    restored = Signal(int)  # the version (id) the restore made

    def __init__(self, app: NexusApp, slug: str, parent: QWidget | None = None, name: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("soulHistory")
        self.app, self.slug = app, slug
        self.persona_name = name or slug
        self.versions: list[SoulVersion] = []
        self.comparison: history_text.Comparison | None = None
        self._loading = False
        self._stale = False  # the soul changed while a read was under way: read once more after it
        self._restoring = False
        self._confirm: QMessageBox | None = None
        self._told = False  # the status line says how a restore went: a later read leaves it
        self.texts = LanguageTexts()
        self.resize(1040, 640)
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        split = QSplitter(Qt.Orientation.Vertical)  # the list full width: its reasons are read whole
        split.addWidget(self._build_list())
        split.addWidget(self._build_version_view())
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 5)
        split.setSizes([170, 430])
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(split, 1)
        layout.addLayout(self._build_buttons())

        self.core_events = CoreEvents(app.events, slug, topics=("soul_changed",), parent=self)
        self.core_events.happened.connect(lambda _topic, _payload: self.load())
        self.texts.follow(self._texts)
        self.texts.follow(lambda: self.status.setText(tr("Reading the history…")), key="status")
        self.load()

    def retranslate(self) -> None:
        self.texts.retranslate()

    # -- building ---------------------------------------------------------------------------------
    def _build_list(self) -> QTreeWidget:
        """The versions, newest first, one row each."""
        self.list = QTreeWidget()
        self.list.setObjectName("soulVersions")
        self.list.setColumnCount(4)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.list.header()
        for column in range(3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        return self.list

    def _build_version_view(self) -> QWidget:
        """What to compare the chosen version with, its caption, and its text or the comparison."""
        self.caption = QLabel()
        self.caption.setObjectName("soulVersionCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # a reason in the persona's words, as written
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.compare_label = QLabel()
        self.compare_choice = QComboBox()
        self.compare_choice.setObjectName("compareWith")
        self.compare_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.compare_label.setBuddy(self.compare_choice)
        self.compare_choice.currentIndexChanged.connect(lambda _index: self._show_selected())
        compare_row = QHBoxLayout()
        compare_row.addWidget(self.compare_label)
        compare_row.addWidget(self.compare_choice, 1)
        self.text_view = QPlainTextEdit()
        self.text_view.setObjectName("soulVersionText")
        self.text_view.setReadOnly(True)
        self.text_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.comparison_view = QTextBrowser()
        self.comparison_view.setObjectName("soulComparison")
        self.comparison_view.setOpenLinks(False)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.text_view)
        self.pages.addWidget(self.comparison_view)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(compare_row)
        right_layout.addWidget(self.caption)
        right_layout.addWidget(self.pages, 1)
        return right

    def _build_buttons(self) -> QHBoxLayout:
        self.status = QLabel()
        self.status.setObjectName("soulHistoryStatus")
        self.status.setWordWrap(True)
        self.restore_button = QPushButton()
        self.restore_button.setObjectName("restoreVersion")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(lambda: self.restore())
        self.refresh_button = QPushButton()
        self.refresh_button.clicked.connect(self.load)
        self.close_button = QPushButton()
        self.close_button.clicked.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        for button in (self.restore_button, self.refresh_button, self.close_button):
            bottom.addWidget(button)
        return bottom

    # -- texts ------------------------------------------------------------------------------------
    def _texts(self) -> None:
        self.setWindowTitle(tr("Soul history: {name}", name=self.persona_name))
        self.intro.setText(
            tr(
                "Every version of {name}'s soul (persona.md): who changed it and why. Choose one to read "
                "it, compare it with another, or restore it.",
                name=self.persona_name,
            )
        )
        self.list.setHeaderLabels([tr("Version"), tr("When"), tr("Who"), tr("Why")])
        self.compare_label.setText(tr("Compare with:"))
        self.restore_button.setText(tr("Restore this version…"))
        self.refresh_button.setText(tr("Refresh"))
        self.close_button.setText(tr("Close"))
        if self.versions:
            self._fill()

    def _say(self, text: str, tone: str = "") -> None:
        """The status line (its text is made again in the new language when the language changes)."""
        self.status.setText(theme.tinted(text, tone) if tone else text)

    # -- reading ----------------------------------------------------------------------------------
    def load(self) -> None:
        if self._loading:
            self._stale = True
            return
        self._loading = True
        slug = self.slug
        run_in_background(
            lambda: self.app.souls.versions(slug),
            while_open(self, self._loaded),
            while_open(self, self._load_failed),
        )

    def _loaded(self, versions: list[SoulVersion]) -> None:
        self._loading = False
        if self._stale:
            self._stale = False
            self.load()
            return
        self.versions = versions
        self._fill()
        if not self._told:
            self.texts.follow(lambda: self.status.setText(self._count_text()), key="status")
        self.loaded.emit()

    def _count_text(self) -> str:
        return tr("{count} versions.", count=len(self.versions)) if len(self.versions) != 1 else ""

    def _load_failed(self, message: str) -> None:
        self._loading = False
        self._stale = False
        self.texts.follow(lambda: self._say(_escape(message), "error"), key="status")

    # -- the list ---------------------------------------------------------------------------------
    def _fill(self) -> None:
        """The list (newest first) and the comparison choice, keeping what the person had chosen."""
        chosen, compared = self.selected_id(), self.compared_id()
        latest = self.versions[-1].id if self.versions else None
        self.list.blockSignals(True)
        self.list.clear()
        for version in reversed(self.versions):
            number = history_text.title(version)
            if version.id == latest:
                number = tr("{version} (now)", version=number)
            item = QTreeWidgetItem(
                [
                    number,
                    history_text.when(version),
                    history_text.who(version),
                    history_text.why_short(version),
                ]
            )
            item.setData(0, ID_ROLE, version.id)
            item.setToolTip(3, history_text.why(version))
            if version.id == latest:
                font = item.font(0)
                font.setBold(True)
                item.setFont(0, font)
            self.list.addTopLevelItem(item)
        self.list.blockSignals(False)
        self.compare_choice.blockSignals(True)
        self.compare_choice.clear()
        self.compare_choice.addItem(tr("Nothing: show its text"), None)
        for version in reversed(self.versions):
            self.compare_choice.addItem(history_text.choice_text(version), version.id)
        self.compare_choice.blockSignals(False)
        self.select(chosen if chosen is not None else latest, compare=compared)

    def select(self, version_id: int | None, *, compare: int | None = None) -> None:
        """Show a version (and compare it with another); the tests and the menus choose through here."""
        self.compare_choice.blockSignals(True)
        index = self.compare_choice.findData(compare) if compare is not None else 0
        self.compare_choice.setCurrentIndex(max(index, 0))
        self.compare_choice.blockSignals(False)
        for row in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(row)
            if item is not None and item.data(0, ID_ROLE) == version_id:
                self.list.setCurrentItem(item)
                break
        self._show_selected()

    def compare_with(self, version_id: int | None) -> None:
        index = self.compare_choice.findData(version_id) if version_id is not None else 0
        self.compare_choice.setCurrentIndex(max(index, 0))

    def selected_id(self) -> int | None:
        item = self.list.currentItem()
        return item.data(0, ID_ROLE) if item is not None else None

    def compared_id(self) -> int | None:
        return self.compare_choice.currentData()

    def version(self, version_id: int | None) -> SoulVersion | None:
        return next((v for v in self.versions if v.id == version_id), None)

    # -- what the right side shows ----------------------------------------------------------------
    def _show_selected(self) -> None:
        chosen = self.version(self.selected_id())
        latest = self.versions[-1] if self.versions else None
        already = chosen is not None and latest is not None and chosen.sha256 == latest.sha256
        self.restore_button.setEnabled(chosen is not None and not already and not self._restoring)
        self.restore_button.setToolTip(tr("The soul already says this.") if already else "")
        if chosen is None:
            self.caption.setText("")
            self.text_view.setPlainText("")
            self.pages.setCurrentIndex(TEXT_PAGE)
            return
        other = self.version(self.compared_id())
        if other is None or other.id == chosen.id:
            self.comparison = None
            self.caption.setText(self._about(chosen))
            self.text_view.setPlainText(chosen.text)
            self.pages.setCurrentIndex(TEXT_PAGE)
            return
        old, new = sorted((chosen, other), key=lambda v: v.id)
        self.comparison = history_text.compare(old.text, new.text, self.comparison_view.palette())
        self.caption.setText(
            tr(
                "From {old} to {new}. Lines added: {added}; removed: {removed}.",
                old=history_text.title(old),
                new=history_text.title(new),
                added=self.comparison.added,
                removed=self.comparison.removed,
            )
            + "\n"
            + self._about(new)
        )
        self.comparison_view.setHtml(self.comparison.html)
        self.pages.setCurrentIndex(COMPARISON_PAGE)

    @staticmethod
    def _about(version: SoulVersion) -> str:
        """One version in a line: its name, when, who, and why in full."""
        about = tr(
            "{version}, {when}: {who}",
            version=history_text.title(version),
            when=history_text.when(version),
            who=history_text.who(version),
        )
        why = history_text.why_short(version)
        return about + "\n" + tr("Why: {why}", why=why) if why else about

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.comparison is not None:  # light <-> dark
            self._show_selected()

    # -- restoring --------------------------------------------------------------------------------
    def restore(self) -> None:
        """Ask first (the answer comes back through the box: the window's loop never waits on it)."""
        chosen = self.version(self.selected_id())
        if chosen is None or self._restoring or not self.restore_button.isEnabled():
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            tr("Restore this version"),
            tr(
                "Make {name}'s soul exactly what {version} says again?\n\nThe soul as it is now stays in "
                "the history: you can come back to it. {name} speaks from the restored soul from the next "
                "message.",
                name=self.persona_name,
                version=history_text.title(chosen),
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("confirmRestore")
        box.button(QMessageBox.StandardButton.Yes).setText(tr("Restore"))
        box.button(QMessageBox.StandardButton.Cancel).setText(tr("Cancel"))
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        yes = box.button(QMessageBox.StandardButton.Yes)
        box.finished.connect(lambda _result: self._restore(chosen.id) if box.clickedButton() is yes else None)
        self._confirm = box
        box.open()

    def _restore(self, version_id: int) -> None:
        self._confirm = None
        self._restoring = True
        self._told = True
        self.restore_button.setEnabled(False)
        number = history_text.title(self.version(version_id) or self.versions[-1])
        self.texts.follow(lambda: self._say(tr("Restoring {version}…", version=number)), key="status")
        slug = self.slug
        run_in_background(
            lambda: self.app.souls.restore(slug, version_id),
            while_open(self, lambda made: self._restored(number, made)),
            while_open(self, self._restore_failed),
        )

    def _restored(self, number: str, made: SoulVersion | None) -> None:
        self._restoring = False
        if made is None:
            self.texts.follow(lambda: self._say(tr("The soul already says this.")), key="status")
            self._show_selected()
            return
        self.texts.follow(
            lambda: self._say(
                tr(
                    "Restored {old} as {new}. {name} speaks from it from the next message.",
                    old=number,
                    new=history_text.title(made),
                    name=self.persona_name,
                ),
                "success",
            ),
            key="status",
        )
        self.restored.emit(made.id)
        self.versions = [*self.versions, made]  # shown at once; the read the core's event starts confirms it
        self.list.setCurrentIndex(QModelIndex())  # no current version until the one made is selected
        self._fill()
        self.select(made.id)
        self.load()

    def _restore_failed(self, message: str) -> None:
        self._restoring = False
        self.texts.follow(lambda: self._say(_escape(message), "error"), key="status")
        self._show_selected()

    # -- closing ----------------------------------------------------------------------------------
    def done(self, result: int) -> None:
        """Close without waiting: no more events; a read or a restore under way finishes on its worker
        (the restore is the person's decision, already taken) and its answer is dropped."""
        self.core_events.close()
        super().done(result)


def _escape(text: str) -> str:
    import html

    return html.escape(text).replace("\n", "<br>")
