"""Per-persona model settings: which backend and model for conversation and for internal work,
a connection test, and errors in words."""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from nexus_ark.app import ModelCheck, NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.providers.catalogue import CatalogueEntry, load_catalogue, total_ram_gb
from ui.models.model_picker import ModelPicker
from ui.util import theme
from ui.util.i18n import tr, tr_error
from ui.util.tasks import run_in_background, while_open


@dataclass(frozen=True)
class _Loaded:
    """What the dialog shows, read on a worker: the persona's choices and the model catalogue."""

    name: str
    chat: ModelConfig
    internal: ModelConfig | None  # None: the same as the conversation model
    catalogue: list[CatalogueEntry]
    ram_gb: float | None


class ModelSettingsDialog(QDialog):
    """Opens at once: the persona's settings and the catalogue are read on a worker, the pickers wait
    disabled until they arrive. Saving (the OS keyring for a typed key, then persona.toml) runs on a worker
    too; the dialog closes when it is written, and stays open with the reason when it is not."""

    def __init__(self, app: NexusApp, slug: str, parent=None, name: str | None = None) -> None:
        super().__init__(parent)
        self.app = app
        self.slug = slug
        self._show_title(name or slug)
        self.setMinimumWidth(560)
        self.chat = ModelPicker(app, f"{slug}-chat", [])
        self.internal = ModelPicker(app, f"{slug}-internal", [])
        self.same_as_chat = QCheckBox(tr("Same as the conversation model"))
        self.same_as_chat.setChecked(True)
        self.same_as_chat.toggled.connect(self._enable_pickers)

        chat_box = QGroupBox(tr("Conversation"))
        QVBoxLayout(chat_box).addWidget(self.chat)
        internal_box = QGroupBox(tr("Internal work (emotions, dreaming, summaries)"))
        internal_layout = QVBoxLayout(internal_box)
        internal_layout.addWidget(self.same_as_chat)
        internal_layout.addWidget(self.internal)

        self.get_button = QPushButton(tr("Get a model…"))
        self.get_button.setObjectName("getModelButton")
        self.get_button.setToolTip(tr("Download a model that fits this computer; its licence is shown first"))
        self.get_button.clicked.connect(self.get_model)
        self.test_button = QPushButton(tr("Test connection"))
        self.test_button.setObjectName("testButton")
        self.test_button.clicked.connect(self.test_connection)
        self.result_label = QLabel(tr("Loading…"))
        self.result_label.setObjectName("testResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setText(tr("Save"))
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(chat_box)
        layout.addWidget(internal_box)
        test_row = QHBoxLayout()
        test_row.addWidget(self.get_button)
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.result_label, 1)
        layout.addLayout(test_row)
        layout.addWidget(buttons)

        self.loaded = False
        self._busy = False  # a save is being written
        self._testing = False  # a connection test runs
        self._enable_pickers()
        run_in_background(self._read, while_open(self, self._show_loaded), while_open(self, self._not_loaded))

    def _read(self) -> _Loaded:
        """On the worker: the persona's settings, the model catalogue and this machine's memory."""
        persona = self.app.personas.load(self.slug)
        own = persona.settings.internal_model
        return _Loaded(
            name=persona.settings.name,
            chat=self.app.models.model_config(persona, "chat"),
            internal=own if own is not None and not own.is_default() else None,
            catalogue=load_catalogue(),
            ram_gb=total_ram_gb(),
        )

    def _show_loaded(self, loaded: _Loaded) -> None:
        self._show_title(loaded.name)
        for picker in (self.chat, self.internal):
            picker.add_suggestions(loaded.catalogue, loaded.ram_gb)
        self.chat.set_config(loaded.chat)
        self.internal.set_config(loaded.internal or loaded.chat)
        self.same_as_chat.setChecked(loaded.internal is None)
        self.loaded = True
        self.result_label.clear()
        self._enable_pickers()

    def _not_loaded(self, message: str) -> None:
        """The reason stays shown; nothing can be saved over settings that were not read."""
        self._show_error(message)

    def _show_title(self, name: str) -> None:
        self.persona_name = name
        self.setWindowTitle(tr("Model settings: {name}", name=name))

    def _enable_pickers(self) -> None:
        ready = self.loaded and not self._busy
        self.chat.setEnabled(ready)
        self.same_as_chat.setEnabled(ready)
        self.internal.setEnabled(ready and not self.same_as_chat.isChecked())
        self.test_button.setEnabled(ready and not self._testing)
        self.get_button.setEnabled(ready)
        self.save_button.setEnabled(ready)

    def get_model(self) -> None:
        """The catalogue's downloads; the one the person uses goes into the conversation picker."""
        from ui.models.get_model_dialog import GetModelDialog

        dialog = GetModelDialog(self.app, self.slug, self, name=self.persona_name, save_choice=False)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.chosen_spec:
            self.chat.set_config(ModelConfig(spec=dialog.chosen_spec, api_base=dialog.api_base))
            self.result_label.setText(tr("Press Save to use it."))

    def test_connection(self) -> None:
        """Check the conversation model and, when it is a different one, the internal model too."""
        try:
            pickers = [self.chat] if self.same_as_chat.isChecked() else [self.chat, self.internal]
            checks = [(p.config(), p.typed_secret()) for p in pickers]
        except (NexusArkError, ValueError) as exc:
            self._show_error(tr_error(exc) if isinstance(exc, NexusArkError) else str(exc))
            return
        self._testing = True
        self._enable_pickers()
        self.result_label.setText(tr("Testing {model}…", model=str(ModelSpec.parse(checks[0][0].spec))))

        def check_one(config: ModelConfig, secret: str) -> ModelCheck:
            if not secret:
                return self.app.models.check(config)
            # Try a freshly typed key without writing it anywhere: it lives in this process only
            # for the length of the test.
            env = f"NEXUS_ARK_TEST_KEY_{self.slug.upper().replace('-', '_')}"
            os.environ[env] = secret
            try:
                return self.app.models.check(config.model_copy(update={"api_key": f"${{{env}}}"}))
            finally:
                os.environ.pop(env, None)

        run_in_background(
            lambda: [check_one(c, s) for c, s in checks],
            while_open(self, self._tested),
            while_open(self, self._test_failed),
        )

    def _tested(self, results: list[ModelCheck]) -> None:
        self._testing = False
        self._enable_pickers()
        lines = [
            tr(
                "Works: {model} answered “{reply}” in {seconds:.1f} s.",
                model=r.model,
                reply=r.reply[:40],
                seconds=r.seconds,
            )
            for r in results
        ]
        self.result_label.setText(theme.tinted("<br>".join(lines), "success"))

    def _test_failed(self, message: str) -> None:
        self._testing = False
        self._enable_pickers()
        self._show_error(message)

    def _show_error(self, message: str) -> None:
        self.result_label.setText(f"<span style='color:{theme.colour('error').name()}'>{message}</span>")

    def save(self) -> None:
        """Write the choice on a worker (a typed key to the keyring, then persona.toml), then close."""
        if not self.loaded or self._busy:
            return
        chat = self.chat.picked()
        internal = None if self.same_as_chat.isChecked() else self.internal.picked()
        app, slug = self.app, self.slug

        def write() -> None:
            chat_config = chat.config(store_secrets=True)
            app.personas.save_models(
                slug,
                chat_config.model_dump(include={"spec", "api_base", "api_key"}),
                internal.config(store_secrets=True) if internal is not None else None,
            )

        self._busy = True
        self._enable_pickers()
        self.result_label.setText(tr("Saving…"))
        run_in_background(write, while_open(self, self._saved), while_open(self, self._not_saved))

    def reject(self) -> None:
        """Cancel (or Esc) waits while a save is being written: the dialog closes when it is, and the
        window then opens the persona on what was saved."""
        if not self._busy:
            super().reject()

    def _saved(self, _result: None) -> None:
        self._busy = False
        self.accept()

    def _not_saved(self, message: str) -> None:
        self._busy = False
        self._enable_pickers()
        self._show_error(message)
