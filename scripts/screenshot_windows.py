"""Screenshots of the persona editor and the Settings window for docs/screenshots:
persona-editor-{en,ja}[-dark].png and settings-{en,ja}[-dark].png.

A temporary data folder and the scripted mind. Each picture is four tabs of one window side by side, two
by two, as the window draws them (Qt's own grab, without a title bar: Xvfb has no window manager).

The persona editor is opened on a shipped persona (Aria in English, ひかり in Japanese) once its worker has
read it: the soul beside its preview, the persona's name and language, its autonomy and its model. Two
routines in the persona's language are added to its persona.toml first, so the routines table has rows.

The Settings window is shown as the app's settings say: the language of the picture and, in the dark
ones, the dark theme. Its tabs are pictured after the workers have built the model pickers from the
catalogue and listed the persona's memory backups: five days of a short conversation with a daily copy
each, and one backup restored, which keeps the memory before the restore as a copy of its own.

    xvfb-run -a .venv/bin/python scripts/screenshot_windows.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.backups import backup_if_due
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.personas.persona_editor import PersonaEditor
from ui.settings.settings_dialog import SettingsDialog
from ui.util import i18n, theme

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
SLUGS = {"en": "aria", "ja": "hikari"}
ROUTINES = {
    "en": (
        ("0 8 * * *", "Say good morning and ask how the night was"),
        ("30 21 * * 0", "Look back on the week together"),
    ),
    "ja": (
        ("0 8 * * *", "おはようと言って、よく眠れたか聞く"),
        ("30 21 * * 0", "一週間を一緒にふり返る"),
    ),
}
TALK = {
    "en": ("Good morning!", "Good morning! Did you sleep well?"),
    "ja": ("おはよう！", "おはよう！よく眠れた？"),
}
EDITOR_SIZE = (980, 640)
SETTINGS_SIZE = (720, 560)
GAP = 16


def wait_for(done: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    app = QApplication.instance()
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            raise SystemExit(f"{what} did not arrive in {seconds:.0f} s")
        app.processEvents()
        time.sleep(0.02)


def pump(seconds: float) -> None:
    app = QApplication.instance()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def mosaic(window: QWidget, tabs: QTabWidget, indices: list[int], dark: bool) -> QPixmap:
    """The window grabbed on each of these tabs, two by two on a plain background."""
    shots = []
    for index in indices:
        tabs.setCurrentIndex(index)
        pump(0.3)
        shots.append(window.grab())
    width, height = shots[0].width(), shots[0].height()
    picture = QPixmap(3 * GAP + 2 * width, 3 * GAP + 2 * height)
    picture.setDevicePixelRatio(shots[0].devicePixelRatio())
    picture.fill(QColor("#1c1c20" if dark else "#dcdce0"))
    painter = QPainter(picture)
    for n, shot in enumerate(shots):
        row, column = divmod(n, 2)
        painter.drawPixmap(QPoint(GAP + column * (width + GAP), GAP + row * (height + GAP)), shot)
    painter.end()
    return picture


def _open(language: str, dark: bool, clock: FixedClock) -> NexusApp:
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, clock=clock, backend_factory=lambda config: ScriptedMind()).open()
    core.admin.update_settings(language=language, theme="dark" if dark else "light")
    theme.apply_theme("dark" if dark else "light")
    i18n.set_language(language)
    return core


def _add_routines(core: NexusApp, slug: str, language: str) -> None:
    lines = ["", "[autonomy]", "routines = ["]
    lines += [f'  {{cron = "{cron}", task = "{task}"}},' for cron, task in ROUTINES[language]]
    lines += ["]", ""]
    path = core.layout.personas_dir / slug / "persona.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n".join(lines), encoding="utf-8")


def shoot_editor(out: Path, language: str, dark: bool) -> Path:
    core = _open(language, dark, FixedClock(NOW))
    slug = SLUGS[language]
    _add_routines(core, slug, language)
    editor = PersonaEditor(core, slug)
    editor.resize(*EDITOR_SIZE)
    editor.show()
    # The worker reads persona.md, persona.toml and the avatar (here the initial's disc: none is shipped).
    wait_for(
        lambda: editor.persona is not None and not editor.avatar.pixmap().isNull(),
        f"{slug}'s persona",
    )
    pump(0.5)  # the preview's timer, started by the text arriving
    pages = editor.form.pages
    indices = [0] + [editor.tabs.indexOf(pages[key]) for key in ("general", "autonomy", "model")]
    target = out / f"persona-editor-{language}{'-dark' if dark else ''}.png"
    mosaic(editor, editor.tabs, indices, dark).save(str(target))
    editor.ask_before_discard = False
    editor.close()
    core.close()
    return target


def _plant_backups(core: NexusApp, clock: FixedClock, slug: str, language: str) -> None:
    """Five days of talk, a daily copy each day (the runtime takes the first as it opens the memory), and
    yesterday's copy restored, which keeps today's memory as a before-restore copy."""
    store = core.personas.memory(slug)
    folder = core.layout.backups_dir / slug
    said, answered = TALK[language]
    for day in range(1, 6):
        for n in range(day):
            when = iso(clock.now() + timedelta(hours=2, minutes=n))
            store.messages.add(speaker="user", role="user", content=said, created_at=when)
            store.messages.add(speaker=slug, role="assistant", content=answered, created_at=when)
        clock.advance(24 * 3600)
        backup_if_due(store, folder, clock=clock)
    yesterday = core.admin.list_backups(slug)[1]
    core.admin.restore_backup(slug, yesterday.path)


def shoot_settings(out: Path, language: str, dark: bool) -> Path:
    clock = FixedClock(NOW - timedelta(days=5))
    core = _open(language, dark, clock)
    slug = SLUGS[language]
    _plant_backups(core, clock, slug, language)
    dialog = SettingsDialog(core, current_persona=slug)
    dialog.resize(*SETTINGS_SIZE)
    dialog.show()
    wait_for(
        lambda: dialog._pickers_ready and dialog.data.backup_list.topLevelItemCount() > 0,
        "the model catalogue and the backups",
    )
    pump(0.5)
    # Restore… becomes available with a backup chosen.
    dialog.data.backup_list.setCurrentItem(dialog.data.backup_list.topLevelItem(0))
    target = out / f"settings-{language}{'-dark' if dark else ''}.png"
    mosaic(dialog, dialog.tabs, [0, 1, 2, 3], dark).save(str(target))
    dialog.close()
    core.close()
    return target


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    for language, dark in (("en", False), ("ja", False), ("en", True), ("ja", True)):
        print(shoot_editor(out, language, dark))
        print(shoot_settings(out, language, dark))


if __name__ == "__main__":
    main()
