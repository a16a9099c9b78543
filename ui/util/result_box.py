"""How work done on a worker (an import, an export) tells the person how it went: a message box that does
not block, over a window that may have closed meanwhile."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget
from shiboken6 import isValid


def tell(parent: QWidget | None, title: str, text: str, *, warn: bool = False, name: str = "result") -> None:
    if parent is not None and not isValid(parent):
        return  # the window closed meanwhile: the work is done, there is no one to tell
    icon = QMessageBox.Icon.Warning if warn else QMessageBox.Icon.Information
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName(name)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()  # window-modal and non-blocking: the UI thread goes on
