"""The Settings window, driven like a person would: it shows what config.toml holds, language, theme and text
size change at once and survive a restart, the data folder opens, and a memory backup is restored without
losing the memory it replaces."""

from __future__ import annotations

import json
import os
import re
import string
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QTableWidget,
    QTabWidget,
    QTreeWidget,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.memory.backups import backup
from ui.settings.settings_dialog import SettingsDialog
from ui.util import i18n, theme

CATALOGUE = Path(__file__).resolve().parents[2] / "assets" / "translations" / "ja.json"
CONFIG = """\
language = "ja"
theme = "dark"
font_size = 15
desktop_notifications = false
keep_running_in_tray = true

[chat_model]
spec = "ollama:qwen2.5:1.5b"
api_base = "http://127.0.0.1:11434"

[internal_model]
spec = "litellm:openai/gpt-4o-mini"
api_key = "${OPENAI_API_KEY}"
"""


@pytest.fixture(autouse=True)
def _english_and_the_desktop_look():
    i18n.set_language("en")
    yield
    if QApplication.instance() is not None:
        theme.apply_appearance("system", 0)
    i18n.set_language("en")


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir, clock=FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))).open()
    yield app
    app.close()


def _dialog(qtbot, app: NexusApp, **kwargs) -> SettingsDialog:
    dialog = SettingsDialog(app, **kwargs)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.chat_picker is not None, timeout=10_000)
    return dialog


def _choose(box: QComboBox, data: str) -> None:
    box.setCurrentIndex(box.findData(data))


def test_settings_window_shows_what_config_toml_holds(qtbot, data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text(CONFIG, encoding="utf-8")
    with NexusApp(data_dir) as app:
        dialog = _dialog(qtbot, app)
        assert dialog.language_box.currentData() == "ja"
        assert dialog.theme_box.currentData() == "dark"
        assert dialog.font_size.value() == 15
        assert not dialog.notifications_check.isChecked()
        assert dialog.tray_check.isChecked()
        assert dialog.data.data_path.text() == str(data_dir.resolve())
        chat = dialog.chat_picker
        assert chat.backend_box.currentData() == "ollama"
        assert chat.ollama_model.currentText() == "qwen2.5:1.5b"
        assert chat.ollama_host.text() == "http://127.0.0.1:11434"
        assert not dialog.same_as_chat.isChecked() and dialog.internal_picker.isEnabled()
        assert dialog.internal_picker.backend_box.currentData() == "litellm"
        assert dialog.internal_picker.litellm_model.text() == "openai/gpt-4o-mini"
        assert dialog.internal_picker.litellm_key.text() == "${OPENAI_API_KEY}"

        written = (data_dir / "config.toml").read_text(encoding="utf-8")  # with the seeded personas
        dialog.apply()  # nothing touched: nothing to write
        assert dialog.status.text() == "Nothing changed."
        assert (data_dir / "config.toml").read_text(encoding="utf-8") == written


def test_language_theme_and_text_size_apply_at_once_and_persist_across_a_restart(
    qtbot, core: NexusApp, data_dir: Path
) -> None:
    dialog = _dialog(qtbot, core)
    assert not theme.is_dark()
    _choose(dialog.language_box, "ja")
    _choose(dialog.theme_box, "dark")
    dialog.font_size.setValue(15)
    dialog.notifications_check.setChecked(False)
    _choose(dialog.chat_picker.backend_box, "ollama")
    dialog.chat_picker.ollama_model.setEditText("qwen2.5:3b")
    with qtbot.waitSignal(dialog.applied, timeout=10_000):
        dialog.apply_button.click()

    assert i18n.current_language() == "ja"
    assert dialog.windowTitle() == "設定" and dialog.tabs.tabText(0) == "一般"
    assert dialog.status.text() == "保存しました。"
    assert theme.is_dark()
    assert QApplication.font().pointSize() == 15
    core.close()

    with NexusApp(data_dir) as again:
        s = again.settings
        assert (s.language, s.theme, s.font_size, s.desktop_notifications) == ("ja", "dark", 15, False)
        assert s.chat_model.spec == "ollama:qwen2.5:3b"
        reopened = _dialog(qtbot, again)
        assert reopened.language_box.currentData() == "ja"
        assert reopened.theme_box.currentData() == "dark"
        assert reopened.font_size.value() == 15
        assert reopened.chat_picker.ollama_model.currentText() == "qwen2.5:3b"
        _choose(reopened.theme_box, "system")
        reopened.font_size.setValue(reopened.font_size.minimum())  # "Desktop default"
        with qtbot.waitSignal(reopened.applied, timeout=10_000):
            reopened.apply_button.click()
        assert not theme.is_dark()
        assert (again.settings.theme, again.settings.font_size) == ("system", 0)


def _shown_texts(window: QWidget) -> list[str]:
    texts = [window.windowTitle()]
    for widget in [window, *window.findChildren(QWidget)]:
        texts.append(widget.toolTip())
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        if isinstance(widget, QGroupBox):
            texts.append(widget.title())
        if isinstance(widget, QTabWidget):
            texts += [widget.tabText(i) for i in range(widget.count())]
        if isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        if isinstance(widget, QTreeWidget):
            texts += [widget.headerItem().text(i) for i in range(widget.columnCount())]
        if isinstance(widget, QTableWidget):
            texts += [widget.horizontalHeaderItem(i).text() for i in range(widget.columnCount())]
    return [t for t in texts if t]


def untranslated(window: QWidget) -> list[str]:
    """Texts a window shows that are still a catalogue's English original (with its {fields} filled)."""
    catalogue = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    patterns = []
    for english in catalogue:
        parts = [
            re.escape(literal) + (".*" if field else "")
            for literal, field, _, _ in string.Formatter().parse(english)
        ]
        patterns.append(re.compile("".join(parts), re.DOTALL))
    return [text for text in _shown_texts(window) if any(p.fullmatch(text) for p in patterns)]


def test_switching_to_japanese_leaves_no_english_in_the_settings_window(qtbot, core: NexusApp) -> None:
    dialog = _dialog(qtbot, core)
    assert "Settings" in untranslated(dialog), "the check sees English where it is"
    _choose(dialog.language_box, "ja")
    with qtbot.waitSignal(dialog.applied, timeout=10_000):
        dialog.apply()
    assert untranslated(dialog) == []


class _UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url)


