"""Errors from the core in the window's language: the sentence and its hint in Japanese, the file it names
and the library's own words (here tomllib's) kept as they came. The window runs on the real bundled model."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from tests.ui.dialogs import read_next_message_box
from ui.main.main_window import MainWindow
from ui.util import i18n

# The offscreen platform cannot size a shown dialog and says so; that is not our warning.
pytestmark = [pytest.mark.integration, pytest.mark.qt_log_ignore("propagateSizeHints")]


def test_a_persona_whose_settings_file_is_broken_is_explained_in_japanese_naming_the_file(
    qtbot, data_dir: Path
) -> None:
    core = NexusApp(data_dir).open()
    folder = data_dir / "personas" / "broken"
    folder.mkdir()
    (folder / "persona.md").write_text("# Broken\n", encoding="utf-8")
    settings = folder / "persona.toml"
    settings.write_text('name = "Broken\n', encoding="utf-8")  # the string is never closed
    i18n.set_language("ja")
    window = MainWindow(core)
    qtbot.addWidget(window)
    seen: list[str] = []
    try:
        qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=60_000)  # Aria, a usable one
        read_next_message_box(seen)
        window.select_persona("broken")  # opened on the session worker, which fails and says why
        qtbot.waitUntil(lambda: bool(seen), timeout=30_000)
    finally:
        window.close()
        core.close()
        i18n.set_language("en")

    message, hint = seen[0].split("\n")
    assert message.startswith(f"{settings} は正しい TOML ではありません: ")
    assert "line 1" in message  # tomllib's words, as it said them
    assert hint == "上に示した行をテキストエディターで直してください。何も変更・上書きしていません。"
