"""Screenshots of Settings → Tools, for docs/screenshots: tools-{en,ja}.png (the MCP test server of
tests/integration listed for Aria, one tool always allowed, one never).

    xvfb-run -a .venv/bin/python scripts/screenshot_tools.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication, QComboBox

from nexus_ark.app import NexusApp
from ui.settings.settings_dialog import SettingsDialog
from ui.util import i18n

SERVER = Path(__file__).resolve().parents[1] / "tests" / "integration" / "mcp_test_server.py"


def wait(app: QApplication, until, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there")
        app.processEvents()
        time.sleep(0.01)


def shoot(qt: QApplication, language: str, out: Path) -> None:
    i18n.set_language(language)
    with NexusApp(Path(tempfile.mkdtemp()) / "data") as core:
        server = {"command": sys.executable, "args": [str(SERVER)], "useWhen": "the weather, sums"}
        (core.layout.root / "mcp.json").write_text(json.dumps({"mcpServers": {"helper": server}}))
        core.tools.decide("aria", "helper:weather", "always")
        core.tools.decide("aria", "helper:crash", "never")
        dialog = SettingsDialog(core, current_persona="aria")
        dialog.resize(900, 560)
        dialog.show()
        dialog.tabs.setCurrentWidget(dialog.tools)
        wait(qt, lambda: dialog.tools.findChild(QComboBox, "decision:helper:weather") is not None)
        wait(qt, lambda: dialog.status.text() == "", 10)
        for _ in range(30):
            qt.processEvents()
            time.sleep(0.01)
        dialog.grab().save(str(out / f"tools-{language}.png"))
        dialog.close()


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    qt = QApplication.instance() or QApplication([])
    for language in ("en", "ja"):
        shoot(qt, language, out)
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
