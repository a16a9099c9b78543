"""What the desktop offers the app (asked of Qt, so the settings and the tray ask the same way)."""

from __future__ import annotations

from PySide6.QtWidgets import QSystemTrayIcon


def tray_available() -> bool:
    """Whether the desktop has a tray to put an icon in (where not, closing the window quits)."""
    return QSystemTrayIcon.isSystemTrayAvailable()
