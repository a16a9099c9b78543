"""pytest-qt checks of the tray on a real X server with a real tray host. Not collected by the normal run
(the UI tests render offscreen, where no tray exists): tests/ui/test_tray.py starts Xvfb, a session bus
and trayer, and runs this file in a fresh pytest with QT_QPA_PLATFORM=xcb.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

if os.environ.get("QT_QPA_PLATFORM") != "xcb" or not os.environ.get("DISPLAY"):
    pytest.skip("run by tests/ui/test_tray.py on Xvfb with a tray host", allow_module_level=True)

from nexus_ark.app import NexusApp
from nexus_ark.config import load_app_settings
from ui.life.tray import Tray, open_conversation_on_click
from ui.main.main_window import MainWindow
from ui.util import i18n

pytestmark = pytest.mark.integration


def _red_pixels(area: QRect) -> int:
    """Pixels of the badge's red in this part of the real screen (what the tray host shows)."""
    image = QGuiApplication.primaryScreen().grabWindow(0, area.x(), area.y(), area.width(), area.height())
    image = image.toImage().convertToFormat(QImage.Format.Format_RGB32)
    count = 0
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            count += c.red() > 170 and c.green() < 90 and c.blue() < 90
    return count


def _light(point: QPoint) -> bool:
    grab = QGuiApplication.primaryScreen().grabWindow(0, point.x(), point.y(), 1, 1)
    return grab.toImage().pixelColor(0, 0).lightness() > 200


@pytest.fixture
def tray(qtbot):
    i18n.set_language("en")
    # The tray host owns the _NET_SYSTEM_TRAY_S0 selection once it is up.
    qtbot.waitUntil(QSystemTrayIcon.isSystemTrayAvailable, timeout=15_000)
    window = QWidget()
    qtbot.addWidget(window)
    made = Tray(window)
    made.show()
    # Embedded in the host: the icon then has a place on the screen.
    qtbot.waitUntil(lambda: not made.icon.geometry().isEmpty(), timeout=15_000)
    yield made
    made.hide()


def test_the_icon_sits_in_the_tray_host_and_shows_the_unread_badge(qtbot, tray: Tray) -> None:
    place = tray.icon.geometry()
    screen = QGuiApplication.primaryScreen().geometry()
    assert screen.contains(place) and place.top() < 60  # trayer docks at the top edge
    assert tray.icon.toolTip() == "Nexus Ark"
    qtbot.waitUntil(lambda: _red_pixels(tray.icon.geometry()) == 0, timeout=5_000)

    tray.set_unread(3)
    assert tray.icon.toolTip() == "Nexus Ark\n3 unread messages"
    # The red badge, as the tray host draws it (the icon's place is read again: the host may re-lay out).
    qtbot.waitUntil(lambda: _red_pixels(tray.icon.geometry()) > 20, timeout=5_000)

    tray.set_unread(0)
    assert tray.icon.toolTip() == "Nexus Ark"
    qtbot.waitUntil(lambda: _red_pixels(tray.icon.geometry()) == 0, timeout=5_000)

    shot = os.environ.get("NEXUS_ARK_TRAY_SCREENSHOT")
    if shot:  # docs/screenshots/tray.png: the badge and the open menu, as a person sees them
        tray.set_unread(3)
        qtbot.waitUntil(lambda: _red_pixels(tray.icon.geometry()) > 20, timeout=5_000)
        tray.menu.popup(QPoint(place.right() - tray.menu.sizeHint().width(), place.bottom() + 4))
        qtbot.waitExposed(tray.menu)
        qtbot.waitUntil(lambda: _light(tray.menu.geometry().center()), timeout=5_000)  # drawn on screen
        area = tray.menu.geometry().united(tray.icon.geometry()).adjusted(-12, -12, 12, 12) & screen
        pixmap = QGuiApplication.primaryScreen().grabWindow(
            0, area.x(), area.y(), area.width(), area.height()
        )
        Path(shot).parent.mkdir(parents=True, exist_ok=True)
        assert pixmap.scaled(area.size() * 2).save(shot, "PNG")
        tray.menu.hide()


def test_pause_autonomy_in_the_menu_emits_the_signal(qtbot, tray: Tray) -> None:
    place = tray.icon.geometry()
    tray.menu.popup(QPoint(place.left() - 200, place.bottom() + 4))
    qtbot.waitExposed(tray.menu)
    where = tray.menu.actionGeometry(tray.pause_action).center()
    with qtbot.waitSignal(tray.pause_toggled, timeout=5_000) as paused:
        qtbot.mouseClick(tray.menu, Qt.MouseButton.LeftButton, pos=where)  # a click on the menu item
    assert paused.args == [True]
    assert tray.paused and "Autonomy paused" in tray.icon.toolTip()

    with qtbot.assertNotEmitted(tray.pause_toggled):  # the runtime's own state shown, not echoed back
        tray.set_paused(False)
    assert not tray.paused and "Autonomy paused" not in tray.icon.toolTip()


@pytest.fixture
def main_window(qtbot, data_dir: Path):
    core = NexusApp(data_dir).open()
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=60_000)
    assert window.tray is not None
    qtbot.waitUntil(lambda: not window.tray.icon.geometry().isEmpty(), timeout=15_000)
    yield window
    window.quit_app()
    core.close()


def test_closing_keeps_the_app_in_the_tray_when_chosen_and_quit_really_quits(
    qtbot, main_window: MainWindow, data_dir: Path
) -> None:
    window, tray = main_window, main_window.tray
    assert tray is not None and not tray.keep_running
    tray.keep_running_action.trigger()  # the person ticks "Keep running in the tray ..."
    # Remembered, written on a worker by config.toml's owner (it was saved on the UI thread).
    qtbot.waitUntil(lambda: load_app_settings(data_dir / "config.toml").keep_running_in_tray, timeout=10_000)

    with qtbot.assertNotEmitted(QApplication.instance().lastWindowClosed):
        window.close()
    assert not window.isVisible() and tray.is_visible()
    assert not window.turns.worker.closed  # the personas go on: nothing was shut down

    # A notification for Hikari is clicked (its callback runs on the notifier's thread).
    threading.Thread(target=open_conversation_on_click("hikari")).start()
    qtbot.waitUntil(lambda: window.isVisible() and window.current_slug == "hikari", timeout=10_000)
    qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=60_000)

    tray.quit_action.trigger()  # Quit in the tray's menu ends the app whatever the setting says
    assert window.quitting and not window.isVisible() and not tray.is_visible()
    assert window.turns.worker.closed


def test_without_the_setting_closing_the_window_closes_the_app(qtbot, main_window: MainWindow) -> None:
    assert not main_window.app.settings.keep_running_in_tray
    main_window.close()
    assert not main_window.isVisible() and not main_window.tray.is_visible()
    assert main_window.turns.worker.closed
