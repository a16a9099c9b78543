"""Screenshots of a room's settings dialog (Room > Room settings…) for docs/screenshots: room-settings-en.png
and room-settings-ja.png.

A temporary data folder; Aria, ひかり and Kai in a room ("Lighthouse club" / "灯台クラブ", natural order),
opened in the main window on a scripted model. The dialog is opened from the room's menu and set as a
person would: ひかり muted (her slider greyed), Aria more talkative, Kai quieter, two replies a message.

    xvfb-run -a .venv/bin/python scripts/screenshot_room_settings.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from screenshot_windows import pump, wait_for  # the same waits as its siblings

from nexus_ark.app import NexusApp
from nexus_ark.providers.scripted import ScriptedBackend
from ui.main.main_window import MainWindow
from ui.rooms.room_settings import RoomSettingsDialog
from ui.util import i18n, theme

ROOM = {"en": "Lighthouse club", "ja": "灯台クラブ"}


def shoot(out: Path, language: str) -> Path:
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, backend_factory=lambda config: ScriptedBackend(["…"])).open()
    core.personas.store.create("Kai", language)
    theme.apply_theme("light")
    i18n.set_language(language)
    slug = core.rooms.create(ROOM[language], ["aria", "hikari", "kai"], "natural")
    window = MainWindow(core)
    window.show_language(language)
    window.resize(1000, 700)
    window.show()
    wait_for(lambda: window.ready and window.rooms.room_list.count() == 1, "the persona and the room list")
    window.rooms.room_list.chosen.emit(slug)
    wait_for(
        lambda: window.rooms.room_panel is not None and window.rooms.room_panel.settings is not None,
        "the room",
    )
    panel = window.rooms.room_panel
    target = out / f"room-settings-{language}.png"
    shot: list[str] = []

    def set_and_grab() -> None:
        dialog = panel.room_menu.settings_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, set_and_grab)
            return
        assert isinstance(dialog, RoomSettingsDialog)
        dialog.row("aria").slider.setValue(80)
        dialog.row("hikari").muted.setChecked(True)
        dialog.row("kai").slider.setValue(25)
        dialog.cap_box.setValue(2)
        dialog.pause_box.setValue(3.0)
        dialog.adjustSize()
        pump(0.3)
        dialog.grab().save(str(target))
        shot.append(str(target))
        dialog.reject()

    QTimer.singleShot(0, set_and_grab)
    panel.room_menu.settings_action.trigger()  # exec(): returns once the picture is taken
    if not shot:
        raise SystemExit("the dialog did not open")
    window.close()
    core.close()
    return target


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    for language in ("en", "ja"):
        print(shoot(out, language))


if __name__ == "__main__":
    main()
