"""Screenshots of getting a model, for docs/screenshots: get-model-{en,ja}.png (the dialog half-way through a
download, from the loopback Hugging Face stand-in the tests use, serving the bundled GGUF) and
notice-{en,ja}.png (ひかり's language notice with its one-click download; Aria's first-start line).

    xvfb-run -a .venv/bin/python scripts/screenshot_get_model.py [OUT_DIR]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from nexus_ark.app import NexusApp
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.catalogue import catalogue_path
from nexus_ark.runtime.scripted_mind import ScriptedMind

# The stand-in server lives in tests/ (not installed): run from anywhere, the checkout's root is found.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.integration.hub_server import HubStandIn
from tests.integration.test_model_download import write_catalogue
from ui.main.main_window import MainWindow
from ui.models.get_model_dialog import GetModelDialog
from ui.util import i18n


def wait(app: QApplication, until, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there")
        app.processEvents()
        time.sleep(0.01)


def settle(app: QApplication, seconds: float = 0.3) -> None:
    """Let layouts and paints catch up before a grab."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    qt = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp())
    served = tmp / "smollm2-135m-instruct-q4_1.gguf"
    bundled = bundled_model_path()
    assert bundled is not None
    shutil.copyfile(bundled, served)
    hub = HubStandIn(served).start()
    hub.rate = 3 * 2**20
    os.environ["HF_ENDPOINT"] = hub.hub_url
    # The shipped catalogue, with the stand-in's file as the first download (the language notice's pick).
    mirror = write_catalogue(tmp, hub, languages='["en", "ja"]').read_text("utf-8").split("[[model]]")[1]
    catalogue = tmp / "catalogue.toml"
    catalogue.write_text("[[model]]" + mirror + catalogue_path().read_text("utf-8"), encoding="utf-8")
    os.environ["NEXUS_ARK_CATALOGUE"] = str(catalogue)
    try:
        for language in ("en", "ja"):
            core = NexusApp(tmp / f"data-{language}", backend_factory=lambda config: ScriptedMind()).open()
            i18n.set_language(language)
            window = MainWindow(core)
            window.resize(1000, 640)
            window.show()
            wait(qt, lambda w=window: w.send_button.isEnabled())
            window.select_persona("aria")
            wait(qt, lambda w=window: w.language_notice.isVisible() and w.language_notice.label.text() != "")
            settle(qt)
            window.grab().save(str(out / f"first-start-{language}.png"))
            window.select_persona("hikari")
            wait(qt, lambda w=window: w.language_notice.get_button.isVisible())
            settle(qt)
            window.grab().save(str(out / f"notice-{language}.png"))

            dialog = GetModelDialog(core, "hikari", window, name="ひかり")
            dialog.show()
            wait(qt, lambda d=dialog: d.table.rowCount() > 0)
            dialog.download()
            wait(qt, lambda d=dialog: d.progress.value() > 350)
            settle(qt)
            dialog.grab().save(str(out / f"get-model-{language}.png"))
            dialog.reject()
            window.close()
            core.close()
    finally:
        hub.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
