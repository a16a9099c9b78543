"""Screenshots of Settings → Tools, for docs/screenshots: tools-{en,ja}.png (the MCP test server of
tests/integration listed for Aria, one tool always allowed, one never).

    xvfb-run -a .venv/bin/python scripts/screenshot_tools.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication, QComboBox

from nexus_ark.app import NexusApp
from ui.settings.settings_dialog import SettingsDialog
from ui.util import i18n

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shots import each_language, settle, wait

SERVER = Path(__file__).resolve().parents[1] / "tests" / "integration" / "mcp_test_server.py"


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
        settle(qt)
        dialog.grab().save(str(out / f"tools-{language}.png"))
        dialog.close()


if __name__ == "__main__":
    raise SystemExit(each_language(shoot))
