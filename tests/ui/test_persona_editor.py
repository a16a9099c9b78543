"""The persona editor, driven like a person would: the form generated from PersonaSettings, a round trip of
persona.toml that keeps the person's comments, bad values refused with the field named and nothing written,
the soul's preview, and the avatar, duplicate and delete, all still there after a restart."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel
from PySide6.QtGui import QColor, QImage

from nexus_ark.app import NexusApp
from nexus_ark.personas.model import PersonaSettings
from ui.personas.persona_editor import PersonaEditor
from ui.util import i18n
from ui.util.form_fields import LABELS

COMMENTED = """\
# My Aria: keep her gentle
name = "Aria"
language = "en"
description = "A warm, curious companion who speaks English."

[model]
spec = "bundled"
temperature = 0.7  # calm, please

[autonomy]
# she may greet me, but not at night
quiet_hours = "23:00-07:00"
daily_cap = 3
"""


@pytest.fixture(autouse=True)
def _english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    (app.layout.personas_dir / "aria" / "persona.toml").write_text(COMMENTED, encoding="utf-8")
    yield app
    app.close()


def _editor(qtbot, app: NexusApp, slug: str = "aria") -> PersonaEditor:
    editor = PersonaEditor(app, slug)
    editor.ask_before_discard = False
    qtbot.addWidget(editor)
    qtbot.waitUntil(lambda: editor.persona is not None and editor.persona.slug == slug, timeout=10_000)
    return editor


def _leaf_fields(model: type[BaseModel], path: tuple[str, ...] = ()):
    for name, field in model.model_fields.items():
        nested = [t for t in (field.annotation, *get_args(field.annotation)) if isinstance(t, type)]
        sub = next((t for t in nested if issubclass(t, BaseModel)), None)
        if sub is not None and "list" not in str(field.annotation):
            yield from _leaf_fields(sub, (*path, name))
        else:
            yield (*path, name), field


def test_every_persona_setting_has_a_generated_widget_with_label_range_and_tooltip(qtbot, core) -> None:
    form = _editor(qtbot, core).form
    for path, field in _leaf_fields(PersonaSettings):
        editor = form.find(path)
        assert editor is not None, path
        assert editor.widget.objectName() == "field:" + ".".join(path), path
        assert path[-1] in LABELS, f"{'.'.join(path)} needs a label (and its Japanese)"
        if field.description:
            assert editor.widget.toolTip() == field.description, path
    assert form.find(("autonomy", "cooldown_minutes")).widget.maximum() == 7 * 24 * 60
    assert form.find(("autonomy", "daily_cap")).widget.minimum() == 0
    boredom = form.find(("drives", "boredom")).widget
    assert (boredom.minimum(), boredom.maximum()) == (0.0, 1.0)
    assert form.find(("model", "top_p")).widget.minimum() == pytest.approx(0.01), "gt=0 excludes 0"
    assert form.find(("name",)).widget.maxLength() == 80
    language = form.find(("language",)).widget
    assert [language.itemText(i) for i in range(language.count())] == ["English", "日本語"]
    internal = form.sections["internal_model"].widget
    assert internal.isCheckable() and not internal.isChecked()


def test_form_round_trips_persona_toml_keeping_the_persons_comments(qtbot, core, data_dir: Path) -> None:
    editor = _editor(qtbot, core)
    form = editor.form
    assert form.find(("autonomy", "quiet_hours")).widget.text() == "23:00-07:00"
    assert form.find(("model", "temperature")).widget.value() == pytest.approx(0.7)
    form.find(("autonomy", "daily_cap")).widget.setValue(5)
    form.find(("drives", "boredom")).widget.setValue(0.45)
    form.find(("conversation", "episode_lookback_days")).widget.setValue(7)
    form.find(("autonomy", "routines")).add_row({"cron": "0 8 * * *", "task": "Say good morning"})
    form.sections["internal_model"].widget.setChecked(True)
    form.find(("internal_model", "spec")).widget.setText("ollama:qwen2.5:1.5b")
    editor.soul_edit.setPlainText("# Aria\n\nShe loves rainy days.\n")
    with qtbot.waitSignal(editor.saved, timeout=10_000):
        editor.save_button.click()
    assert editor.status.text().startswith("Saved.")

    text = (core.layout.personas_dir / "aria" / "persona.toml").read_text(encoding="utf-8")
    assert text.startswith("# My Aria: keep her gentle\n")
    assert "temperature = 0.7  # calm, please" in text
    assert "# she may greet me, but not at night" in text
    assert "daily_cap = 5" in text and "boredom = 0.45" in text
    assert '[internal_model]\nspec = "ollama:qwen2.5:1.5b"\n' in text, "only what differs from the defaults"
    assert "history_messages" not in text, "untouched defaults are not written out"
    core.close()

    with NexusApp(data_dir) as again:
        reopened = _editor(qtbot, again)
        form = reopened.form
        assert form.find(("autonomy", "daily_cap")).widget.value() == 5
        assert form.find(("drives", "boredom")).widget.value() == pytest.approx(0.45)
        assert form.find(("conversation", "episode_lookback_days")).widget.value() == 7
        assert form.find(("autonomy", "routines")).value() == [
            {"cron": "0 8 * * *", "task": "Say good morning"}
        ]
        assert form.find(("internal_model", "spec")).widget.text() == "ollama:qwen2.5:1.5b"
        assert reopened.soul_edit.toPlainText() == "# Aria\n\nShe loves rainy days.\n"
        assert form.changes() == {}, "what was loaded is not a change"
        assert again.personas.load("aria").settings.autonomy.daily_cap == 5


def test_a_bad_value_is_refused_with_the_field_named_and_nothing_written(qtbot, core) -> None:
    folder = core.layout.personas_dir / "aria"
    before = (folder / "persona.toml").read_bytes(), (folder / "persona.md").read_bytes()
    editor = _editor(qtbot, core)
    form = editor.form
    quiet = form.find(("autonomy", "quiet_hours")).widget
    quiet.setText("9pm to 7am")
    form.find(("autonomy", "daily_cap")).widget.setValue(9)
    editor.soul_edit.setPlainText("# A soul that must not be saved either\n")

    assert editor.save() is False
    assert "Autonomy › Quiet hours" in editor.status.text()
    assert "HH:MM" in editor.status.text()
    assert editor.tabs.currentWidget() is form.pages["autonomy"]
    assert "border" in quiet.styleSheet()
    assert ((folder / "persona.toml").read_bytes(), (folder / "persona.md").read_bytes()) == before

    quiet.setText("23:00-07:00")
    form.find(("autonomy", "routines")).add_row({"cron": "every morning", "task": "Greet"})
    form.find(("model", "api_key")).widget.setText("sk-thisisaplainsecretkey")
    i18n.set_language("ja")
    editor.retranslate()
    assert editor.save() is False
    status = editor.status.text()
    assert "自発的な行動 › 日課 › 1 行目 › いつ（cron）" in status
    assert "モデル › API キーの参照" in status
    assert quiet.styleSheet() == "", "a fixed field is no longer marked"
    assert ((folder / "persona.toml").read_bytes(), (folder / "persona.md").read_bytes()) == before


def test_soul_preview_renders_the_markdown(qtbot, core) -> None:
    editor = _editor(qtbot, core)
    editor.soul_edit.setPlainText("# Mika's friend\n\n- likes tea\n- **never** rushes\n")
    qtbot.waitUntil(lambda: "likes tea" in editor.preview.toPlainText(), timeout=5_000)
    shown = editor.preview.toPlainText()
    assert "#" not in shown and "**" not in shown
    assert "Mika's friend" in shown and "never rushes" in shown


def test_the_japanese_soul_preview_joins_its_broken_lines_without_a_stray_space(qtbot, core) -> None:
    editor = _editor(qtbot, core, "hikari")  # its persona.md breaks a paragraph after 「…話し相手です。」
    qtbot.waitUntil(lambda: "話し相手です" in editor.preview.toPlainText(), timeout=5_000)
    assert "話し相手です。雇われたアシスタント" in editor.preview.toPlainText()


def test_avatar_duplicate_and_delete_persist_across_a_restart(
    qtbot, core, tmp_path: Path, data_dir: Path
) -> None:
    core.personas.memory("aria").messages.add(speaker="Mika", role="user", content="Remember the lighthouse.")
    editor = _editor(qtbot, core)
    photo = tmp_path / "photo.jpg"
    image = QImage(800, 400, QImage.Format.Format_RGB32)
    image.fill(QColor("darkorange"))
    assert image.save(str(photo), "JPG")
    editor.choose_avatar(str(photo))
    qtbot.waitUntil(lambda: editor.status.text() == "Avatar saved.", timeout=10_000)
    stored = core.layout.personas_dir / "aria" / "avatar.png"
    saved = QImage(str(stored))
    assert (saved.width(), saved.height()) == (256, 256), "cropped to a square and scaled"
    assert stored.read_bytes().startswith(b"\x89PNG")

    not_an_image = tmp_path / "holiday.png"
    not_an_image.write_bytes(b"<script>alert(1)</script>")
    avatar_before = stored.read_bytes()
    editor.choose_avatar(str(not_an_image))
    qtbot.waitUntil(lambda: "not a PNG or JPEG" in editor.status.text(), timeout=10_000)
    assert stored.read_bytes() == avatar_before

    with qtbot.waitSignal(editor.personas_changed, timeout=30_000) as added:
        editor.duplicate(name="Aria Copy")
    assert added.args == ["aria-copy"]
    qtbot.waitUntil(lambda: editor.persona is not None and editor.persona.slug == "aria-copy", timeout=10_000)
    assert editor.title.text() == "Aria Copy"
    copy_folder = core.layout.personas_dir / "aria-copy"
    assert (copy_folder / "avatar.png").read_bytes() == avatar_before
    assert "# My Aria: keep her gentle" in (copy_folder / "persona.toml").read_text(encoding="utf-8")

    with qtbot.waitSignal(editor.persona_deleted, timeout=30_000) as deleted:
        editor.delete(confirm=False)
    slug, kept = deleted.args
    assert slug == "aria-copy" and not copy_folder.exists()
    assert (Path(kept) / "persona.toml").is_file() and (Path(kept) / "memory.db").is_file()
    core.close()

    with NexusApp(data_dir) as again:
        assert [p.slug for p in again.personas.all()] == ["aria", "hikari"]
        assert again.personas.store.avatar_path("aria") == again.layout.personas_dir / "aria" / "avatar.png"
        reopened = _editor(qtbot, again)
        assert reopened.avatar.pixmap().width() == 72


def test_in_japanese_the_editor_shows_no_english(qtbot, core) -> None:
    from tests.ui.test_settings_dialog import untranslated

    editor = _editor(qtbot, core)
    assert "Soul" in untranslated(editor), "the check sees English where it is"
    i18n.set_language("ja")
    editor.retranslate()
    assert untranslated(editor) == []
