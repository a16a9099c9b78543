"""The tray on a real X server (Xvfb) with a real tray host (trayer), the way a Linux desktop has one.

The other UI tests render offscreen, where Qt has no tray, and one process has one QApplication on one
platform: so this starts the desktop and runs tests/ui/tray_checks.py (pytest-qt tests) in a fresh pytest
on the xcb platform. Skipped only where Xvfb, dbus or trayer are not installed (.ci/run installs them).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.integration.desktop import desktop

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHECKS = Path(__file__).with_name("tray_checks.py")


def test_the_tray_in_a_real_tray_host(tmp_path: Path) -> None:
    shot = tmp_path / "tray.png"
    with desktop(tmp_path, tray=True) as d:
        env = d.env | {"QT_QPA_PLATFORM": "xcb", "NEXUS_ARK_TRAY_SCREENSHOT": str(shot)}
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", str(CHECKS)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=280,
        )
    report = proc.stdout[-8000:] + proc.stderr[-4000:]
    assert proc.returncode == 0, report
    assert re.search(r"\b4 passed\b", proc.stdout) and "skipped" not in proc.stdout, report
    image = QImage(str(shot))
    assert not image.isNull() and image.width() > 300, "the screenshot of the tray was not taken"
