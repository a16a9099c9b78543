"""The soul's history in the window (issue 25), driven as a person would on a real NexusApp and a scripted
mind: the editor's saves appear as versions with who and why, a version's text and a comparison of two are
shown, restoring an older one (after saying yes) makes persona.md that version again byte for byte and adds
a "Restored" version, the list follows changes made elsewhere, and the editor's Growth page writes [soul]
into persona.toml. In Japanese as in English, and readable in the dark theme."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QMessageBox

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.runtime.scripted_mind import ScriptedMind
from tests.ui.ui_thread import files_opened_on_the_ui_thread
from ui.personas.persona_editor import PersonaEditor
from ui.soul import history_text
from ui.soul.history_window import SoulHistoryWindow
from ui.util import i18n, theme

NOW = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
OLD_LINE = "- Short, natural replies in English, like a message from a friend."
NEW_LINE = "- Short replies, and a little poetry when the evening is quiet."
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate")


@pytest.fixture(autouse=True)
def _english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir, clock=FixedClock(NOW), backend_factory=lambda config: ScriptedMind()).open()
    yield app
    app.close()


def _soul_file(core: NexusApp) -> Path:
    return core.layout.personas_dir / "aria" / "persona.md"


def _editor(qtbot, core: NexusApp) -> PersonaEditor:
    editor = PersonaEditor(core, "aria")
    editor.ask_before_discard = False
    qtbot.addWidget(editor)
    qtbot.waitUntil(lambda: editor.persona is not None, timeout=10_000)
    return editor


def _save_soul(qtbot, editor: PersonaEditor, text: str) -> None:
    editor.soul_edit.setPlainText(text)
    with qtbot.waitSignal(editor.saved, timeout=30_000):
        assert editor.save()


def _history(qtbot, core: NexusApp) -> SoulHistoryWindow:
    window = SoulHistoryWindow(core, "aria", name="Aria")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: bool(window.versions), timeout=30_000)
    return window


def _rows(window: SoulHistoryWindow) -> list[list[str]]:
    """The list as the person reads it, top (newest) first: version, when, who, why."""
    return [
        [window.list.topLevelItem(row).text(column) for column in range(4)]
        for row in range(window.list.topLevelItemCount())
    ]


def _answer_restore(qtbot, window: SoulHistoryWindow, button: QMessageBox.StandardButton) -> str:
    window.restore_button.click()
    qtbot.waitUntil(lambda: window._confirm is not None and window._confirm.isVisible(), timeout=5_000)
    box = window._confirm
    question = box.text()
    box.button(button).click()
    return question


def test_editor_saves_are_versions_to_read_compare_and_restore(qtbot, core: NexusApp) -> None:
    original = _soul_file(core).read_bytes().decode("utf-8")
    assert OLD_LINE in original
    editor = _editor(qtbot, core)
    _save_soul(qtbot, editor, original.replace(OLD_LINE, NEW_LINE))
    third = original.replace(OLD_LINE, NEW_LINE) + "\n## What you are learning\n- Haiku, one a week.\n"
    _save_soul(qtbot, editor, third)

    with files_opened_on_the_ui_thread(core.data_dir) as opened:
        window = _history(qtbot, core)
    assert opened == [], "the history is read on a worker"
    rows = _rows(window)
    assert [row[2] for row in rows] == ["You, in the editor", "You, in the editor", "When history began"]
    assert rows[0][0].endswith("(now)") and not rows[1][0].endswith("(now)")
    local = NOW.astimezone().strftime("%Y-%m-%d %H:%M")
    assert {row[1] for row in rows} == {local}, "when, in local time"
    first, second, _now = window.versions
    assert window.text_view.toPlainText() == third, "the soul as it is now, shown first"
    assert not window.restore_button.isEnabled(), "the soul already says what the newest version says"

    window.select(first.id)
    assert window.text_view.toPlainText() == original
    assert window.text_view.isVisible() and window.text_view.isReadOnly()
    assert window.restore_button.isEnabled()

    window.compare_with(second.id)
    shown = window.comparison_view.toPlainText()
    assert window.comparison_view.isVisible()
    assert f"−\n{OLD_LINE}" in shown and f"+\n{NEW_LINE}" in shown, shown
    assert "What you are learning" not in shown, "only the two versions compared"
    assert window.caption.text().startswith("From Version 1 to Version 2. Lines added: 1; removed: 1.\n")
    window.compare_with(None)
    assert window.text_view.toPlainText() == original

    # Saying no leaves everything as it was.
    assert "Version 1" in _answer_restore(qtbot, window, QMessageBox.StandardButton.Cancel)
    assert _soul_file(core).read_bytes() == third.encode("utf-8")
    assert len(window.versions) == 3

    with (
        files_opened_on_the_ui_thread(core.data_dir) as opened,
        qtbot.waitSignal(window.restored, timeout=30_000) as made,
    ):
        _answer_restore(qtbot, window, QMessageBox.StandardButton.Yes)
    assert opened == [], "the restore runs on a worker"
    assert _soul_file(core).read_bytes() == original.encode("utf-8"), "byte for byte the first version"
    qtbot.waitUntil(lambda: len(window.versions) == 4 and not window._loading, timeout=30_000)
    top = _rows(window)[0]
    assert top[2] == "Restored" and top[3] == "restored version 1" and top[0].endswith("(now)")
    assert window.selected_id() == made.args[0] == window.versions[-1].id
    assert window.text_view.toPlainText() == original
    assert "Restored Version 1 as Version 4" in window.status.text()
    assert [v.author for v in core.souls.versions("aria")] == ["first", "editor", "editor", "restore"]


def test_the_list_follows_a_change_made_in_another_window(qtbot, core: NexusApp) -> None:
    window = _history(qtbot, core)
    assert [row[2] for row in _rows(window)] == ["When history began"]
    window.select(window.versions[0].id, compare=None)
    editor = _editor(qtbot, core)
    soul = _soul_file(core).read_text(encoding="utf-8")
    _save_soul(qtbot, editor, soul.replace(OLD_LINE, NEW_LINE))
    # The core's soul_changed event, not a button: the window reads the history again by itself.
    qtbot.waitUntil(lambda: len(_rows(window)) == 2, timeout=30_000)
    assert _rows(window)[0][2] == "You, in the editor"


def test_a_comparison_reads_in_the_dark_theme_and_the_light_one(qapp) -> None:
    """The tinted lines keep the text at WCAG AA (4.5:1) against their tint, in both themes."""
    try:
        for name, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
            theme.apply_theme(name)
            colours = history_text.Colours.of(palette)
            for tint in (colours.added, colours.removed, colours.added_strong, colours.removed_strong):
                ratio = theme.contrast(QColor(colours.text), QColor(tint))
                assert ratio >= 4.5, f"{name}: text {colours.text} on {tint}: {ratio:.2f}"
            assert theme.contrast(QColor(colours.muted), QColor(colours.folded)) >= 4.5, name
            shown = history_text.compare(
                "## How you speak\n- Short replies.\n",
                "## How you speak\n- Short replies, and haiku.\n",
                palette,
            )
            assert (shown.added, shown.removed) == (1, 1)
            assert colours.added in shown.html and colours.added_strong in shown.html
    finally:
        theme.apply_theme("system")


def test_growth_page_saves_proposals_and_fixed_sections_into_persona_toml(qtbot, core: NexusApp) -> None:
    toml_path = core.layout.personas_dir / "aria" / "persona.toml"
    editor = _editor(qtbot, core)
    growth = editor.form.growth
    soul = editor.soul_edit.toPlainText()
    offered = [growth.fixed.item(row).text() for row in range(growth.fixed.count())]
    assert offered == ["Who you are", "How you speak", *offered[2:]] and len(offered) >= 2
    assert growth.proposals.isChecked(), "proposals are on unless the person turns them off"

    editor.tabs.setCurrentWidget(editor.form.pages["soul"])
    assert editor.tabs.tabText(editor.tabs.currentIndex()) == "Growth"
    growth.proposals.click()
    assert growth.set_fixed("How you speak", True)
    with qtbot.waitSignal(editor.saved, timeout=30_000):
        assert editor.save()
    written = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    assert written["soul"] == {"proposals": False, "fixed": ["How you speak"]}
    assert core.personas.load("aria").settings.soul.fixed == ["How you speak"]

    # A heading added in the editor is offered at once; one removed stays ticked, said to be missing.
    editor.soul_edit.setPlainText(
        soul.replace("## How you speak", "## Your voice") + "\n## Haiku\n- Short.\n"
    )
    qtbot.waitUntil(lambda: growth.fixed.count() == len(offered) + 2, timeout=5_000)
    texts = [growth.fixed.item(row).text() for row in range(growth.fixed.count())]
    assert "Your voice" in texts and "Haiku" in texts
    assert texts[-1] == "How you speak (not in the soul now)"
    assert growth.value()["fixed"] == ["How you speak"]

    reopened = _editor(qtbot, core)
    assert not reopened.form.growth.proposals.isChecked()
    assert reopened.form.growth.value() == {"proposals": False, "fixed": ["How you speak"]}
    assert reopened.form.changes() == {}, "opening changes nothing"


def test_the_history_button_of_the_editor_asks_for_the_window(qtbot, core: NexusApp) -> None:
    editor = _editor(qtbot, core)
    with qtbot.waitSignal(editor.history_requested, timeout=5_000) as asked:
        editor.form.growth.history_button.click()
    assert asked.args == ["aria", "Aria"]


def test_the_menu_opens_one_history_window_per_persona(qtbot, core: NexusApp) -> None:
    from ui.main.main_window import MainWindow

    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.current_slug == "aria" and window.ready, timeout=60_000)
    assert window.menus.soul_history_action in window.menus.file_menu.actions()
    actions = window.menus.file_menu.actions()
    assert (
        actions.index(window.menus.soul_history_action) == actions.index(window.menus.edit_persona_action) + 1
    )
    window.menus.soul_history_action.trigger()
    window.menus.soul_history_action.trigger()
    opened = [w for w in window.findChildren(SoulHistoryWindow) if w.isVisible()]
    assert len(opened) == 1 and opened[0].slug == "aria"
    assert opened[0].windowTitle() == "Soul history: Aria"
    qtbot.waitUntil(lambda: bool(opened[0].versions), timeout=30_000)
    opened[0].close()
    window.close()


def test_in_japanese_the_history_shows_no_english(qtbot, core: NexusApp) -> None:
    from tests.ui.test_settings_dialog import untranslated

    editor = _editor(qtbot, core)
    soul = editor.soul_edit.toPlainText()
    _save_soul(qtbot, editor, soul.replace(OLD_LINE, NEW_LINE))
    window = _history(qtbot, core)
    assert "Restore this version…" in untranslated(window), "the check sees English where it is"
    i18n.set_language("ja")
    window.retranslate()
    window.select(window.versions[0].id, compare=window.versions[1].id)
    assert untranslated(window) == []  # the editor's Growth page: test_persona_editor's Japanese check
    rows = _rows(window)
    assert [row[2] for row in rows] == ["あなた（エディターで）", "履歴の始まり"]
    assert rows[0][0] == "バージョン 2（現在）"
    assert window.caption.text().startswith("バージョン 1 からバージョン 2 への変更")
    QApplication.processEvents()
