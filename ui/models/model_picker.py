"""One model choice (backend, model, where it runs) for one purpose: the conversation or internal work.

Used by a persona's model settings and by the app settings' defaults."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.model_config import ModelConfig, is_key_reference
from nexus_ark.providers.catalogue import CatalogueEntry, total_ram_gb
from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaModelInfo
from nexus_ark.providers.secrets import store_key
from ui.util import theme
from ui.util.i18n import tr
from ui.util.tasks import run_in_background

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

    def __init__(
        self, app: NexusApp, key_name: str, catalogue: list[CatalogueEntry], parent: QWidget | None = None
    ) -> None:
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
        for page in (bundled, self._gguf_page(), self._ollama_page(), self._litellm_page()):
            self.pages.addWidget(page)
        self.backend_box.currentIndexChanged.connect(self.pages.setCurrentIndex)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.backend_box)
        layout.addWidget(self.pages)
        self._key_reference = ""
        self.ram_gb: float | None = None
        self.add_suggestions(catalogue, total_ram_gb() if catalogue else None)

    # -- a page per backend -----------------------------------------------------------------------
    def _gguf_page(self) -> QWidget:
        gguf = QWidget()
        self.gguf_path = QLineEdit()
        self.gguf_path.setObjectName("ggufPath")
        browse = QPushButton(tr("Browse…"))
        browse.clicked.connect(self._browse)
        row = QHBoxLayout(gguf)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.gguf_path, 1)
        row.addWidget(browse)
        return gguf

    def _ollama_page(self) -> QWidget:
        """The server, and its model: typed, or chosen from those installed there and the catalogue's."""
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
        return ollama

    def _litellm_page(self) -> QWidget:
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
        return litellm

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
        run_in_background(
            lambda: self.app.models.ollama_models(host), self._on_models, self._on_models_failed
        )

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
