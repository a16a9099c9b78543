"""The Settings window: language, look, text size, notifications and the tray, the default models, the
data folder and the personas' memory backups (list and restore one), the tool servers, and voice (the sound
devices, recognisers and voices to download: ui/settings/voice_panel.py).

What the window shows comes from the app's settings in memory; what needs the disk (the persona list, the
backups, the model catalogue) is read on a worker. Apply shows a new language, theme or text size at once
and saves config.toml on a worker; a restore goes through the core on a worker, after a confirmation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.config import AppSettings
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.catalogue import CatalogueEntry, load_catalogue
from nexus_ark.providers.secrets import store_key
from ui.settings.data_panel import DataPanel
from ui.settings.tools_panel import ToolsPanel
from ui.settings.voice_panel import VoicePanel
from ui.util import i18n, theme
from ui.util.desktop import tray_available
from ui.util.i18n import tr
from ui.util.tasks import run_in_background, while_open

FONT_MIN = 5  # the spin box's lowest step shows "the desktop's size" (stored as 0)
FONT_MAX = 32
MODEL_KEYS = {"spec", "api_base", "api_key"}  # what the pickers choose; the rest of a model's settings stay


class SettingsDialog(QDialog):
    """The General, Notifications and Default models tabs are the window's own; Data and backups is a
    panel it owns (DataPanel), given the app and the status line."""

    language_changed = Signal(str)  # the language chosen: "auto", "en" or "ja"
    applied = Signal()  # the settings were saved
    persona_restored = Signal(str)  # a persona's memory now holds a backup's content
    first_start_requested = Signal()  # "First start…": the window opens the first-start flow again

    def __init__(
        self,
        app: NexusApp,
        parent: QWidget | None = None,
        *,
        current_persona: str = "",
        busy: Callable[[str], bool] = lambda _slug: False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.app = app
        self._pickers_ready = False
        self.setMinimumWidth(620)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._general_tab(), "")
        self.tabs.addTab(self._notifications_tab(), "")
        self.tabs.addTab(self._models_tab(), "")
        self.status = QLabel()
        self.status.setObjectName("settingsStatus")
        self.status.setWordWrap(True)
        self.data = DataPanel(app, self.status.setText, current_persona=current_persona, busy=busy)
        self.data.persona_restored.connect(self.persona_restored)
        self.tabs.addTab(self.data, "")
        self.tools = ToolsPanel(app, self.status.setText, current_persona=current_persona)
        self.tabs.addTab(self.tools, "")
        self.voice = VoicePanel(app, self.status.setText)
        self.tabs.addTab(self.voice, "")
        self.finished.connect(lambda _result: self.voice.stop_downloads())
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button.clicked.connect(lambda: self.apply(close=True))
        self.apply_button.clicked.connect(lambda: self.apply())
        self.cancel_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.show_settings(app.settings)
        self.retranslate()
        self.data.refresh_personas()
        run_in_background(
            load_catalogue, while_open(self, self._build_pickers), while_open(self, self._show_error)
        )

    # -- construction -----------------------------------------------------------------------------
    def _general_tab(self) -> QWidget:
        self.user_name = QLineEdit()
        self.user_name.setObjectName("userName")
        self.user_name.setMaxLength(80)
        self.user_name_label = QLabel()
        self.user_name_hint = QLabel()
        self.user_name_hint.setWordWrap(True)
        self.first_start_button = QPushButton()
        self.first_start_button.setObjectName("firstStartButton")
        self.first_start_button.clicked.connect(self.first_start_requested)
        self.language_box = QComboBox()
        self.language_box.setObjectName("languageBox")
        for code in ("auto", "en", "ja"):
            self.language_box.addItem("", code)
        self.theme_box = QComboBox()
        self.theme_box.setObjectName("themeBox")
        for code in theme.THEMES:
            self.theme_box.addItem("", code)
        self.font_size = QSpinBox()
        self.font_size.setObjectName("fontSize")
        self.font_size.setRange(FONT_MIN, FONT_MAX)
        self.language_label, self.theme_label, self.font_label = QLabel(), QLabel(), QLabel()
        self.look_hint = QLabel()
        self.look_hint.setWordWrap(True)
        page = QWidget()
        form = QFormLayout(page)
        form.addRow(self.user_name_label, self.user_name)
        form.addRow(self.user_name_hint)
        form.addRow(self.language_label, self.language_box)
        form.addRow(self.theme_label, self.theme_box)
        form.addRow(self.font_label, self.font_size)
        form.addRow(self.look_hint)
        form.addRow(self.first_start_button)
        return page

    def _notifications_tab(self) -> QWidget:
        self.notifications_check = QCheckBox()
        self.notifications_check.setObjectName("desktopNotifications")
        self.tray_check = QCheckBox()
        self.tray_check.setObjectName("keepRunningInTray")
        self.inbox_note = QLabel()
        self.inbox_note.setWordWrap(True)
        self.tray_note = QLabel()
        self.tray_note.setWordWrap(True)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.notifications_check)
        layout.addWidget(self.inbox_note)
        layout.addSpacing(12)
        layout.addWidget(self.tray_check)
        layout.addWidget(self.tray_note)
        layout.addStretch(1)
        return page

    def _models_tab(self) -> QWidget:
        self.models_note = QLabel()
        self.models_note.setWordWrap(True)
        self.chat_box = QGroupBox()
        self.chat_layout = QVBoxLayout(self.chat_box)
        self.models_loading = QLabel()
        self.chat_layout.addWidget(self.models_loading)
        self.internal_box = QGroupBox()
        self.internal_layout = QVBoxLayout(self.internal_box)
        self.same_as_chat = QCheckBox()
        self.same_as_chat.setObjectName("sameAsChat")
        self.internal_layout.addWidget(self.same_as_chat)
        self.chat_picker: Any = None
        self.internal_picker: Any = None
        self._catalogue: list[CatalogueEntry] = []
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.models_note)
        layout.addWidget(self.chat_box)
        layout.addWidget(self.internal_box)
        layout.addStretch(1)
        return page

    def show_tools(self, slug: str) -> None:
        """The Tools tab, on this persona's servers and decisions."""
        self.tools.choose_persona(slug)
        self.tabs.setCurrentWidget(self.tools)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Settings"))
        for index, title in enumerate(
            (
                tr("General"),
                tr("Notifications"),
                tr("Default models"),
                tr("Data and backups"),
                tr("Tools"),
                tr("Voice"),
            )
        ):
            self.tabs.setTabText(index, title)
        self.user_name_label.setText(tr("Your name"))
        self.user_name.setPlaceholderText(tr("What the personas call you"))
        self.user_name_hint.setText(
            tr("Every persona calls you this, unless its own settings give it another name for you.")
        )
        self.first_start_button.setText(tr("First start…"))
        self.first_start_button.setToolTip(tr("Your name and which mind the personas run on, step by step"))
        self.language_label.setText(tr("Language"))
        self.language_box.setItemText(0, tr("System language"))
        self.language_box.setItemText(1, "English")
        self.language_box.setItemText(2, "日本語")
        self.theme_label.setText(tr("Theme"))
        for index, label in enumerate((tr("Follow the system"), tr("Light"), tr("Dark"))):
            self.theme_box.setItemText(index, label)
        self.font_label.setText(tr("Text size"))
        self.font_size.setSpecialValueText(tr("Desktop default ({size} pt)", size=theme.default_font_size()))
        self.font_size.setSuffix(" pt")
        self.look_hint.setText(tr("Language, theme and text size change at once in every window."))
        self.notifications_check.setText(tr("Show a desktop notification when a persona writes first"))
        self.inbox_note.setText(
            tr("Messages a persona writes first always arrive in its conversation and the inbox.")
        )
        self.tray_check.setText(tr("Keep running in the tray when the window closes"))
        self.tray_note.setText(
            tr("Personas go on living while the window is hidden; Quit in the tray's menu ends the app.")
            if tray_available()
            else tr("This desktop has no tray: closing the window quits Nexus Ark.")
        )
        self.models_note.setText(
            tr("Personas without a model of their own use these. Each persona can choose its own.")
        )
        self.chat_box.setTitle(tr("Conversation"))
        self.internal_box.setTitle(tr("Internal work (emotions, dreaming, summaries)"))
        self.same_as_chat.setText(tr("Same as the conversation model"))
        self.models_loading.setText(tr("Loading the model catalogue…"))
        self.data.retranslate()
        self.tools.retranslate()
        self.voice.retranslate()
        self.ok_button.setText("OK")  # the same in both languages
        self.apply_button.setText(tr("Apply"))
        self.cancel_button.setText(tr("Cancel"))
        if self._pickers_ready:
            try:
                shown = (self.chat_picker.config(), self.internal_picker.config())
            except ValueError:  # half-typed: keep the pickers as they are rather than lose it
                return
            self._place_pickers(*shown)

    # -- settings ---------------------------------------------------------------------------------
    def show_settings(self, settings: AppSettings) -> None:
        self.user_name.setText(settings.user_name)
        self.language_box.setCurrentIndex(max(0, self.language_box.findData(settings.language)))
        self.theme_box.setCurrentIndex(max(0, self.theme_box.findData(settings.theme)))
        self.font_size.setValue(settings.font_size or FONT_MIN)
        self.notifications_check.setChecked(settings.desktop_notifications)
        self.tray_check.setChecked(settings.keep_running_in_tray)

    def _build_pickers(self, catalogue: list[CatalogueEntry]) -> None:
        settings = self.app.settings
        self._catalogue = catalogue
        self.models_loading.hide()
        own = settings.internal_model
        self.same_as_chat.setChecked(own is None or own.is_default())
        self.same_as_chat.toggled.connect(lambda same: self.internal_picker.setEnabled(not same))
        self._place_pickers(
            settings.chat_model, own if own is not None and not own.is_default() else settings.chat_model
        )
        self._pickers_ready = True
        self._remember_models()

    def _place_pickers(self, chat: ModelConfig, internal: ModelConfig) -> None:
        """(Re)build the two model pickers showing these models: the pickers set their texts when built,
        so a language switch builds them again with what they showed."""
        from ui.models.model_picker import ModelPicker

        for old in (self.chat_picker, self.internal_picker):
            if old is not None:
                old.setParent(None)
                old.deleteLater()
        self.chat_picker = ModelPicker(self.app, "default-chat", self._catalogue)
        self.chat_picker.setObjectName("defaultChatModel")
        self.chat_picker.set_config(chat)
        self.chat_layout.addWidget(self.chat_picker)
        self.internal_picker = ModelPicker(self.app, "default-internal", self._catalogue)
        self.internal_picker.setObjectName("defaultInternalModel")
        self.internal_picker.set_config(internal)
        self.internal_picker.setEnabled(not self.same_as_chat.isChecked())
        self.internal_layout.addWidget(self.internal_picker)

    def _remember_models(self) -> None:
        """What the pickers show before the person changes anything (what Apply compares with)."""
        self._initial_chat = self.chat_picker.config()
        same = self.same_as_chat.isChecked()
        self._initial_internal = (same, None if same else self.internal_picker.config())

    def _model_changes(self) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
        """The default models that changed, and the keys typed for them (saved to the keyring on the
        worker, not here: the keyring may take a while to answer)."""
        if not self._pickers_ready:
            return {}, []
        settings = self.app.settings
        changes: dict[str, Any] = {}
        secrets: list[tuple[str, str, str]] = []
        chat, chat_secret = self.chat_picker.config(), self.chat_picker.typed_secret()
        if chat != self._initial_chat or chat_secret:
            changes["chat_model"] = settings.chat_model.model_copy(update=chat.model_dump(include=MODEL_KEYS))
            if chat_secret:
                secrets.append(("chat_model", "default-chat", chat_secret))
        same = self.same_as_chat.isChecked()
        internal = None if same else self.internal_picker.config()
        internal_secret = "" if same else self.internal_picker.typed_secret()
        if (same, internal) != self._initial_internal or internal_secret:
            base = settings.internal_model or settings.chat_model
            changes["internal_model"] = (
                None if internal is None else base.model_copy(update=internal.model_dump(include=MODEL_KEYS))
            )
            if internal_secret:
                secrets.append(("internal_model", "default-internal", internal_secret))
        return changes, secrets

    def changes(self) -> dict[str, Any]:
        """What the person changed in the window, as AppSettings fields (models without typed keys)."""
        settings = self.app.settings
        font = self.font_size.value()
        wanted = {
            "user_name": self.user_name.text().strip(),
            "language": self.language_box.currentData(),
            "theme": self.theme_box.currentData(),
            "font_size": 0 if font == FONT_MIN else font,
            "desktop_notifications": self.notifications_check.isChecked(),
            "keep_running_in_tray": self.tray_check.isChecked(),
        }
        changes = {k: v for k, v in wanted.items() if getattr(settings, k) != v}
        changes.update(self._model_changes()[0])
        changes.update(self.voice.changes())  # ValueError for a key typed in plain
        return changes

    def apply(self, *, close: bool = False) -> None:
        """Show the new look and language at once; save config.toml on a worker."""
        try:
            changes = self.changes()
            secrets = self._model_changes()[1]
        except ValueError as exc:  # a model the pickers cannot express (e.g. a spec without a name)
            self._show_error(str(exc))
            return
        if not changes:
            if close:
                self.accept()
            else:
                self.status.setText(tr("Nothing changed."))
            return
        old = self.app.settings.model_copy()
        if "theme" in changes or "font_size" in changes:
            theme.apply_appearance(changes.get("theme", old.theme), changes.get("font_size", old.font_size))
        if "language" in changes:
            i18n.set_language(changes["language"])
            self.retranslate()
            self.language_changed.emit(changes["language"])
        self.apply_button.setEnabled(False)
        self.ok_button.setEnabled(False)
        self.status.setText(tr("Saving…"))

        def save() -> AppSettings:
            for field, key_name, secret in secrets:
                reference = store_key(key_name, secret)
                changes[field] = changes[field].model_copy(update={"api_key": reference})
            return self.app.admin.update_settings(**changes)

        run_in_background(
            save, while_open(self, lambda _s: self._saved(close)), while_open(self, self._save_failed)
        )

    def _saved(self, close: bool) -> None:
        self.apply_button.setEnabled(True)
        self.ok_button.setEnabled(True)
        if self._pickers_ready:  # keys typed are in the keyring now: show their references
            self.chat_picker.set_config(self.app.settings.chat_model)
            if self.app.settings.internal_model is not None:
                self.internal_picker.set_config(self.app.settings.internal_model)
            self._remember_models()
        self.status.setText(tr("Saved."))
        self.applied.emit()
        if close:
            self.accept()

    def _save_failed(self, message: str) -> None:
        self.apply_button.setEnabled(True)
        self.ok_button.setEnabled(True)
        self._show_error(message)

    def _show_error(self, message: str) -> None:
        self.status.setText(theme.tinted(message, "error"))