def test_data_folder_is_shown_and_opened_in_the_file_manager(qtbot, core: NexusApp) -> None:
    dialog = _dialog(qtbot, core)
    catcher = _UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        dialog.data.open_data_button.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(u.toLocalFile()) for u in catcher.opened] == [core.data_dir]


@pytest.fixture
def tokyo_clock():
    """The person's clock in Japan (UTC+9, no summer time), for what the window shows."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_restoring_a_backup_brings_its_memory_back_and_keeps_the_current_one(
    qtbot, core: NexusApp, tokyo_clock
) -> None:
    memory = core.personas.memory("aria")
    memory.messages.add(speaker="Mika", role="user", content="Monday: I adopted a cat.")
    core.clock.advance(3600)  # type: ignore[attr-defined]
    monday = backup(memory, core.layout.backups_dir / "aria", clock=core.clock)
    memory.messages.add(speaker="Mika", role="user", content="Tuesday: her name is Luna.")
    core.clock.advance(60)  # type: ignore[attr-defined]

    busy = {"aria": True}
    dialog = _dialog(qtbot, core, current_persona="aria", busy=lambda slug: busy.get(slug, False))
    qtbot.waitUntil(lambda: dialog.data.backup_list.topLevelItemCount() == 2, timeout=10_000)
    assert dialog.data.backup_persona.currentData() == "aria"
    newest = dialog.data.backup_list.topLevelItem(0)
    # Taken at 10:00 UTC: shown on the person's clock (the file name keeps UTC).
    assert newest.text(0) == "2026-03-01 19:00" and newest.text(2) == "1"  # one message then
    dialog.data.backup_list.setCurrentItem(newest)
    assert dialog.data.selected_backup().path == monday

    dialog.data.restore_selected(confirm=False)  # a reply is streaming: refused, nothing touched
    assert "is replying" in dialog.status.text()
    assert len(core.personas.memory("aria").messages.recent()) == 2

    busy["aria"] = False
    with qtbot.waitSignal(dialog.persona_restored, timeout=30_000) as restored:
        dialog.data.restore_selected(confirm=False)
    assert restored.args == ["aria"]
    assert [m.content for m in core.personas.memory("aria").messages.recent()] == ["Monday: I adopted a cat."]
    assert "as it was on 2026-03-01 19:00" in dialog.status.text()
    qtbot.waitUntil(lambda: dialog.data.backup_list.topLevelItemCount() == 3, timeout=10_000)
    kinds = [dialog.data.backup_list.topLevelItem(i).text(1) for i in range(3)]
    assert "Before a restore" in kinds
    kept = next(b for b in dialog.data.backups if b.kind == "before-restore")
    assert kept.messages == 2, "the memory before the restore is kept whole"


@pytest.mark.integration
@pytest.mark.qt_log_ignore("propagateSizeHints")  # offscreen platform, shown windows
def test_main_window_opens_settings_and_editor_and_a_language_switch_reaches_every_window(
    qtbot, data_dir: Path
) -> None:
    from ui.main.main_window import MainWindow
    from ui.personas.persona_editor import PersonaEditor

    app = NexusApp(data_dir).open()
    window = MainWindow(app)
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.current_slug == "aria", timeout=10_000)  # the list is read on a worker
        assert window.menus.settings_action.shortcut().toString() == "Ctrl+,"
        window.menus.settings_action.trigger()
        dialog = window.findChild(SettingsDialog)
        assert dialog is not None and dialog.isVisible()
        window.menus.edit_persona_action.trigger()
        editor = window.findChild(PersonaEditor)
        assert editor is not None and editor.slug == "aria"
        editor.ask_before_discard = False
        qtbot.waitUntil(lambda: editor.persona is not None and dialog.chat_picker is not None, timeout=30_000)

        _choose(dialog.language_box, "ja")
        with qtbot.waitSignal(dialog.applied, timeout=10_000):
            dialog.apply()
        assert window.menus.file_menu.title() == "ファイル(&F)"
        assert window.menus.settings_action.text() == "設定…"
        assert window.menus.language_actions["ja"].isChecked()
        assert editor.tabs.tabText(0) == "魂"
        assert untranslated(editor) == []
        assert untranslated(dialog) == []
    finally:
        window.close()
        app.close()


@pytest.mark.integration
def test_the_app_starts_with_the_saved_theme_and_text_size(data_dir: Path, tmp_path: Path) -> None:
    """A fresh process, as a person starts it: the window opens dark and at 15 pt (and quits by itself)."""
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('theme = "dark"\nfont_size = 15\n', encoding="utf-8")
    seen = tmp_path / "seen.txt"
    code = (
        "import sys\nfrom PySide6.QtWidgets import QApplication\nfrom ui.util import theme\n"
        "from ui.app.application import run_window\n"
        "code = run_window(sys.argv[1])\n"
        "open(sys.argv[2], 'w').write(f'{code} {theme.is_dark()} {QApplication.font().pointSize()}')\n"
    )
    env = subprocess_env(QT_QPA_PLATFORM="offscreen", NEXUS_ARK_QUIT_AFTER_MS="1500")
    proc = subprocess.run(
        [sys.executable, "-c", code, str(data_dir), str(seen)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text(encoding="utf-8") == "0 True 15"


def test_a_settings_window_closed_before_its_backups_are_listed_drops_the_list_quietly(
    qtbot, core: NexusApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person closes Settings while its backups are still being read: the list that arrives later is
    dropped, not shown in a deleted box (an error in the Qt event loop before, seen in CI)."""
    import shiboken6

    listed = threading.Event()
    release = threading.Event()
    real = core.admin.list_backups

    def slow_list(slug: str):  # the worker holds its result until the window is gone
        release.wait(10)
        try:
            return real(slug)
        finally:
            listed.set()

    monkeypatch.setattr(core.admin, "list_backups", slow_list)
    dialog = _dialog(qtbot, core, current_persona="aria")
    dialog.data.refresh_backups()
    shiboken6.delete(dialog)
    release.set()
    qtbot.waitUntil(listed.is_set, timeout=10_000)
    qtbot.wait(200)  # the worker's result is delivered on the UI thread: it must find nothing to fill
