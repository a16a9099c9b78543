"""What the settings window and the persona editor ask of the core, without Qt: persona.toml edited in place
(comments kept, bad values refused with nothing written), app settings that persist, duplicate, delete with a
backup, avatars, and restoring a memory backup without losing the memory it replaces."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.errors import ConfigError, NexusArkError, PersonaError
from nexus_ark.memory.backups import backup, list_backups
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore

COMMENTED = """\
# Aria, as I like her
name = "Aria"
language = "en"  # she speaks English

[model]
spec = "bundled"
temperature = 0.7  # keep it calm

[autonomy]
# quiet while I sleep
quiet_hours = "23:00-07:00"
daily_cap = 3
"""


@pytest.fixture
def store(tmp_path: Path) -> PersonaStore:
    folder = tmp_path / "personas" / "aria"
    folder.mkdir(parents=True)
    (folder / "persona.toml").write_text(COMMENTED, encoding="utf-8")
    (folder / "persona.md").write_text("# Aria\n", encoding="utf-8")
    return PersonaStore(tmp_path / "personas")


@pytest.fixture
def app(data_dir: Path):
    clock = FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    core = NexusApp(data_dir, clock=clock).open()
    yield core
    core.close()


def _messages(path: Path) -> list[str]:
    store = MemoryStore(path, role="reader")
    try:
        return [m.content for m in store.messages.recent(limit=1000)]
    finally:
        store.close()


def test_save_settings_keeps_comments_and_order_and_writes_only_the_changes(store: PersonaStore) -> None:
    store.save_settings("aria", {"autonomy": {"daily_cap": 5}, "drives": {"boredom": 0.4}})
    text = (store.root / "aria" / "persona.toml").read_text(encoding="utf-8")
    assert text.startswith("# Aria, as I like her\n")
    for comment in ("# she speaks English", "# keep it calm", "# quiet while I sleep"):
        assert comment in text
    assert text.index("[model]") < text.index("[autonomy]") < text.index("[drives]")
    assert "daily_cap = 5" in text and 'quiet_hours = "23:00-07:00"' in text
    assert "history_messages" not in text, "defaults the person never set are not spelled out"
    settings = store.load("aria").settings
    assert settings.autonomy.daily_cap == 5 and settings.drives.boredom == 0.4
    assert settings.model.temperature == 0.7


def test_save_settings_refuses_a_bad_value_naming_the_field_and_writes_nothing(store: PersonaStore) -> None:
    path = store.root / "aria" / "persona.toml"
    with pytest.raises(ConfigError) as refused:
        store.save_settings("aria", {"autonomy": {"quiet_hours": "late", "daily_cap": 4}})
    assert "autonomy.quiet_hours" in refused.value.message
    assert "Nothing was written" in (refused.value.hint or "")
    assert path.read_text(encoding="utf-8") == COMMENTED
    with pytest.raises(ConfigError, match=r"model\.api_key"):
        store.save_settings("aria", {"model": {"api_key": "sk-plainsecretkey123"}})
    assert path.read_text(encoding="utf-8") == COMMENTED


def test_routines_are_written_inside_their_table_and_replaced_whole(store: PersonaStore) -> None:
    store.save_settings(
        "aria", {"autonomy": {"routines": [{"cron": "0 8 * * *", "task": "Say good morning"}]}}
    )
    store.save_settings(
        "aria",
        {
            "autonomy": {
                "routines": [
                    {"cron": "0 8 * * *", "task": "Say good morning"},
                    {"cron": "0 21 * * 0", "task": "Look back on the week"},
                ]
            },
            "drives": {"devotion": 0.5},
        },
    )
    text = (store.root / "aria" / "persona.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    assert [r["task"] for r in raw["autonomy"]["routines"]] == ["Say good morning", "Look back on the week"]
    assert "[[autonomy.routines]]" not in text, "the routines stay in [autonomy], before [drives]"
    assert text.index("routines = [") < text.index("[drives]")
    with pytest.raises(ConfigError, match=r"autonomy\.routines\.0\.cron"):
        store.save_settings("aria", {"autonomy": {"routines": [{"cron": "every morning", "task": "x"}]}})


def test_internal_model_is_set_and_removed_again(store: PersonaStore) -> None:
    store.save_settings("aria", {"internal_model": {"spec": "ollama:qwen2.5:1.5b"}})
    assert store.load("aria").settings.internal_model.spec == "ollama:qwen2.5:1.5b"
    store.save_settings("aria", {"internal_model": None})
    assert store.load("aria").settings.internal_model is None
    assert "internal_model" not in (store.root / "aria" / "persona.toml").read_text(encoding="utf-8")


def test_app_settings_old_config_loads_and_changes_persist_across_a_restart(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('language = "ja"\nkeep_running_in_tray = true\n', encoding="utf-8")
    with NexusApp(data_dir) as core:
        assert (core.settings.theme, core.settings.font_size, core.settings.desktop_notifications) == (
            "system",
            0,
            True,
        )
        held = core.settings
        core.admin.update_settings(theme="dark", font_size=14, desktop_notifications=False, language="en")
        assert held.theme == "dark", "windows holding the settings object see the change"
        with pytest.raises(ConfigError, match="font_size"):
            core.admin.update_settings(font_size=3)
        assert core.settings.font_size == 14
    with NexusApp(data_dir) as again:
        s = again.settings
        assert (s.theme, s.font_size, s.desktop_notifications, s.language) == ("dark", 14, False, "en")
        assert s.keep_running_in_tray is True


def test_desktop_notifications_off_sends_none(app: NexusApp) -> None:
    sent = []

    class Recorder:
        def notify(self, title, body, *, on_click=None):
            sent.append(title)
            return True

        def close(self) -> None:
            pass

    app.life.notifications.notifier = Recorder()  # type: ignore[assignment]
    assert app.life.notifications.notify("Aria", "hello", "aria") is True
    app.admin.update_settings(desktop_notifications=False)
    assert app.life.notifications.notify("Aria", "hello again", "aria") is False
    assert sent == ["Aria"]


def test_duplicate_copies_folder_memory_and_comments_under_a_new_slug(app: NexusApp) -> None:
    memory = app.personas.memory("aria")
    memory.messages.add(speaker="Mika", role="user", content="Remember my cat Luna.")
    settings_file = app.layout.personas_dir / "aria" / "persona.toml"
    settings_file.write_text("# mine\n" + settings_file.read_text(encoding="utf-8"), encoding="utf-8")
    (app.layout.personas_dir / "aria" / "knowledge").mkdir()
    (app.layout.personas_dir / "aria" / "knowledge" / "notes.txt").write_text("a note", encoding="utf-8")

    info = app.admin.duplicate_persona("aria", "Aria Two")

    assert info.slug == "aria-two" and info.name == "Aria Two"
    folder = app.layout.personas_dir / "aria-two"
    assert (folder / "persona.toml").read_text(encoding="utf-8").startswith("# mine\n")
    assert (folder / "knowledge" / "notes.txt").read_text(encoding="utf-8") == "a note"
    assert _messages(folder / "memory.db") == ["Remember my cat Luna."]
    assert app.personas.load("aria").settings.name == "Aria", "the original is untouched"
    with pytest.raises(ConfigError):
        app.admin.duplicate_persona("aria", "   ")
    assert sorted(p.slug for p in app.personas.all()) == ["aria", "aria-two", "hikari"]


def test_delete_keeps_a_whole_copy_then_removes_the_folder_even_while_open(app: NexusApp) -> None:
    app.personas.memory("aria").messages.add(speaker="Mika", role="user", content="Goodbye for now.")
    app.admin.remember_persona("aria")

    kept = app.admin.delete_persona("aria")

    assert not (app.layout.personas_dir / "aria").exists()
    assert kept == app.layout.backups_dir / "aria" / "deleted-20260301-090000"
    assert (kept / "persona.toml").is_file() and (kept / "persona.md").is_file()
    assert _messages(kept / "memory.db") == ["Goodbye for now."]
    assert [p.slug for p in app.personas.all()] == ["hikari"]
    assert app.state.last_persona == ""
    with pytest.raises(PersonaError):
        app.admin.delete_persona("../backups")


def test_avatar_must_be_png_and_is_stored_in_the_persona_folder(store: PersonaStore) -> None:
    assert store.avatar_path("aria") is None
    with pytest.raises(PersonaError, match="not a PNG"):
        store.set_avatar("aria", b"GIF89a not a png")
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    path = store.set_avatar("aria", png)
    assert path == store.root / "aria" / "avatar.png" and path.read_bytes() == png
    assert store.avatar_path("aria") == path
    with pytest.raises(PersonaError, match="too large"):
        store.set_avatar("aria", b"\x89PNG\r\n\x1a\n" + b"\x00" * (5 * 1024 * 1024))
    assert path.read_bytes() == png


def test_restore_replaces_memory_keeping_the_current_one_first(app: NexusApp) -> None:
    memory = app.personas.memory("aria")
    memory.messages.add(speaker="Mika", role="user", content="Monday: I adopted a cat.")
    folder = app.layout.backups_dir / "aria"
    app.clock.advance(3600)  # type: ignore[attr-defined]
    monday = backup(memory, folder, clock=app.clock)
    memory.messages.add(speaker="Mika", role="user", content="Tuesday: the cat is called Luna.")

    backups = app.admin.list_backups("aria")
    assert backups[0].path == monday and backups[0].messages == 1 and backups[0].kind == "daily"

    app.clock.advance(60)  # type: ignore[attr-defined]
    safety = app.admin.restore_backup("aria", monday)

    assert safety is not None and safety.name.startswith("before-restore-")
    assert _messages(safety) == ["Monday: I adopted a cat.", "Tuesday: the cat is called Luna."]
    reopened = app.personas.memory("aria")
    assert reopened is not memory, "the runtime was closed and opened again on the restored file"
    assert [m.content for m in reopened.messages.recent()] == ["Monday: I adopted a cat."]
    reopened.messages.add(speaker="Mika", role="user", content="Wednesday.")  # the owner writes again
    kinds = {b.kind for b in app.admin.list_backups("aria")}
    assert kinds == {"daily", "before-restore"}


def test_restore_refuses_a_file_that_is_not_a_backup_and_changes_nothing(app: NexusApp) -> None:
    app.personas.memory("aria").messages.add(speaker="Mika", role="user", content="Still here.")
    folder = app.layout.backups_dir / "aria"
    broken = folder / "memory-20260301-120000.db"
    broken.write_bytes(b"this is not a database")
    assert next(b for b in list_backups(folder) if b.path == broken).messages is None
    with pytest.raises(NexusArkError, match="not a readable memory backup"):
        app.admin.restore_backup("aria", broken)
    with pytest.raises(NexusArkError, match="not a readable memory backup"):
        app.admin.restore_backup("aria", app.layout.personas_dir / "hikari" / "persona.toml")
    assert [m.content for m in app.personas.memory("aria").messages.recent()] == ["Still here."]


def test_a_first_start_opens_on_a_persona_of_the_persons_language_and_later_on_the_last_used(
    app: NexusApp,
) -> None:
    """A window in Japanese opened first on Aria (the first persona, English) and a Japanese person met an
    English persona; before any persona was used it opens on one that speaks the window's language."""
    assert app.state.last_persona == ""
    assert app.admin.default_persona("ja") == "hikari"
    assert app.admin.default_persona("en") == "aria" and app.admin.default_persona() == "aria"
    assert app.admin.default_persona("fr") == "aria"  # no persona speaks it: the first
    app.admin.remember_persona("aria")
    assert app.admin.default_persona("ja") == "aria"  # the one the person chose last wins
