"""Per-persona model settings: which backend and model for conversation and for internal work,
a connection test, and errors in words."""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import ModelCheck, NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.model_config import ModelConfig, ModelSpec, is_key_reference
from nexus_ark.providers.catalogue import CatalogueEntry, load_catalogue, total_ram_gb
from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaModelInfo
from nexus_ark.providers.secrets import store_key
from ui.util import theme
from ui.util.i18n import tr, tr_error
from ui.util.tasks import run_in_background, while_open

BACKENDS = ("bundled", "gguf", "ollama", "litellm")


@dataclass(frozen=True)
class PickedModel:
    """A picker's choice, read on the UI thread and turned into settings anywhere: saving a typed key
    talks to the OS keyring (a D-Bus call that can take seconds), so Save does that on a worker."""

    kind: str
    target: str = ""
    api_base: str = ""
    typed_key: str = ""
    key_reference: str = ""  # the key already saved: keyring:… or ${VARIABLE}
    key_name: str = ""  # the keyring entry a typed key is saved under

    def config(self, *, store_secrets: bool = False) -> ModelConfig:
        if self.kind == "bundled":
            return ModelConfig(spec="bundled")
        if self.kind == "gguf":
            return ModelConfig(spec=f"gguf:{self.target}")
        if self.kind == "ollama":
            return ModelConfig(spec=f"ollama:{self.target}", api_base=self.api_base)
        reference = self.key_reference
        if self.typed_key and is_key_reference(self.typed_key):
            reference = self.typed_key
        elif self.typed_key and store_secrets:
            reference = store_key(self.key_name, self.typed_key)
        elif self.typed_key:
            reference = ""  # an unsaved key is only used by the connection test
        return ModelConfig(spec=f"litellm:{self.target}", api_base=self.api_base, api_key=reference)


