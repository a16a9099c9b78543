"""The tray icon: unread badge, show/hide the window, pause autonomy, keep running in the tray, quit.

Only where the desktop has a tray (`QSystemTrayIcon.isSystemTrayAvailable()`); the app works without one,
and without desktop notifications: the in-app inbox holds every message either way.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QRect, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

from nexus_ark.paths import assets_dir
from ui.util.i18n import tr

ICON_PX = 64


def badge_text(count: int) -> str:
    return "" if count <= 0 else ("99+" if count > 99 else str(count))


def badged_pixmap(base: QPixmap, count: int, size: int = ICON_PX) -> QPixmap:
    """The app icon with the unread count in a red disc at its top right (nothing painted for 0)."""
    pixmap = base.scaled(
        size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    text = badge_text(count)
    if not text:
        return pixmap
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    diameter = int(size * (0.62 if len(text) < 3 else 0.72))
    disc = QRect(size - diameter, 0, diameter, diameter)
    painter.setPen(QColor("white"))
    painter.setBrush(QColor(214, 40, 40))
    painter.drawEllipse(disc.adjusted(1, 1, -1, -1))
    font = QFont()
    font.setBold(True)
    font.setPixelSize(int(diameter * (0.6 if len(text) == 1 else 0.48 if len(text) == 2 else 0.36)))
    painter.setFont(font)
    painter.drawText(disc, Qt.AlignmentFlag.AlignCenter, text)
    painter.end()
    return pixmap


class _ClickBridge(QObject):
    """Lives on the UI thread for the whole process: a notification clicked on the notifier's thread
    arrives here queued, carrying only the persona's slug (no window is referenced off the UI thread)."""

    clicked = Signal(str)


_bridge: _ClickBridge | None = None


def click_bridge() -> _ClickBridge:
    """Create it on the UI thread (the window does at start), before any notification is sent."""
    global _bridge
    if _bridge is None:
        _bridge = _ClickBridge()
    return _bridge


def open_conversation_on_click(persona: str) -> Callable[[], None]:
    """An `on_click` for nexus_ark.notify: safe to call from any thread; the window then shows the
    persona's conversation (MainWindow connects click_bridge().clicked to show_conversation)."""
    bridge = click_bridge()

    def clicked() -> None:
        bridge.clicked.emit(persona)

    return clicked


class Tray(QObject):
    """The icon and its menu. The window decides what the actions mean; the runtime listens to
    `pause_toggled`."""

    pause_toggled = Signal(bool)
    keep_running_toggled = Signal(bool)
    quit_requested = Signal()

    def __init__(self, window: QWidget, *, keep_running: bool = False, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self._unread = 0
        self._base = QPixmap(str(assets_dir() / "icons" / "app.png"))
        self.icon = QSystemTrayIcon(self)
        self.icon.setObjectName("trayIcon")
        self.menu = QMenu(window)
        self.menu.setObjectName("trayMenu")
        self.show_action = QAction(self.menu)
        self.show_action.triggered.connect(self.toggle_window)
        self.pause_action = QAction(self.menu, checkable=True)
        self.pause_action.toggled.connect(self._on_pause_toggled)
        self.keep_running_action = QAction(self.menu, checkable=True)
        self.keep_running_action.setChecked(keep_running)
        self.keep_running_action.toggled.connect(self.keep_running_toggled)
        self.quit_action = QAction(self.menu)
        self.quit_action.triggered.connect(self.quit_requested)
        self.menu.addAction(self.show_action)
        self.menu.addSeparator()
        self.menu.addAction(self.pause_action)
        self.menu.addAction(self.keep_running_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.menu.aboutToShow.connect(self.retranslate)  # "Show" or "Hide" as the window is now
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)
        self._repaint()
        self.retranslate()

    # -- state ----------------------------------------------------------------------------------------
    @property
    def unread(self) -> int:
        return self._unread

    def set_unread(self, count: int) -> None:
        """The number of unread messages across personas: painted on the icon and said in the tooltip."""
        count = max(0, int(count))
        if count != self._unread:
            self._unread = count
            self._repaint()
            self.retranslate()

    def set_paused(self, paused: bool) -> None:
        """Show the runtime's state without emitting pause_toggled back to it."""
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.blockSignals(False)
        self.retranslate()

    @property
    def paused(self) -> bool:
        return self.pause_action.isChecked()

    @property
    def keep_running(self) -> bool:
        return self.keep_running_action.isChecked()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def is_visible(self) -> bool:
        return self.icon.isVisible()

    # -- behaviour ------------------------------------------------------------------------------------
    def toggle_window(self) -> None:
        if self.window.isVisible() and not self.window.isMinimized():
            self.window.hide()
        else:
            self.show_window()

    def show_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def _on_pause_toggled(self, paused: bool) -> None:
        self.retranslate()
        self.pause_toggled.emit(paused)

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.toggle_window()

    def _repaint(self) -> None:
        self.icon.setIcon(QIcon(badged_pixmap(self._base, self._unread)))

    def retranslate(self) -> None:
        shown = self.window.isVisible() and not self.window.isMinimized()
        self.show_action.setText(tr("Hide window") if shown else tr("Show window"))
        self.pause_action.setText(tr("Pause autonomy"))
        self.keep_running_action.setText(tr("Keep running in the tray when the window closes"))
        self.quit_action.setText(tr("Quit"))
        lines = ["Nexus Ark"]
        if self._unread:
            lines.append(tr("{count} unread messages", count=self._unread))
        if self.paused:
            lines.append(tr("Autonomy paused"))
        self.icon.setToolTip("\n".join(lines))
