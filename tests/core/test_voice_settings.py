"""A persona's voice in persona.toml's [voice] table, and the readings of the names it knows (issue 36):
real files and a real memory.db, no engine needed."""

from __future__ import annotations

import tomllib
from datetime import datetime
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.errors import ConfigError, NexusArkError
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.voice.base import VoiceSettings

REPO = Path(__file__).resolve().parents[2]
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


def _app(tmp_path: Path, clock: FixedClock | None = None) -> NexusApp:
    return NexusApp(tmp_path / "data", shipped_personas=REPO / "personas", clock=clock).open()


def _local(hour: int) -> datetime:
    """Today at `hour`:00 in this machine's time zone (quiet hours are the persona's local time)."""
    return datetime.now().astimezone().replace(hour=hour, minute=0, second=0, microsecond=0)


def test_a_message_written_first_is_spoken_only_if_allowed_and_never_in_quiet_hours(tmp_path: Path) -> None:
    clock = FixedClock(_local(10))
    app = _app(tmp_path, clock)
    try:
        assert not app.voice.may_speak_first("aria")  # not allowed: the default
        app.voice.save_settings("aria", VoiceSettings(speak_first_messages=True))
        assert app.voice.may_speak_first("aria")
        clock.advance(-7 * 3600)  # 03:00, inside the default quiet hours 00:00-07:00
        assert not app.voice.may_speak_first("aria")
        app.personas.store.save_settings("aria", {"autonomy": {"quiet_hours": "22:00-02:00"}})
        assert app.voice.may_speak_first("aria")
    finally:
        app.close()


def test_the_persona_says_a_name_it_knows_as_its_reading(tmp_path: Path) -> None:
    """Open JTalk for real: 灯 given a long reading takes several times as long to say as 灯 guessed."""
    app = _app(tmp_path)
    try:
        app.personas.change_memory("hikari", "test", lambda m: m.components.write_entity("灯", "猫の名前"))
        plain = app.voice.synthesizer_for("hikari")("灯。")
        app.voice.set_reading("hikari", "灯", "ともしびのようにあかるいねこのあかりちゃん")
        assert app.voice.readings("hikari") == {"灯": "ともしびのようにあかるいねこのあかりちゃん"}
        read = app.voice.synthesizer_for("hikari")("灯。")
        assert plain.rate == read.rate == 48000
        assert read.seconds > 2.5 * plain.seconds, (plain.seconds, read.seconds)
        code_only = app.voice.synthesizer_for("hikari")("```\nprint(1)\n```")
        assert code_only.samples.size == 0  # nothing to say: no engine call, no sound
    finally:
        app.close()


def test_a_reply_spoken_over_keeps_only_the_words_that_were_heard(tmp_path: Path) -> None:
    app = _app(tmp_path)
    whole = "The tea is ready. I also baked a lemon cake with blueberries for later."

    def reply(memory: MemoryStore) -> int:
        message_id = memory.messages.add(speaker="Aria", role="assistant", content=whole, status="stopped")
        created = memory.messages.get(message_id).created_at
        turn = Turn(speaker="Aria", text=whole, created_at=created, source_id=f"msg:{message_id}")
        index_turns(memory.archive, [turn])
        return message_id

    try:
        reply_id = app.personas.change_memory("aria", "test", reply)
        app.voice.keep_spoken("aria", reply_id, "The tea is ready. ")
        memory = app.personas.open_memory("aria")
        try:
            stored = memory.messages.get(reply_id)
            items = [memory.archive.get(i) for i in memory.archive.ids_of_source(f"msg:{reply_id}")]
        finally:
            memory.close()
        assert (stored.content, stored.status) == ("The tea is ready.", "stopped")
        assert [item["text"] for item in items if item] == ["Aria: The tea is ready."]
    finally:
        app.close()


def test_each_engine_is_made_once_per_app_and_one_per_server(tmp_path: Path) -> None:
    app = _app(tmp_path)
    try:
        engines = app.voice.engines
        japanese = engines.engine_for(VoiceSettings(), "ja")
        assert japanese.name == "openjtalk" and engines.engine_for(VoiceSettings(speed=1.5), "ja") is japanese
        assert engines.engine_for(VoiceSettings(), "en").name == "piper"
        one = engines.engine_for(VoiceSettings(engine="voicevox", api_base="http://127.0.0.1:50021"), "ja")
        other = engines.engine_for(VoiceSettings(engine="voicevox", api_base="http://127.0.0.1:10101"), "ja")
        assert one is not other and one.name == other.name == "voicevox"
    finally:
        app.close()
