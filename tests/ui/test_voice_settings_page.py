"""The persona editor's Voice page, driven like a person would: the engines and the voices they offer, a
choice saved into persona.toml's [voice] by the editor's one Save (the person's comments kept), a value out
of range refused with the field named, and Preview speaking a sentence with the page as it is (real
synthesis, played on the real null sound device) before anything is saved."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from ui.personas.persona_editor import PersonaEditor
from ui.util import i18n

COMMENTED = """\
# Hikari's settings
name = "ひかり"
language = "ja"

[voice]
speed = 1.1  # a little brisk
"""


@pytest.fixture(autouse=True)
def _english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    (app.layout.personas_dir / "hikari" / "persona.toml").write_text(COMMENTED, encoding="utf-8")
    yield app
    app.close()


def _editor(qtbot, app: NexusApp) -> PersonaEditor:
    editor = PersonaEditor(app, "hikari")
    editor.ask_before_discard = False
    qtbot.addWidget(editor)
    qtbot.waitUntil(lambda: editor.persona is not None, timeout=10_000)
    return editor


def _choose(combo, data) -> None:
    combo.setCurrentIndex(combo.findData(data))


def test_the_voice_page_saves_persona_toml_voice_keeping_the_comments(qtbot, core: NexusApp) -> None:
    editor = _editor(qtbot, core)
    page = editor.form.voice
    assert page.speed.value() == pytest.approx(1.1) and not page.enabled.isChecked()
    assert page.engine.currentData() is None, "automatic: the shipped voice for its language"
    # The voices of the offline engines, listed on a worker; Kokoro's are offered once it is chosen.
    qtbot.waitUntil(lambda: page.voice.count() > 1, timeout=60_000)
    assert page.pitch.isEnabled(), "Open JTalk, automatic for Japanese, changes the pitch"
    _choose(page.engine, "kokoro-ja")
    assert not page.pitch.isEnabled() and "ignored" in page.pitch.toolTip(), "Kokoro speaks at its own"
    offered = [page.voice.itemData(i) for i in range(page.voice.count())]
    assert "jf_alpha" in offered and "en_US-joe-medium" not in offered
    _choose(page.voice, "jf_nezumi")
    page.enabled.setChecked(True)
    page.speak_first.setChecked(True)
    page.pitch.setValue(2.0)
    assert not page.api_base.isEnabled(), "an offline engine has no server"
    with qtbot.waitSignal(editor.saved, timeout=30_000):
        assert editor.save()

    text = (core.layout.personas_dir / "hikari" / "persona.toml").read_text(encoding="utf-8")
    assert "speed = 1.1  # a little brisk" in text
    voice = tomllib.loads(text)["voice"]
    assert voice == {
        "speed": 1.1, "enabled": True, "engine": "kokoro-ja", "voice": "jf_nezumi", "pitch": 2.0,
        "speak_first_messages": True,
    }  # fmt: skip
    assert core.voice.settings_for("hikari").voice == "jf_nezumi"

    _choose(page.engine, None)  # automatic again: the key goes
    with qtbot.waitSignal(editor.saved, timeout=30_000):
        assert editor.save()
    voice = tomllib.loads((core.layout.personas_dir / "hikari" / "persona.toml").read_text(encoding="utf-8"))
    assert "engine" not in voice["voice"]


def test_a_speech_server_has_its_fields_and_a_plain_key_is_refused_naming_the_field(
    qtbot, core: NexusApp
) -> None:
    editor = _editor(qtbot, core)
    page = editor.form.voice
    _choose(page.engine, "openai")
    assert page.api_base.isEnabled() and page.model.isEnabled() and page.api_key.isEnabled()
    page.api_key.setText("sk-abcdefghijklmnopqrstuvwxyz123456")
    assert not editor.save()
    assert "Voice › API key reference" in editor.status.text() and "plain API key" in editor.status.text()
    assert page.api_key.styleSheet(), "the field is marked"
    assert "sk-abc" not in (core.layout.personas_dir / "hikari" / "persona.toml").read_text(encoding="utf-8")


@pytest.mark.skipif(
    not os.environ.get("JACK_DEFAULT_SERVER"),
    reason="no null sound device: jackd is not installed (.ci/run installs Debian's jackd2)",
)
def test_preview_speaks_with_the_page_as_it_is_before_saving(qtbot, core: NexusApp) -> None:
    editor = _editor(qtbot, core)
    page = editor.form.voice
    page.speed.setValue(1.0)
    page.preview_button.click()
    assert page.preview_status.text() == "Speaking the preview…" and page.preview_button.text() == "■ Stop"
    qtbot.waitUntil(lambda: page.preview_status.text().startswith("Spoke"), timeout=60_000)
    normal = float(page.preview_status.text().split()[1])
    assert 1.5 < normal < 8, "a Japanese sentence of some twenty syllables"
    page.speed.setValue(2.0)  # not saved: Preview speaks what the page says now
    page.preview_button.click()
    qtbot.waitUntil(lambda: page.preview_status.text().startswith("Spoke"), timeout=60_000)
    brisk = float(page.preview_status.text().split()[1])
    assert brisk < normal * 0.7
    assert "speed = 1.1" in (core.layout.personas_dir / "hikari" / "persona.toml").read_text(encoding="utf-8")
