"""config.toml carries a schema version: an older file moves forward on disk keeping a copy and the
person's comments, the app's own memory moves to state.toml, and a newer file is refused in words."""

from __future__ import annotations

import errno
import os
import tomllib
from pathlib import Path

import pytest

from nexus_ark.config import (
    SETTINGS_VERSION,
    SettingsStore,
    load_app_settings,
    load_app_state,
    open_app_files,
)
from nexus_ark.errors import ConfigError

VERSION_1 = """# My settings, written by hand
language = "ja"  # Japanese, please
user_name = "Ken"
last_persona = "hikari"
setup_done = true
seeded_personas = ["aria", "hikari"]
dismissed_advice = ["hikari|bundled|ja"]

[chat_model]
spec = "bundled"
"""


def test_a_version_1_file_moves_forward_keeping_a_copy_comments_and_every_value(tmp_path: Path) -> None:
    config, state = tmp_path / "config.toml", tmp_path / "state.toml"
    config.write_text(VERSION_1, encoding="utf-8")

    settings, app_state = open_app_files(config, state)

    assert (tmp_path / "config.v1.toml").read_text(encoding="utf-8") == VERSION_1, (
        "the old file is kept whole"
    )
    text = config.read_text(encoding="utf-8")
    assert "# My settings, written by hand" in text and "# Japanese, please" in text
    raw = tomllib.loads(text)
    assert raw["schema_version"] == SETTINGS_VERSION
    assert not {"last_persona", "setup_done", "seeded_personas", "dismissed_advice"} & set(raw)
    assert settings.language == "ja" and settings.user_name == "Ken" and settings.chat_model.spec == "bundled"
    assert app_state.last_persona == "hikari" and app_state.setup_done
    assert app_state.seeded_personas == ["aria", "hikari"]
    assert app_state.dismissed_advice == ["hikari|bundled|ja"]
    assert load_app_state(state) == app_state, "state.toml holds what moved"


def test_opening_a_current_file_writes_nothing(tmp_path: Path) -> None:
    config, state = tmp_path / "config.toml", tmp_path / "state.toml"
    config.write_text(f'schema_version = {SETTINGS_VERSION}\nlanguage = "en"  # mine\n', encoding="utf-8")
    before = config.read_bytes()
    settings, _ = open_app_files(config, state)
    assert settings.language == "en"
    assert config.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"], "no copy, no state file"


def test_a_file_from_a_newer_version_is_refused_in_words_and_left_as_it_is(tmp_path: Path) -> None:
    config, state = tmp_path / "config.toml", tmp_path / "state.toml"
    newer = f'schema_version = {SETTINGS_VERSION + 1}\nlanguage = "ja"\nlast_persona = "aria"\n'
    config.write_text(newer, encoding="utf-8")
    for read in (lambda: open_app_files(config, state), lambda: load_app_settings(config)):
        with pytest.raises(ConfigError) as refused:
            read()
        message = str(refused.value)
        assert str(config) in message and "newer version of Nexus Ark" in message
        assert (
            f"settings version {SETTINGS_VERSION + 1}" in message and "Update Nexus Ark" in refused.value.hint
        )
    assert config.read_text(encoding="utf-8") == newer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


@pytest.mark.parametrize("value", ['"two"', "0", "true", "-3"])
def test_a_schema_version_that_is_not_a_version_is_refused_naming_the_field(
    tmp_path: Path, value: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"schema_version = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        open_app_files(config, tmp_path / "state.toml")
    assert "schema_version" in str(refused.value) and str(config) in str(refused.value)
    assert not (tmp_path / "state.toml").exists()


def test_an_invalid_old_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    config, state = tmp_path / "config.toml", tmp_path / "state.toml"
    broken = 'language = "fr"\nlast_persona = "aria"\n'
    config.write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        open_app_files(config, state)
    assert "language" in str(refused.value) and "'fr'" in str(refused.value)
    assert "nothing was changed" in refused.value.hint
    assert config.read_text(encoding="utf-8") == broken
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_a_full_disk_during_the_move_puts_state_back_and_the_next_start_moves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, state = tmp_path / "config.toml", tmp_path / "state.toml"
    config.write_text(VERSION_1, encoding="utf-8")
    state.write_text('last_persona = "aria"\n', encoding="utf-8")  # an older state file
    real_fsync, calls = os.fsync, []

    def third_write_fails(fd: int) -> None:  # the copy and state.toml are written; config.toml is not
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", third_write_fails)
    with pytest.raises(ConfigError) as refused:
        open_app_files(config, state)
    monkeypatch.undo()
    assert "No space left" in str(refused.value) and "next start" in refused.value.hint
    assert config.read_text(encoding="utf-8") == VERSION_1
    assert state.read_text(encoding="utf-8") == 'last_persona = "aria"\n', "state.toml put back"
    assert not list(tmp_path.glob("*.tmp"))

    _, app_state = open_app_files(config, state)
    assert app_state.last_persona == "hikari" and tomllib.loads(config.read_text())["schema_version"] == 2


def test_a_first_start_writes_a_config_that_says_its_version_and_nothing_else(tmp_path: Path) -> None:
    settings, _state = open_app_files(tmp_path / "config.toml", tmp_path / "state.toml")
    assert (tmp_path / "config.toml").read_text(encoding="utf-8") == f"schema_version = {SETTINGS_VERSION}\n"
    assert settings == load_app_settings(tmp_path / "config.toml") and not (tmp_path / "state.toml").exists()


def test_a_store_refuses_a_name_its_file_does_not_hold(tmp_path: Path) -> None:
    settings, state = open_app_files(tmp_path / "config.toml", tmp_path / "state.toml")
    before = (tmp_path / "config.toml").read_bytes()
    with pytest.raises(KeyError, match="last_persona"):
        SettingsStore(tmp_path / "config.toml", settings).update(last_persona="aria")
    with pytest.raises(KeyError, match="language"):
        SettingsStore(tmp_path / "state.toml", state).update(language="ja")
    assert (tmp_path / "config.toml").read_bytes() == before and not (tmp_path / "state.toml").exists()


def test_choosing_a_persona_writes_state_toml_and_never_the_persons_config(tmp_path: Path) -> None:
    from nexus_ark.app import NexusApp

    config = tmp_path / "config.toml"
    mine = f'# set by hand\nschema_version = {SETTINGS_VERSION}\nlanguage = "en"  # keep this\n'
    config.write_text(mine, encoding="utf-8")
    with NexusApp(tmp_path) as app:
        app.admin.remember_persona("hikari")
        assert app.state.last_persona == "hikari"
    assert config.read_text(encoding="utf-8") == mine, "the person's file is untouched, comments and all"
    assert load_app_state(tmp_path / "state.toml").last_persona == "hikari"
    with NexusApp(tmp_path) as app:
        assert app.admin.default_persona() == "hikari", "the next start opens it again"
