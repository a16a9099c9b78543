"""A modal dialog blocks the test that made it appear: read it and close it, as a person would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox


def read_next_message_box(seen: list[str], every_ms: int = 50) -> None:
    """From the event loop, wait for the next modal message box, put its text in `seen` and accept it."""
    _when_shown(QMessageBox, lambda box: (seen.append(box.text()), box.accept()), every_ms)


def close_next_dialog(kind: type, seen: list[str], every_ms: int = 50) -> None:
    """From the event loop, wait for the next modal dialog of `kind`, put its title in `seen`, close it."""
    _when_shown(kind, lambda dialog: (seen.append(dialog.windowTitle()), dialog.reject()), every_ms)


def _when_shown(kind: type, act: Callable[[Any], object], every_ms: int) -> None:
    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, kind):
            act(dialog)
        else:
            QTimer.singleShot(every_ms, look)

    QTimer.singleShot(every_ms, look)
