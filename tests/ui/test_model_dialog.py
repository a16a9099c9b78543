"""The per-persona model settings, driven like a person would: pick a backend, list models, test, save."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from nexus_ark.app import NexusApp
from ui.models.model_dialog import ModelSettingsDialog
from ui.util import i18n

pytestmark = pytest.mark.integration


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    yield app
    app.close()


def _open(qtbot, core: NexusApp) -> ModelSettingsDialog:
    """The dialog as the person gets it: the persona's choice arrives from a worker, then it can be used."""
    dialog = ModelSettingsDialog(core, "aria")
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.loaded, timeout=30_000)
    return dialog


def _save(qtbot, dialog: ModelSettingsDialog) -> None:
    """Save, then wait until it is written (the dialog closes when it is)."""
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.result() == QDialog.DialogCode.Accepted.value, timeout=30_000)


def _choose(dialog: ModelSettingsDialog, backend: str) -> None:
    box = dialog.chat.backend_box
    box.setCurrentIndex(box.findData(backend))


def test_ollama_models_listed_tested_and_saved(qtbot, core: NexusApp, ollama_wire) -> None:
    dialog = _open(qtbot, core)
    assert dialog.chat.backend_box.currentData() == "bundled"
    _choose(dialog, "ollama")
    dialog.chat.ollama_host.setText(ollama_wire.url)
    qtbot.mouseClick(dialog.chat.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "installed" in dialog.chat.ollama_status.text(), timeout=30_000)
    assert dialog.chat.ollama_model.itemData(0) == "smollm2:135m"
    dialog.chat.ollama_model.setCurrentIndex(0)

    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Works" in dialog.result_label.text(), timeout=60_000)
    assert "smollm2:135m (Ollama)" in dialog.result_label.text()

    _save(qtbot, dialog)
    persona = core.personas.load("aria")
    assert persona.settings.model.spec == "ollama:smollm2:135m"
    assert persona.settings.model.api_base == ollama_wire.url
    assert persona.settings.internal_model is None


def test_errors_are_shown_in_words(qtbot, core: NexusApp, tmp_path: Path) -> None:
    dialog = _open(qtbot, core)
    _choose(dialog, "gguf")
    missing = tmp_path / "missing.gguf"
    dialog.chat.gguf_path.setText(str(missing))
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "does not exist" in dialog.result_label.text(), timeout=30_000)
    assert str(missing) in dialog.result_label.text()

    _choose(dialog, "ollama")
    dialog.chat.ollama_host.setText("http://127.0.0.1:9")
    qtbot.mouseClick(dialog.chat.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "not running" in dialog.chat.ollama_status.text(), timeout=30_000)


@pytest.mark.slow
def test_litellm_with_internal_model_and_env_key(qtbot, core: NexusApp, llama_server: str) -> None:
    dialog = _open(qtbot, core)
    _choose(dialog, "litellm")
    dialog.chat.litellm_model.setText("openai/local")
    dialog.chat.litellm_base.setText(llama_server)
    dialog.chat.litellm_key.setText("${LOCAL_SERVER_KEY}")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Works" in dialog.result_label.text(), timeout=60_000)
    dialog.same_as_chat.setChecked(False)
    assert dialog.internal.isEnabled()
    dialog.internal.backend_box.setCurrentIndex(dialog.internal.backend_box.findData("bundled"))
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.result_label.text().count("Works") == 2, timeout=60_000)
    assert "SmolLM2" in dialog.result_label.text(), "the internal model was tested too"
    _save(qtbot, dialog)
    persona = core.personas.load("aria")
    assert persona.settings.model.spec == "litellm:openai/local"
    assert persona.settings.model.api_key == "${LOCAL_SERVER_KEY}"
    assert persona.settings.internal_model.spec == "bundled"
    assert "LOCAL_SERVER_KEY" in (persona.folder / "persona.toml").read_text()


def test_a_save_that_cannot_be_written_keeps_the_dialog_open_and_says_why(qtbot, core: NexusApp) -> None:
    """Saving runs on a worker; when persona.toml cannot be written the dialog stays open with the reason
    and the person's choice, and the file is left as it was."""
    dialog = _open(qtbot, core)
    _choose(dialog, "ollama")
    dialog.chat.ollama_model.setEditText("qwen2.5:1.5b")
    settings = core.personas.load("aria").folder / "persona.toml"
    settings.write_text('name = "Aria\n', encoding="utf-8")  # broken by hand while the dialog was open
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "is not valid TOML" in dialog.result_label.text(), timeout=30_000)
    assert str(settings) in dialog.result_label.text()
    assert dialog.result() != QDialog.DialogCode.Accepted.value and dialog.save_button.isEnabled()
    assert dialog.chat.picked().target == "qwen2.5:1.5b"
    assert settings.read_text(encoding="utf-8") == 'name = "Aria\n'


def test_cancel_while_a_save_is_written_waits_for_it(qtbot, core: NexusApp, monkeypatch) -> None:
    """Esc during a save does not leave the persona saved but the dialog reporting a cancel: the dialog
    closes as accepted once the file is written."""
    import threading

    writing = threading.Event()
    written = core.personas.save_models

    def slow_save(*args, **kwargs):
        writing.wait(30)  # the keyring is slow to answer today
        return written(*args, **kwargs)

    monkeypatch.setattr(core.personas, "save_models", slow_save)
    dialog = _open(qtbot, core)
    ended: list[int] = []
    dialog.finished.connect(ended.append)
    _choose(dialog, "ollama")
    dialog.chat.ollama_model.setEditText("qwen2.5:1.5b")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    dialog.reject()  # Esc while the save is being written
    assert ended == [] and not dialog.save_button.isEnabled()
    writing.set()
    qtbot.waitUntil(lambda: ended == [QDialog.DialogCode.Accepted.value], timeout=30_000)
    assert core.personas.load("aria").settings.model.spec == "ollama:qwen2.5:1.5b"
