"""A download that cannot start (offline: the Hub's address refuses connections) says so in the dialog in
words, wrapped at the dialog's width, with what was kept and what works instead. The Hub is the loopback
stand-in (tests/integration/hub_server.py), stopped: its port refuses connections, as a server that is not
there does."""

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
from ui.models.get_model_dialog import GetModelDialog
from ui.util import i18n

NOON = datetime(2026, 11, 25, 12, 0)
pytestmark = [
    pytest.mark.integration,
    pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate"),
]


@pytest.fixture
def offline_hub(served: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubStandIn]:
    stand_in = HubStandIn(served).start()
    monkeypatch.setenv("HF_ENDPOINT", stand_in.hub_url)
    monkeypatch.setenv("NEXUS_ARK_CATALOGUE", str(write_catalogue(tmp_path, stand_in)))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    stand_in.stop()  # from here its address refuses connections
    yield stand_in


@pytest.fixture
def core(data_dir: Path) -> Iterator[NexusApp]:
    app = NexusApp(data_dir, clock=FixedClock(NOON), backend_factory=lambda config: ScriptedMind()).open()
    i18n.set_language("en")
    yield app
    app.close()
    i18n.set_language("en")


def _download(qtbot, dialog: GetModelDialog) -> str:
    qtbot.waitUntil(lambda: dialog.table.rowCount() > 0, timeout=10_000)
    qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.download_button.isEnabled(), timeout=30_000)
    return dialog.progress_label.text()


def test_an_offline_download_says_in_words_that_nothing_was_downloaded_and_what_works_instead(
    qtbot, core: NexusApp, offline_hub: HubStandIn
) -> None:
    dialog = GetModelDialog(core, "aria", name="Aria")
    qtbot.addWidget(dialog)
    dialog.show()
    said = _download(qtbot, dialog)
    assert "cannot be reached: the connection was refused." in said
    assert "Nothing was downloaded." in said and "is kept" not in said
    assert "GGUF file already on this computer" in said and "model server" in said
    assert "Error" not in said  # no exception class (ConnectError) in sight
    # Wrapped inside the dialog: several lines, none wider than the dialog.
    label = dialog.progress_label
    assert label.wordWrap()
    qtbot.waitUntil(lambda: label.height() > 2 * label.fontMetrics().height(), timeout=5_000)
    assert label.geometry().right() < dialog.width()

    i18n.set_language("ja")
    said = _download(qtbot, dialog)
    assert "何もダウンロードしていません" in said and "接続が拒否されました" in said, said


def test_an_offline_download_with_a_part_from_before_says_it_is_kept(
    qtbot, core: NexusApp, offline_hub: HubStandIn, data_dir: Path
) -> None:
    part = part_path(data_dir / "models" / offline_hub.entry.file)
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(b"\0" * 3_000_000)  # what an earlier, cancelled try left
    dialog = GetModelDialog(core, "aria", name="Aria")
    qtbot.addWidget(dialog)
    dialog.show()
    said = _download(qtbot, dialog)
    assert "3.0 MB of 98" in said and "were downloaded and are kept" in said, said
    assert "Nothing was downloaded" not in said
    assert part.stat().st_size == 3_000_000
