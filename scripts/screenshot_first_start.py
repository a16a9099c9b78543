"""Screenshots of the first-start flow, for docs/screenshots: first-start-name-{en,ja}.png (what should the
personas call you) and first-start-mind-{en,ja}.png (which mind: the models of the Ollama stand-in the tests
use, running on loopback, the catalogue's download for this machine, a GGUF file, a provider, the built-in).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshot_first_start.py [OUT_DIR]
    (or xvfb-run -a .venv/bin/python scripts/screenshot_first_start.py)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from nexus_ark.app import NexusApp
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.scripted_mind import ScriptedMind

# The stand-in server lives in tests/ (not installed): run from anywhere, the checkout's root is found.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.integration.wire_server import WireServer
from ui.first_start.flow import FirstStartDialog
from ui.main.main_window import MainWindow
from ui.util import i18n

NAMES = {"en": "Ken", "ja": "けん"}


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
    with WireServer(ScriptedBackend(["Hello!"])) as ollama:
        os.environ["OLLAMA_HOST"] = ollama.url
        for language in ("en", "ja"):
            core = NexusApp(tmp / f"data-{language}", backend_factory=lambda config: ScriptedMind()).open()
            i18n.set_language(language)
            window = MainWindow(core)
            window.resize(1000, 640)
            window.show()
            wait(qt, lambda w=window: w.send_button.isEnabled())
            window.offer_first_start()
            flow = window.findChild(FirstStartDialog)
            assert flow is not None, "the first start opens on a new data folder"
            flow.name_edit.setText(NAMES[language])
            settle(qt)
            flow.grab().save(str(out / f"first-start-name-{language}.png"))
            flow.next_button.click()
            wait(qt, lambda f=flow: f.report is not None)
            settle(qt)
            flow.grab().save(str(out / f"first-start-mind-{language}.png"))
            flow.close()
            window.close()
            core.close()
    print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
