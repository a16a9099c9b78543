"""A persona's voice in persona.toml's [voice] table, and the readings of the names it knows (issue 36):
real files and a real memory.db, no engine needed."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from nexus_ark.errors import ConfigError, NexusArkError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.voice.base import VoiceSettings

HAND_WRITTEN = """name = "Aria"  # shown in the list
language = "en"

# How Aria sounds: set by hand
[voice]
enabled = true  # speak every reply
speed = 1.1
"""


@pytest.fixture
def store(tmp_path: Path) -> PersonaStore:
    store = PersonaStore(tmp_path / "personas")
    folder = store.root / "aria"
    folder.mkdir(parents=True)
    (folder / "persona.toml").write_text(HAND_WRITTEN, encoding="utf-8")
    (folder / "persona.md").write_text("# Aria\n", encoding="utf-8")
    return store


def test_a_persona_without_a_voice_table_speaks_its_language_with_the_shipped_engine(tmp_path: Path) -> None:
    persona = PersonaStore(tmp_path).create("Hikari", "ja")
    voice = persona.settings.voice
    assert voice == VoiceSettings() and voice.engine is None and not voice.enabled


def test_the_voice_table_is_read_from_persona_toml(store: PersonaStore) -> None:
    voice = store.load("aria").settings.voice
    assert voice.enabled and voice.speed == 1.1 and voice.pitch == 0.0


def test_saving_the_voice_keeps_the_persons_comments_and_writes_only_what_is_set(
    store: PersonaStore, tmp_path: Path
) -> None:
    from nexus_ark.app import NexusApp

    (tmp_path / "none").mkdir()
    with NexusApp(store.root.parent, shipped_personas=tmp_path / "none") as app:
        current = app.voice.settings_for("aria")
        chosen = current.model_copy(update={"engine": "piper", "voice": "en_US-joe-medium", "pitch": 2.0})
        assert app.voice.save_settings("aria", chosen) == chosen
        text = (store.root / "aria" / "persona.toml").read_text(encoding="utf-8")
        assert "# How Aria sounds: set by hand" in text and "# speak every reply" in text
        assert "# shown in the list" in text
        table = tomllib.loads(text)["voice"]
        assert table == {
            "enabled": True,
            "speed": 1.1,
            "engine": "piper",
            "voice": "en_US-joe-medium",
            "pitch": 2.0,
        }
        # Back to the shipped engine: the key goes (no engine is "the shipped one"), the rest stays.
        back = chosen.model_copy(update={"engine": None, "speed": 1.0})
        assert app.voice.save_settings("aria", back) == back
        table = tomllib.loads((store.root / "aria" / "persona.toml").read_text(encoding="utf-8"))["voice"]
        assert "engine" not in table and table["voice"] == "en_US-joe-medium" and table["speed"] == 1.0


def test_a_speed_out_of_range_is_refused_naming_the_field_and_the_file(store: PersonaStore) -> None:
    path = store.root / "aria" / "persona.toml"
    path.write_text(HAND_WRITTEN.replace("speed = 1.1", "speed = 9"), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        store.load("aria")
    message = str(refused.value)
    assert "voice.speed" in message and str(path) in message and "9" in message


def test_saving_a_bad_voice_value_writes_nothing(store: PersonaStore) -> None:
    path = store.root / "aria" / "persona.toml"
    before = path.read_text(encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        store.save_settings("aria", {"voice": {"engine": "espeak"}})
    assert "voice.engine" in str(refused.value)
    assert path.read_text(encoding="utf-8") == before


def test_an_entity_keeps_its_reading_across_rewrites_and_reopening(tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "memory.db")
    try:
        c = memory.components
        c.write_entity("灯", "The person's cat, black with a white paw.")
        c.write_entity("Mika", "The person.")
        assert c.readings() == {}
        assert c.set_reading("灯", " あかり ").reading == "あかり"
        c.write_entity("灯", "The cat; she is twelve now.")  # a dream rewriting the text keeps the reading
        assert c.readings() == {"灯": "あかり"}
        with pytest.raises(NexusArkError, match="ミカ"):
            c.set_reading("ミカ", "みか")
    finally:
        memory.close()
    again = MemoryStore(tmp_path / "memory.db")
    try:
        assert again.components.entity("灯") is not None
        assert again.components.readings() == {"灯": "あかり"}
        again.components.set_reading("灯", "")
        assert again.components.readings() == {}
    finally:
        again.close()
