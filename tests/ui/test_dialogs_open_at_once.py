"""The activity timeline, the inner-life dashboard and the model settings open at once: the persona's
files, its memory and the model catalogue are read on workers, never on the UI thread, and a persona whose
files cannot be read opens the window anyway, saying why, with nothing to save over them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from nexus_ark.app import NexusApp
from nexus_ark.providers.catalogue import catalogue_dir
from tests.ui.ui_thread import files_opened_on_the_ui_thread
from ui.life.activity_window import ActivityWindow
from ui.life.dashboard import DashboardWindow
from ui.models.model_dialog import ModelSettingsDialog
from ui.util import i18n

pytestmark = [pytest.mark.integration, pytest.mark.qt_log_ignore("propagateSizeHints")]


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    app.personas.memory("aria")  # created and recovered by its owner before the windows read it
    yield app
    app.close()


@pytest.fixture
def watch_ui_thread(data_dir: Path):
    """Every file of the data folder and the model catalogue the UI thread opens while the test runs."""
    with files_opened_on_the_ui_thread(data_dir, catalogue_dir()) as opened:
        yield opened


def _status(window: QDialog) -> str:
    if isinstance(window, ModelSettingsDialog):
        return window.result_label.text()
    return window.status.text()  # type: ignore[attr-defined]


OPENERS: dict[str, tuple[Callable[..., QDialog], str, Callable[[QDialog], bool]]] = {
    "activity": (ActivityWindow, "Activity of {}", lambda w: w._loaded_once),  # type: ignore[attr-defined]
    "dashboard": (DashboardWindow, "Inner life of {}", lambda w: w.complete),  # type: ignore[attr-defined]
    "model settings": (ModelSettingsDialog, "Model settings: {}", lambda w: w.loaded),  # type: ignore[attr-defined]
}


@pytest.mark.parametrize("which", list(OPENERS))
def test_the_window_opens_without_reading_a_file_on_the_ui_thread(
    qtbot, core: NexusApp, watch_ui_thread: list[str], which: str
) -> None:
    """Opened as the main window opens it (the name it knows, nothing else): the title is right at once,
    everything else arrives from a worker, and the UI thread opened no file of the persona's meanwhile."""
    opener, title, loaded = OPENERS[which]
    window = opener(core, "aria", name="Aria")
    qtbot.addWidget(window)
    assert window.windowTitle() == title.format("Aria")
    qtbot.waitUntil(lambda: loaded(window), timeout=60_000)
    assert watch_ui_thread == [], f"read on the UI thread: {watch_ui_thread}"
    assert "color:#b00" not in _status(window)
    window.done(0)


@pytest.mark.parametrize("which", list(OPENERS))
def test_the_name_arrives_from_the_persona_folder(qtbot, core: NexusApp, which: str) -> None:
    """Opened without a name (the slug stands in), the title shows the name the folder holds once read."""
    opener, title, loaded = OPENERS[which]
    window = opener(core, "aria")
    qtbot.addWidget(window)
    assert window.windowTitle() == title.format("aria")
    qtbot.waitUntil(lambda: loaded(window), timeout=60_000)
    assert window.windowTitle() == title.format("Aria")
    window.done(0)


@pytest.mark.parametrize("which", list(OPENERS))
def test_a_persona_with_a_broken_settings_file_opens_the_window_saying_which_file(
    qtbot, core: NexusApp, which: str
) -> None:
    settings = core.personas.load("aria").folder / "persona.toml"
    settings.write_text('name = "Aria\n', encoding="utf-8")  # the string is never closed
    opener, _title, loaded = OPENERS[which]
    window = opener(core, "aria", name="Aria")  # no exception: nothing is read while it opens
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: f"{settings} is not valid TOML" in _status(window), timeout=60_000)
    assert not loaded(window)
    if isinstance(window, ModelSettingsDialog):  # nothing to save over settings that were not read
        assert not window.save_button.isEnabled() and not window.chat.isEnabled()
        window.save()
        assert settings.read_text(encoding="utf-8") == 'name = "Aria\n'
    window.done(0)
