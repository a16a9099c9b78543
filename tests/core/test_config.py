from __future__ import annotations

import errno
import os
import tomllib
from pathlib import Path

import pytest

from nexus_ark.config import AppSettings, load_app_settings, load_app_state, save_toml_model
from nexus_ark.errors import ConfigError


def test_missing_config_gives_defaults(tmp_path: Path) -> None:
    assert load_app_settings(tmp_path / "config.toml") == AppSettings()


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    settings = AppSettings(language="ja", user_name="Ken", font_size=12)
    save_toml_model(path, settings)
    assert load_app_settings(path) == settings
    assert not list(tmp_path.glob("*.tmp")), "atomic save must not leave its temp file behind"


def test_broken_toml_names_file_and_line_and_is_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = 'language = "ja"\nlast_persona = \n'
    path.write_text(original, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_app_settings(path)
    message = str(err.value)
    assert str(path) in message
    assert "line 2" in message
    assert path.read_text(encoding="utf-8") == original


def test_invalid_value_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('language = "fr"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_app_settings(path)
    assert "language" in str(err.value)
    assert "'fr'" in str(err.value)


def test_full_disk_keeps_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    save_toml_model(path, AppSettings(language="en"))

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(ConfigError) as err:
        save_toml_model(path, AppSettings(language="ja"))
    monkeypatch.undo()
    assert "config.toml" in str(err.value) and "No space left" in str(err.value)
    assert load_app_settings(path).language == "en"
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


def test_edit_in_place_refuses_invalid_changes_and_writes_nothing(tmp_path: Path) -> None:
    from nexus_ark.config import edit_toml_file

    path = tmp_path / "config.toml"
    original = '# mine\nlanguage = "ja"  # keep\n'
    path.write_text(original, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        edit_toml_file(path, {"language": "fr"}, AppSettings)
    assert "language" in str(err.value) and "'fr'" in str(err.value)
    assert path.read_text(encoding="utf-8") == original
    edit_toml_file(path, {"last_persona": "hikari"}, AppSettings)
    assert path.read_text(encoding="utf-8") == original + 'last_persona = "hikari"\n'


def test_a_setting_from_a_newer_version_survives_this_version_saving_its_own(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('future_setting = "kept"\nlanguage = "ja"\n\n[future_table]\nx = 1\n', encoding="utf-8")
    settings = load_app_settings(path)
    settings.font_size = 12  # the older version saves (changing the text size does)
    save_toml_model(path, settings)
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    assert raw["future_setting"] == "kept" and raw["future_table"] == {"x": 1}
    assert raw["font_size"] == 12 and load_app_settings(path).language == "ja"
    assert isinstance(settings, AppSettings)


def test_an_unknown_key_in_a_model_table_is_refused_saying_a_newer_version_may_have_written_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[embedder.timeouts]\nfuture_setting = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_app_settings(path)
    assert "future_setting" in str(caught.value) and "newer version" in caught.value.hint
    assert path.read_text(encoding="utf-8") == "[embedder.timeouts]\nfuture_setting = 3\n"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[" * 2000 + "]" * 2000, "nested too deeply"),
        ("{a = " * 2000 + "1" + "}" * 2000, "nested too deeply"),
        ("9" * 5000, "more than 4,300 digits"),
    ],
)
def test_a_config_python_cannot_read_is_named_with_its_line_not_a_traceback(
    tmp_path: Path, value: str, problem: str
) -> None:
    path = tmp_path / "config.toml"
    original = f'language = "ja"\n\nx = {value}\n'
    path.write_text(original, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_app_settings(path)
    message = str(err.value)
    assert str(path) in message and problem in message and "line 3" in message, message
    assert path.read_text(encoding="utf-8") == original


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0x" + "f" * 5000, "(got an integer of more than 4,300 digits)"),  # hex: tomllib has no digit limit
        ("[" + "1, " * 20_000 + "]", "(got [1, 1, 1, 1"),
    ],
)
def test_a_wrong_value_too_big_to_print_is_named_in_short(tmp_path: Path, value: str, shown: str) -> None:
    """A hexadecimal integer of 5,000 digits reads (int() limits only decimal text), and quoting it in the
    refusal raised ValueError; a 20,000-item list was quoted whole."""
    path = tmp_path / "config.toml"
    path.write_text(f"font_size = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_app_settings(path)
    message = str(err.value)
    assert str(path) in message and "font_size" in message and shown in message, message
    assert len(message) < 400


def test_settings_changed_from_many_threads_at_once_keep_every_change(tmp_path: Path) -> None:
    """config.toml was written from four threads with no owner (issue 22): every change now goes through
    one (config.SettingsStore), so changes made at once from eight threads are all on disk, the file reads,
    and each change is announced."""
    import threading

    from nexus_ark.app import NexusApp

    app = NexusApp(tmp_path / "data").open()
    heard: list[dict] = []
    app.state_store.subscribe(heard.append)
    try:

        def dismiss(i: int) -> None:
            for n in range(15):
                app.models.dismiss_advice("aria", f"advice-{i}-{n}")
                app.state_store.update(last_persona="aria" if n % 2 else "hikari")
                app.admin.update_settings(font_size=12 + n % 3)

        threads = [threading.Thread(target=dismiss, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        on_disk = load_app_state(app.layout.state_file)  # the app's own memory: state.toml
        expected = {f"advice-{i}-{n}" for i in range(8) for n in range(15)}
        assert expected <= set(on_disk.dismissed_advice), len(expected - set(on_disk.dismissed_advice))
        assert len(on_disk.dismissed_advice) == len(set(on_disk.dismissed_advice))
        assert sum("dismissed_advice" in change for change in heard) == 8 * 15  # each change announced
    finally:
        app.close()
