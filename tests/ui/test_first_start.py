"""The first-start flow in the window, with the Ollama stand-in running on loopback (real HTTP, Ollama's wire
format, replies from the bundled model): it offers the stand-in's models and the catalogue's download, the
name typed there is in the next prompt, one click puts the persona on the chosen model and it answers; Skip
closes it for good; Settings has the name and brings the flow back."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nexus_ark.app import NexusApp
from nexus_ark.config import load_app_settings, load_app_state
from ui.first_start.flow import FirstStartDialog
from ui.main.main_window import MainWindow
from ui.util import i18n

# offscreen platform: shown windows and dialogs
pytestmark = [
    pytest.mark.integration,
    pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate"),
]


@pytest.fixture
def first_window(qtbot, data_dir: Path, monkeypatch: pytest.MonkeyPatch, ollama_wire):
    """A window on a new data folder, with Ollama (the stand-in) where OLLAMA_HOST says."""
    monkeypatch.setenv("OLLAMA_HOST", ollama_wire.url)
    core = NexusApp(data_dir).open()
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=60_000)
    yield window
    window.close()
    core.close()


def _flow(window: MainWindow) -> FirstStartDialog | None:
    found = [d for d in window.findChildren(FirstStartDialog) if d.isVisible()]
    return found[0] if found else None


def test_the_first_start_offers_the_servers_models_and_the_download_and_one_click_reaches_a_reply(
    qtbot, first_window: MainWindow, ollama_wire
) -> None:
    window = first_window
    app = window.app
    window.offer_first_start()
    flow = _flow(window)
    assert flow is not None and flow.name_title.text() == "What should the personas call you?"
    qtbot.keyClicks(flow.name_edit, "Ken")
    qtbot.mouseClick(flow.next_button, Qt.MouseButton.LeftButton)
    assert flow.mind_title.text() == "Which mind?"
    qtbot.waitUntil(lambda: flow.report is not None, timeout=10_000)  # probed on a worker
    offered = flow.option_texts()
    assert "smollm2:135m" in offered and "gemma3:4b" in offered
    assert any(f"running on this computer ({ollama_wire.url})" in label.text() for label in flow.findChildren(
        type(flow.name_title)
    ))  # fmt: skip
    download = [t for t in offered if t.startswith("Download ")]
    assert len(download) == 1 and " GB, about " in download[0] and " min at " in download[0]
    assert "The built-in model" in offered and any("GGUF file" in t for t in offered)
    flow.choose("smollm2:135m")

    with qtbot.waitSignal(window.persona_opened, timeout=60_000):
        qtbot.mouseClick(flow.next_button, Qt.MouseButton.LeftButton)  # "Start talking": the one click
    assert _flow(window) is None, "it closed"
    settings = load_app_settings(app.layout.config_file)
    assert settings.user_name == "Ken" and load_app_state(app.layout.state_file).setup_done
    assert (
        settings.chat_model.spec == "ollama:smollm2:135m" and settings.chat_model.api_base == ollama_wire.url
    )
    system = "\n".join(
        m.content for m in app.personas.preview_prompt("aria", "Hello!").messages if m.role == "system"
    )
    assert "Ken" in system, "the name typed is in the next prompt"
    assert "smollm2:135m" in window.model_label.text()

    with qtbot.waitSignal(window.turn_finished, timeout=120_000) as finished:
        window.input.setPlainText("Hello! Who are you?")
        qtbot.mouseClick(window.send_button, Qt.MouseButton.LeftButton)
    assert finished.args[0].status == "complete" and finished.args[0].text
    assert any(r.get("path") == "/api/chat" for r in ollama_wire.requests), "the reply came from the server"


def test_skip_closes_it_for_good_and_changes_nothing_else(qtbot, first_window: MainWindow) -> None:
    window = first_window
    window.offer_first_start()
    flow = _flow(window)
    assert flow is not None
    qtbot.keyClicks(flow.name_edit, "Not saved")
    qtbot.mouseClick(flow.skip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _flow(window) is None, timeout=10_000)
    settings = load_app_settings(window.app.layout.config_file)
    assert (
        load_app_state(window.app.layout.state_file).setup_done
        and settings.user_name == ""
        and settings.chat_model.spec == "bundled"
    )
    window.offer_first_start()  # the next start
    assert _flow(window) is None, "once skipped, it does not open by itself again"


def test_settings_set_your_name_and_bring_the_first_start_back(qtbot, first_window: MainWindow) -> None:
    from ui.settings.settings_dialog import SettingsDialog

    window = first_window
    window.app.state_store.update(setup_done=True)
    window.openers.show_settings()
    settings = window.findChild(SettingsDialog)
    assert settings is not None
    settings.user_name.setText("Mika")
    qtbot.mouseClick(settings.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.app.settings.user_name == "Mika", timeout=10_000)
    system = "\n".join(
        m.content for m in window.app.personas.preview_prompt("aria", "Hi").messages if m.role == "system"
    )
    assert "Mika" in system
    qtbot.mouseClick(settings.first_start_button, Qt.MouseButton.LeftButton)
    flow = _flow(window)
    assert flow is not None and flow.name_edit.text() == "Mika", "the flow opens again, with the name set"
    flow.close()


def test_a_download_that_fails_offline_says_to_choose_a_file_on_disk_or_a_server_and_a_file_works(
    qtbot, first_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hugging Face unreachable (its address refuses, as offline): the Get-a-model dialog says why, the
    person closes it, and the flow says what to do offline; the GGUF file already on disk then works."""
    from PySide6.QtCore import QTimer

    from nexus_ark.paths import bundled_model_path
    from tests.integration.conftest import free_port
    from ui.models.get_model_dialog import GetModelDialog

    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    window = first_window
    window.offer_first_start()
    flow = _flow(window)
    assert flow is not None
    qtbot.mouseClick(flow.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: flow.report is not None, timeout=10_000)
    flow.choose("Download ")
    seen: list[str] = []

    def close_when_it_failed() -> None:  # the person reads the reason, then closes the dialog
        for dialog in flow.findChildren(GetModelDialog):
            if dialog.isVisible() and dialog._cancel is None and dialog.progress_label.text():
                seen.append(dialog.progress_label.text())
                dialog.reject()
                return
        QTimer.singleShot(50, close_when_it_failed)

    QTimer.singleShot(50, close_when_it_failed)
    qtbot.mouseClick(flow.next_button, Qt.MouseButton.LeftButton)  # runs the dialog until it is closed
    assert seen, "the download dialog showed why it stopped"
    qtbot.waitUntil(
        lambda: flow.findChild(type(flow.name_title), "downloadFailed") is not None, timeout=5_000
    )
    failed = flow.findChild(type(flow.name_title), "downloadFailed").text()
    assert "GGUF file already on this computer" in failed and "model server" in failed
    assert not window.app.state.setup_done, "nothing was chosen yet"

    flow.gguf_path = str(bundled_model_path())
    flow._show_choices()
    flow.choose("The GGUF file")
    with qtbot.waitSignal(flow.applied, timeout=10_000):
        qtbot.mouseClick(flow.next_button, Qt.MouseButton.LeftButton)
    assert window.app.settings.chat_model.spec == f"gguf:{bundled_model_path()}"


def test_the_app_opens_the_first_start_on_a_new_data_folder_and_not_once_it_is_done(data_dir: Path) -> None:
    """The real start (run_window, in a process of its own, quitting by itself): the flow is over the window
    on a new data folder; after `setup --name` it is not."""
    import subprocess
    import sys

    from tests.conftest import run_cli, subprocess_env

    code = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from ui.app.application import run_window
seen = []
QTimer.singleShot(1500, lambda: seen.extend(
    type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible()))
code = run_window(sys.argv[1])
print(code, sorted(set(seen)))
"""

    def started() -> str:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(data_dir)],
            env=subprocess_env(QT_QPA_PLATFORM="offscreen", NEXUS_ARK_QUIT_AFTER_MS="4000"),
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    first = started()
    assert first.startswith("0 ") and "FirstStartDialog" in first and "MainWindow" in first
    assert run_cli("--data-dir", str(data_dir), "setup", "--name", "Ken", timeout=120).returncode == 0
    second = started()
    assert "MainWindow" in second and "FirstStartDialog" not in second
