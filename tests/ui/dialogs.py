"""A modal dialog blocks the test that made it appear: read it and close it, as a person would."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox


def read_next_message_box(seen: list[str], every_ms: int = 50) -> None:
    """From the event loop, wait for the next modal message box, put its text in `seen` and accept it."""

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QMessageBox):
            seen.append(dialog.text())
            dialog.accept()
        else:
            QTimer.singleShot(every_ms, look)

    QTimer.singleShot(every_ms, look)


def close_next_dialog(kind: type, seen: list[str], every_ms: int = 50) -> None:
    """From the event loop, wait for the next modal dialog of `kind`, put its title in `seen`, close it."""

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, kind):
            seen.append(dialog.windowTitle())
            dialog.reject()
        else:
            QTimer.singleShot(every_ms, look)

    QTimer.singleShot(every_ms, look)