class ModelPicker(QWidget):
    """Backend + model + where it runs, for one purpose (conversation or internal work)."""

    def __init__(self, app: NexusApp, key_name: str, catalogue: list[CatalogueEntry], parent=None) -> None:
        super().__init__(parent)
        self.app = app
        self.key_name = key_name
        self.catalogue = catalogue
        self.backend_box = QComboBox()
        for code, label in zip(
            BACKENDS,
            (
                tr("Bundled model (SmolLM2, works offline)"),
                tr("GGUF file on this computer"),
                "Ollama",  # a product name, the same in every language
                tr("LiteLLM (cloud or OpenAI-compatible server)"),
            ),
            strict=True,
        ):
            self.backend_box.addItem(label, code)
        self.pages = QStackedWidget()

        bundled = QLabel(tr("The small model that ships with Nexus Ark. English only; fast everywhere."))
        bundled.setWordWrap(True)
        self.pages.addWidget(bundled)

        gguf = QWidget()
        self.gguf_path = QLineEdit()
        self.gguf_path.setObjectName("ggufPath")
        browse = QPushButton(tr("Browse…"))
        browse.clicked.connect(self._browse)
        row = QHBoxLayout(gguf)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.gguf_path, 1)
        row.addWidget(browse)
        self.pages.addWidget(gguf)

        ollama = QWidget()
        self.ollama_host = QLineEdit(DEFAULT_HOST)
        self.ollama_host.setObjectName("ollamaHost")
        self.ollama_model = QComboBox()
        self.ollama_model.setObjectName("ollamaModel")
        self.ollama_model.setEditable(True)
        self.refresh_button = QPushButton(tr("List installed models"))
        self.refresh_button.clicked.connect(self.refresh_ollama)
        self.ollama_status = QLabel()
        self.ollama_status.setWordWrap(True)
        form = QFormLayout(ollama)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow(tr("Server"), self.ollama_host)
        model_row = QHBoxLayout()
        model_row.addWidget(self.ollama_model, 1)
        model_row.addWidget(self.refresh_button)
        form.addRow(tr("Model"), model_row)
        form.addRow(self.ollama_status)
        self.pages.addWidget(ollama)

        litellm = QWidget()
        self.litellm_model = QLineEdit()
        self.litellm_model.setObjectName("litellmModel")
        self.litellm_model.setPlaceholderText(
            "openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, openai/local …"
        )
        self.litellm_base = QLineEdit()
        self.litellm_base.setObjectName("litellmBase")
        self.litellm_base.setPlaceholderText(
            tr("empty for the provider's own; e.g. http://127.0.0.1:8000/v1")
        )
        self.litellm_key = QLineEdit()
        self.litellm_key.setObjectName("litellmKey")
        self.litellm_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.litellm_key.setPlaceholderText(tr("a key (saved in the OS keyring) or ${ENV_VARIABLE}"))
        form = QFormLayout(litellm)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow(tr("Model"), self.litellm_model)
        form.addRow(tr("Base URL"), self.litellm_base)
        form.addRow(tr("API key"), self.litellm_key)
        self.pages.addWidget(litellm)

        self.backend_box.currentIndexChanged.connect(self.pages.setCurrentIndex)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.backend_box)
        layout.addWidget(self.pages)
        self._key_reference = ""
        self.ram_gb: float | None = None
        self.add_suggestions(catalogue, total_ram_gb() if catalogue else None)

    def add_suggestions(self, catalogue: list[CatalogueEntry], ram: float | None) -> None:
        """The catalogue's Ollama models under the ones installed, each saying whether it fits here."""
        self.catalogue, self.ram_gb = catalogue, ram
        for entry in catalogue:
            if entry.kind != "ollama":
                continue
            fits = entry.fits(ram)
            note = "" if fits is None else (tr("fits in memory") if fits else tr("needs more memory"))
            label = (
                f"{entry.spec.removeprefix('ollama:')}  ({entry.size_gb:g} GB, {note})"
                if note
                else entry.spec
            )
            self.ollama_model.addItem(label, entry.spec.removeprefix("ollama:"))

    # -- values -----------------------------------------------------------------------------------
    def set_config(self, config: ModelConfig) -> None:
        spec = config.parsed()
        self.backend_box.setCurrentIndex(BACKENDS.index(spec.kind))
        if spec.kind == "gguf":
            self.gguf_path.setText(spec.target)
        elif spec.kind == "ollama":
            self.ollama_host.setText(config.api_base or DEFAULT_HOST)
            self.ollama_model.setEditText(spec.target)
        elif spec.kind == "litellm":
            self.litellm_model.setText(spec.target)
            self.litellm_base.setText(config.api_base)
            self._key_reference = config.api_key
            self.litellm_key.setText(config.api_key if config.api_key.startswith("${") else "")
            if config.api_key.startswith("keyring:"):
                self.litellm_key.setPlaceholderText(tr("saved in the OS keyring (type to replace)"))

    def picked(self) -> PickedModel:
        """What the person chose, as plain values (read here, on the UI thread)."""
        kind = self.backend_box.currentData()
        if kind == "gguf":
            return PickedModel(kind, target=self.gguf_path.text().strip())
        if kind == "ollama":
            text = self.ollama_model.currentText().strip()
            index = self.ollama_model.findText(text)
            name = self.ollama_model.itemData(index) if index >= 0 else text
            return PickedModel(kind, target=name, api_base=self.ollama_host.text().strip())
        if kind == "litellm":
            return PickedModel(
                kind,
                target=self.litellm_model.text().strip(),
                api_base=self.litellm_base.text().strip(),
                typed_key=self.litellm_key.text().strip(),
                key_reference=self._key_reference,
                key_name=self.key_name,
            )
        return PickedModel(kind)

    def config(self) -> ModelConfig:
        """The chosen model as settings, a typed key left out (it is saved to the keyring only by Save)."""
        return self.picked().config()

    def typed_secret(self) -> str:
        typed = self.litellm_key.text().strip()
        return "" if not typed or is_key_reference(typed) else typed

    # -- actions ----------------------------------------------------------------------------------
    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("Choose a GGUF model"), "", "GGUF (*.gguf)")
        if path:
            self.gguf_path.setText(path)

    def refresh_ollama(self) -> None:
        host = self.ollama_host.text().strip() or DEFAULT_HOST
        self.refresh_button.setEnabled(False)
        self.ollama_status.setText(tr("Asking Ollama at {host}…", host=host))
        run_in_background(lambda: self.app.list_ollama_models(host), self._on_models, self._on_models_failed)

    def _on_models(self, models: list[OllamaModelInfo]) -> None:
        self.refresh_button.setEnabled(True)
        current = self.ollama_model.currentText()
        self.ollama_model.clear()
        for m in models:
            size = f"{m.size_bytes / 1e9:.1f} GB" if m.size_bytes else ""
            self.ollama_model.addItem(
                f"{m.name}  ({', '.join(x for x in (m.parameter_size, size) if x)})", m.name
            )
        self.add_suggestions(self.catalogue, self.ram_gb)
        self.ollama_model.setEditText(current if current else (models[0].name if models else ""))
        if models:
            self.ollama_status.setText(tr("{count} models installed.", count=len(models)))
        else:
            self.ollama_status.setText(tr("No models installed yet: run `ollama pull qwen2.5:1.5b`."))

    def _on_models_failed(self, message: str) -> None:
        self.refresh_button.setEnabled(True)
        self.ollama_status.setText(f"<span style='color:{theme.colour('error').name()}'>{message}</span>")


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
            chat=self.app.model_config(persona, "chat"),
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
                return self.app.check_model(config)
            # Try a freshly typed key without writing it anywhere: it lives in this process only
            # for the length of the test.
            env = f"NEXUS_ARK_TEST_KEY_{self.slug.upper().replace('-', '_')}"
            os.environ[env] = secret
            try:
                return self.app.check_model(config.model_copy(update={"api_key": f"${{{env}}}"}))
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
            app.save_persona_models(
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
