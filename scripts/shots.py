"""What the screenshot scripts share: waiting for the window to get somewhere, letting paints settle, and
one shot per language into OUT_DIR (the first argument, else docs/screenshots)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication


def wait(qt: QApplication, until: Callable[[], object], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there")
        qt.processEvents()
        time.sleep(0.01)


def settle(qt: QApplication, seconds: float = 0.3) -> None:
    """Let layouts and paints catch up before a grab."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        qt.processEvents()
        time.sleep(0.01)


def each_language(shoot: Callable[[QApplication, str, Path], None]) -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    qt = QApplication.instance() or QApplication([])
    for language in ("en", "ja"):
        shoot(qt, language, out)
    return 0
