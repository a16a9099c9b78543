"""The persona editor: the soul (persona.md) in a plain-text editor beside its Markdown preview, the settings
(persona.toml) in a form generated from their pydantic model (ui/util/settings_form.py; the Growth page:
ui/personas/soul_growth.py), the avatar, duplicate and delete.

Reading the persona, saving, copying and deleting run on workers (ui.util.tasks); the core validates and
writes (app.admin.save_persona and friends). A bad value is refused before anything is written, with the
field named and its widget marked.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFontDatabase, QImage, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.personas.model import PersonaInfo
from nexus_ark.personas.store import Persona
from ui.personas.avatar_file import avatar_png
from ui.personas.soul_growth import PersonaForm
from ui.personas.voice_page import VoicePreview
from ui.util import theme
from ui.util.avatars import avatar_image
from ui.util.chat_markdown import joined_without_spaces
from ui.util.form_fields import field_path_label, label
from ui.util.i18n import tr, tr_notice
from ui.util.settings_form import GENERAL
from ui.util.tasks import run_in_background, while_open

AVATAR_SHOWN_PX = 72


# -- the window ----------------------------------------------------------------------------------------
class PersonaEditor(QDialog):
    saved = Signal(str)  # slug: its persona.md / persona.toml changed
    personas_changed = Signal(str)  # a persona was added (its slug): the list should show it
    persona_deleted = Signal(str, str)  # slug, the folder its backup copy was kept in
    history_requested = Signal(str, str)  # slug, name: open the soul's history (the main window does)
    tools_requested = Signal(str)  # slug: Settings → Tools on this persona (the main window opens it)

    def __init__(
        self,
        app: NexusApp,
        slug: str,
        parent: QWidget | None = None,
        *,
        busy: Callable[[str], bool] = lambda _slug: False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("personaEditor")
        self.app = app
        self.slug = slug
        self.busy = busy
        self.persona: Persona | None = None
        self.ask_before_discard = True
        self._soul_loaded = ""
        self._working = False
        self._close_after_save = False
        self.resize(900, 640)
        self.form = PersonaForm()
        self.form.growth.history_button.clicked.connect(
            lambda: self.history_requested.emit(self.slug, self.title.text())
        )
        self.voice_preview = VoicePreview(app, self.form.voice, self._name_and_language, self)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_soul_page(), "")
        for page in self.form.pages.values():
            self.tabs.addTab(page, "")
        layout = QVBoxLayout(self)
        layout.addLayout(self._build_header())
        layout.addWidget(self.tabs, 1)
        layout.addLayout(self._build_buttons())
        self._set_enabled(False)
        self.retranslate()
        self.load(slug)

    # -- building ---------------------------------------------------------------------------------
    def _build_header(self) -> QHBoxLayout:
        """The avatar, the persona's name and folder, and what is done to the whole persona."""
        self.avatar = QLabel()
        self.avatar.setObjectName("avatar")
        self.avatar.setFixedSize(AVATAR_SHOWN_PX, AVATAR_SHOWN_PX)
        self.title = QLabel()
        self.title.setObjectName("personaTitle")
        title_font = self.title.font()
        title_font.setPointSizeF(title_font.pointSizeF() * 1.5)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.subtitle = QLabel()
        self.subtitle.setObjectName("personaFolder")
        self.subtitle.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.avatar_button = QPushButton()
        self.avatar_button.setObjectName("avatarButton")
        self.avatar_button.clicked.connect(lambda: self.choose_avatar())
        self.duplicate_button = QPushButton()
        self.duplicate_button.setObjectName("duplicateButton")
        self.duplicate_button.clicked.connect(lambda: self.duplicate())
        self.delete_button = QPushButton()
        self.delete_button.setObjectName("deleteButton")
        self.delete_button.clicked.connect(lambda: self.delete())
        self.tools_button = QPushButton()
        self.tools_button.setObjectName("personaToolsButton")
        self.tools_button.clicked.connect(lambda: self.tools_requested.emit(self.slug))
        titles = QVBoxLayout()
        titles.addWidget(self.title)
        titles.addWidget(self.subtitle)
        header = QHBoxLayout()
        header.addWidget(self.avatar)
        header.addLayout(titles, 1)
        for button in (self.avatar_button, self.tools_button, self.duplicate_button, self.delete_button):
            header.addWidget(button)
        return header

    def _build_soul_page(self) -> QWidget:
        """persona.md beside its preview, which follows the text a moment after typing stops."""
        self.soul_edit = QPlainTextEdit()
        self.soul_edit.setObjectName("soulEdit")
        self.soul_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.preview = QTextBrowser()
        self.preview.setObjectName("soulPreview")
        self.preview.setOpenExternalLinks(True)
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(250)
        self._preview_timer.timeout.connect(self.update_preview)
        self.soul_edit.textChanged.connect(self._preview_timer.start)  # the preview and the Growth page
        self.soul_hint = QLabel()
        self.soul_hint.setWordWrap(True)
        soul_split = QSplitter()
        soul_split.addWidget(self.soul_edit)
        soul_split.addWidget(self.preview)
        soul_page = QWidget()
        soul_layout = QVBoxLayout(soul_page)
        soul_layout.addWidget(self.soul_hint)
        soul_layout.addWidget(soul_split, 1)
        return soul_page

    def _build_buttons(self) -> QHBoxLayout:
        self.status = QLabel()
        self.status.setObjectName("editorStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.save_button = QPushButton()
        self.save_button.setObjectName("saveButton")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(lambda: self.save())
        self.close_button = QPushButton()
        self.close_button.clicked.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.save_button)
        bottom.addWidget(self.close_button)
        return bottom

    # -- texts ------------------------------------------------------------------------------------
    def retranslate(self) -> None:
        name = self.persona.settings.name if self.persona else self.slug
        self.setWindowTitle(tr("Edit persona: {name}", name=name))
        self.avatar_button.setText(tr("Change avatar…"))
        self.duplicate_button.setText(tr("Duplicate…"))
        self.tools_button.setText(tr("Tools…"))
        self.tools_button.setToolTip(
            tr("The MCP servers and tools this persona may use, and your decision for each")
        )
        self.delete_button.setText(tr("Delete…"))
        self.save_button.setText(tr("Save"))
        self.close_button.setText(tr("Close"))
        self.soul_hint.setText(
            tr(
                "The soul: who the persona is, in Markdown. It comes first in every prompt. "
                "The preview is on the right."
            )
        )
        self.tabs.setTabText(0, tr("Soul"))
        for index, key in enumerate(self.form.pages, start=1):
            self.tabs.setTabText(index, tr("Persona") if key == GENERAL else label(key))
        self.form.retranslate()

    def _name_and_language(self) -> tuple[str, str]:
        general = self.form.values()  # as the form holds them now (Preview speaks before saving)
        return str(general.get("name") or self.slug), str(general.get("language") or "en")

    # -- loading ----------------------------------------------------------------------------------
    def load(self, slug: str) -> None:
        self.slug = slug
        self.status.setText(tr("Loading…"))

        def read() -> tuple[Persona, QImage]:
            persona = self.app.personas.load(slug)
            picture = self.app.personas.store.avatar_file(slug)
            return persona, avatar_image(persona.settings.name, picture, AVATAR_SHOWN_PX)

        run_in_background(read, while_open(self, self._show), while_open(self, self._load_failed))

    def _show(self, loaded: tuple[Persona, QImage]) -> None:
        persona, image = loaded
        if persona.slug != self.slug:
            return
        self.persona = persona
        self.form.growth.set_soul(persona.soul)  # its sections, before the fixed ones are ticked
        self.form.set_settings(persona.settings)
        self._soul_loaded = persona.soul
        self.soul_edit.setPlainText(persona.soul)
        self.update_preview()
        self._show_avatar(image)
        self.title.setText(persona.settings.name)
        self.subtitle.setText(str(persona.folder))
        self.status.setText("")
        self._set_enabled(True)
        self.retranslate()

    def _load_failed(self, message: str) -> None:
        self.status.setText(theme.tinted(message, "error"))

    def _show_avatar(self, image: QImage) -> None:
        """The picture (or the initial's disc), drawn on a worker; here only scaled to the label."""
        shown = image.scaled(
            AVATAR_SHOWN_PX,
            AVATAR_SHOWN_PX,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
        self.avatar.setPixmap(QPixmap.fromImage(shown))

    def update_preview(self) -> None:
        text = self.soul_edit.toPlainText()
        self.preview.setMarkdown(joined_without_spaces(text))
        self.form.growth.set_soul(text)  # the sections that may be fixed, as the soul has them now

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (
            self.save_button,
            self.avatar_button,
            self.duplicate_button,
            self.delete_button,
            self.tabs,
        ):
            widget.setEnabled(enabled)

    # -- saving -----------------------------------------------------------------------------------
    def has_changes(self) -> bool:
        return self.persona is not None and (
            self.soul_edit.toPlainText() != self._soul_loaded or bool(self.form.changes())
        )

    def _clear_marks(self) -> None:
        for editor in self.form.all_editors():
            editor.widget.setStyleSheet("")

    def save(self) -> bool:
        """Validate, then write on a worker. False when something was refused (nothing is written)."""
        if self.persona is None or self._working:
            return False
        self._clear_marks()
        problems = self.form.problems()
        if problems:
            self._show_problems(problems)
            return False
        changes = self.form.changes()
        soul = self.soul_edit.toPlainText()
        soul_changed = soul != self._soul_loaded
        if not changes and not soul_changed:
            self.status.setText(tr("Nothing changed."))
            return True
        slug = self.slug
        self._working = True
        self.status.setText(tr("Saving…"))
        run_in_background(
            lambda: self.app.admin.save_persona(slug, soul=soul if soul_changed else None, settings=changes),
            while_open(self, self._saved),
            while_open(self, self._failed),
        )
        return True

    def _show_problems(self, problems: list[tuple[tuple[str | int, ...], str]]) -> None:
        lines = []
        for loc, message in problems:
            lines.append(f"{field_path_label(loc)}: {tr_notice(message)}")
            editor = self.form.find(loc)
            if editor is not None:
                editor.widget.setStyleSheet(f"border: 2px solid {theme.colour('error').name()};")
        first = problems[0][0]
        self.tabs.setCurrentWidget(self.form.pages[self.form.section_of(first)])
        editor = self.form.find(first)
        if editor is not None:
            editor.widget.setFocus()
        self.status.setText(
            theme.tinted(
                tr("Not saved: {problems}", problems="<br>".join(_escape(line) for line in lines)), "error"
            )
        )

    def _saved(self, persona: Persona) -> None:
        self._working = False
        if self._close_after_save:
            self._close_after_save = False
            self.saved.emit(persona.slug)
            self.persona = None  # nothing left to ask about
            self.close()
            return
        self.persona = persona
        self.form.set_settings(persona.settings)
        self._soul_loaded = persona.soul
        self.title.setText(persona.settings.name)
        self.retranslate()
        self.status.setText(tr("Saved. {name} uses it from the next message.", name=persona.settings.name))
        self.saved.emit(persona.slug)

    def _failed(self, message: str) -> None:
        self._working = False
        self._close_after_save = False
        self.status.setText(theme.tinted(_escape(message), "error"))

    # -- avatar, duplicate, delete ----------------------------------------------------------------
    def choose_avatar(self, path: str | None = None) -> None:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, tr("Choose an avatar"), "", tr("Images") + " (*.png *.jpg *.jpeg)"
            )
        if not path or self.persona is None:
            return
        slug = self.slug

        def store() -> QImage:
            png, image = avatar_png(Path(path))
            self.app.admin.set_avatar(slug, png)
            return image

        self.status.setText(tr("Saving the avatar…"))
        run_in_background(store, while_open(self, self._avatar_saved), while_open(self, self._failed))

    def _avatar_saved(self, image: QImage) -> None:
        self._show_avatar(image)
        self.status.setText(tr("Avatar saved."))
        self.saved.emit(self.slug)

    def duplicate(self, name: str | None = None) -> None:
        if self.persona is None or self._working:
            return
        if name is None:
            name, ok = QInputDialog.getText(
                self,
                tr("Duplicate persona"),
                tr("Name of the copy (its memory is copied too):"),
                text=tr("{name} (copy)", name=self.persona.settings.name),
            )
            if not ok or not name.strip():
                return
        slug = self.slug
        self._working = True
        self.status.setText(tr("Copying…"))
        run_in_background(
            lambda: self.app.admin.duplicate_persona(slug, name),
            while_open(self, self._duplicated),
            while_open(self, self._failed),
        )

    def _duplicated(self, info: PersonaInfo) -> None:
        self._working = False
        self.personas_changed.emit(info.slug)
        self.load(info.slug)  # go on editing the copy
        self.status.setText(tr("Duplicated as {name}. You are now editing the copy.", name=info.name))

    def delete(self, *, confirm: bool = True) -> None:
        if self.persona is None or self._working:
            return
        name = self.persona.settings.name
        if self.busy(self.slug):
            self._failed(tr("{name} is replying: wait until the reply is finished.", name=name))
            return
        if confirm:
            answer = QMessageBox.warning(
                self,
                tr("Delete persona"),
                tr(
                    "Delete {name}? Its soul, settings and memory are removed from the persona list.\n\n"
                    "A copy of its whole folder is kept in the backups folder.",
                    name=name,
                ),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        slug = self.slug
        self._working = True
        self.status.setText(tr("Deleting {name}…", name=name))
        run_in_background(
            lambda: self.app.admin.delete_persona(slug),
            lambda kept: self._deleted(slug, kept),
            while_open(self, self._failed),
        )

    def _deleted(self, slug: str, kept: Path) -> None:
        if not isValid(self):
            return
        self._working = False
        self.persona = None
        self.persona_deleted.emit(slug, str(kept))
        self.close()

    # -- closing ----------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.ask_before_discard and self.isVisible() and self.has_changes():
            answer = QMessageBox.question(
                self,
                tr("Unsaved changes"),
                tr("Save the changes to {name}?", name=self.persona.settings.name if self.persona else ""),
                QMessageBox.StandardButton.Save
                | QMessageBox.StandardButton.Discard
                | QMessageBox.StandardButton.Cancel,
            )
            if answer == QMessageBox.StandardButton.Cancel:
                event.ignore()
                return
            if answer == QMessageBox.StandardButton.Save:
                event.ignore()  # closed once saved; a refused value keeps the window open, marked
                self._close_after_save = self.save() and self._working
                return
        self.voice_preview.stop()
        super().closeEvent(event)


def _escape(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")
