"""Get a model from the window: progress shown, Cancel keeps what arrived, Resume fetches only the rest, Use
switches the persona; the language notice's one click downloads the suggestion and switches to it. The
files come from the loopback Hugging Face stand-in (tests/integration/hub_server.py), the bundled GGUF."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.providers.model_download import part_path
from nexus_ark.runtime.scripted_mind import ScriptedMind
from tests.integration.hub_server import HubStandIn
from tests.integration.test_model_download import write_catalogue
from tests.ui.dialogs import close_next_dialog
from ui.main.main_window import MainWindow
from ui.models.get_model_dialog import GetModelDialog
from ui.util import i18n

NOON = datetime(2026, 11, 25, 12, 0)
pytestmark = [
    pytest.mark.integration,
    pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate"),
]


@pytest.fixture
def hub(served: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubStandIn]:
    stand_in = HubStandIn(served).start()
    monkeypatch.setenv("HF_ENDPOINT", stand_in.hub_url)
    catalogue = write_catalogue(tmp_path, stand_in, languages='["en", "ja"]')
    monkeypatch.setenv("NEXUS_ARK_CATALOGUE", str(catalogue))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing there: Ollama's rows say so
    yield stand_in
    stand_in.stop()


@pytest.fixture
def core(data_dir: Path) -> Iterator[NexusApp]:
    app = NexusApp(data_dir, clock=FixedClock(NOON), backend_factory=lambda config: ScriptedMind()).open()
    i18n.set_language("en")
    yield app
    app.close()


def test_the_window_shows_progress_cancels_resumes_and_uses_the_model(
    qtbot, core: NexusApp, hub: HubStandIn, served: Path, data_dir: Path
) -> None:
    hub.rate = 12 * 2**20  # slow enough to watch and cancel
    dialog = GetModelDialog(core, "aria", name="Aria")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.table.rowCount() > 0, timeout=10_000)
    assert dialog.table.item(0, 0).text() == "SmolLM2 from a mirror"
    assert "Apache-2.0" in dialog.details.text()  # the licence is shown before the first byte
    qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.value() > 200, timeout=30_000)
    assert dialog.cancel_button.isVisible() and not dialog.download_button.isEnabled()
    assert " of 98" in dialog.progress_label.text() and "/s" in dialog.progress_label.text()
    assert "left" in dialog.progress_label.text()
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Cancelled" in dialog.progress_label.text(), timeout=10_000)
    part = part_path(data_dir / "models" / served.name)
    kept = part.stat().st_size
    assert kept > 0 and not (data_dir / "models" / served.name).exists()
    qtbot.waitUntil(lambda: dialog.download_button.text() == "Resume download", timeout=10_000)

    hub.rate = 0.0
    requests_before = len(hub.sent)
    qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "verified" in dialog.progress_label.text(), timeout=60_000)
    assert sum(hub.sent[requests_before:]) == served.stat().st_size - kept
    qtbot.waitUntil(lambda: dialog.use_button.isEnabled(), timeout=10_000)
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    dest = data_dir / "models" / served.name
    assert dest.read_bytes() == served.read_bytes()
    assert f'spec = "gguf:{dest}"' in (data_dir / "personas" / "aria" / "persona.toml").read_text("utf-8")


def test_the_language_notice_downloads_the_suggestion_and_switches_the_persona(
    qtbot, core: NexusApp, hub: HubStandIn, served: Path, data_dir: Path
) -> None:
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=60_000)
    with qtbot.waitSignal(window.persona_opened, timeout=60_000):
        window.select_persona("hikari")
    notice = window.language_notice
    qtbot.waitUntil(lambda: notice.get_button.isVisible(), timeout=10_000)
    assert notice.get_button.text() == "Download it (0.1 GB)"
    assert notice.get_button.toolTip() == "Download SmolLM2 from a mirror (0.1 GB)"
    # One click: the dialog downloads, verifies, switches ひかり and closes; the window reopens her.
    with qtbot.waitSignal(window.persona_opened, timeout=60_000):
        qtbot.mouseClick(notice.get_button, Qt.MouseButton.LeftButton)
    dest = data_dir / "models" / served.name
    assert dest.read_bytes() == served.read_bytes()
    toml = (data_dir / "personas" / "hikari" / "persona.toml").read_text("utf-8")
    assert f'spec = "gguf:{dest}"' in toml
    qtbot.waitUntil(lambda: not notice.isVisible(), timeout=10_000)  # the new model speaks Japanese
    window.close()


def test_the_first_start_line_opens_the_list_and_once_closed_stays_closed(
    qtbot, core: NexusApp, hub: HubStandIn, data_dir: Path
) -> None:
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    notice = window.language_notice
    qtbot.waitUntil(lambda: "small built-in model" in notice.label.text(), timeout=60_000)
    assert notice.isVisible()
    assert notice.get_button.text() == "Get a model…"
    opened: list[str] = []
    close_next_dialog(GetModelDialog, opened)
    qtbot.mouseClick(notice.get_button, Qt.MouseButton.LeftButton)  # returns when the list is closed
    assert opened == ["Get a model"]
    qtbot.mouseClick(notice.close_button, Qt.MouseButton.LeftButton)
    assert notice.isHidden()
    state = data_dir / "state.toml"  # what the app remembers for itself, apart from the preferences
    qtbot.waitUntil(lambda: "bundled-model-hint" in state.read_text("utf-8"), timeout=5_000)
    with qtbot.waitSignal(window.persona_opened, timeout=60_000):
        window.select_persona("aria")
    qtbot.wait(300)
    assert notice.isHidden()  # remembered
    window.close()


def test_an_ollama_model_is_pulled_from_the_window_with_progress(
    qtbot, core: NexusApp, hub: HubStandIn, ollama_wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexus_ark.providers.catalogue import catalogue_path

    monkeypatch.delenv("NEXUS_ARK_CATALOGUE")  # the shipped catalogue, with its Ollama models
    assert catalogue_path().name == "catalogue.toml"
    monkeypatch.setenv("OLLAMA_HOST", ollama_wire.url)
    ollama_wire.pulled.pop("qwen2.5:1.5b", None)
    ollama_wire.pull_pause_s = 0.02
    try:
        dialog = GetModelDialog(core, "hikari", name="ひかり")
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: dialog.table.rowCount() > 0, timeout=10_000)
        row = next(i for i, s in enumerate(dialog.statuses) if s.entry.id == "qwen2.5:1.5b")
        assert dialog.table.item(row, 5).text() == ""  # Ollama answered: not installed
        dialog.table.selectRow(row)
        assert "Ollama must be running" in dialog.details.text()
        qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: 0 < dialog.progress.value() < 1000, timeout=10_000)
        assert " of 986.0 MB" in dialog.progress_label.text()
        qtbot.waitUntil(lambda: "verified" in dialog.progress_label.text(), timeout=30_000)
        qtbot.waitUntil(lambda: dialog.table.item(row, 5).text() == "installed", timeout=10_000)
        with qtbot.waitSignal(dialog.accepted, timeout=10_000):
            qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
        toml = (core.data_dir / "personas" / "hikari" / "persona.toml").read_text("utf-8")
        assert 'spec = "ollama:qwen2.5:1.5b"' in toml and ollama_wire.url in toml
    finally:
        ollama_wire.pull_pause_s = 0.0
        ollama_wire.pulled.pop("qwen2.5:1.5b", None)
