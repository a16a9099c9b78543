from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.errors import ConfigError, PersonaError
from nexus_ark.personas.store import PersonaStore, slugify

REPO = Path(__file__).resolve().parents[2]


def test_shipped_personas_include_english_and_japanese() -> None:
    infos = PersonaStore(REPO / "personas").list()
    assert all(i.ok for i in infos), [i.error for i in infos]
    assert {"en", "ja"} <= {i.language for i in infos}


def test_seeding_copies_once_and_never_overwrites(tmp_path: Path, shipped_copy: Path) -> None:
    store = PersonaStore(tmp_path / "personas")
    seeded = store.seed_from(shipped_copy, [])
    assert {"aria", "hikari"} <= set(seeded)
    soul = tmp_path / "personas" / "aria" / "persona.md"
    soul.write_text("# My own Aria\n", encoding="utf-8")
    (shipped_copy / "aria" / "persona.md").write_text("# A newer shipped Aria\n", encoding="utf-8")
    store.seed_from(shipped_copy, [])
    assert soul.read_text(encoding="utf-8") == "# My own Aria\n"


def test_deleted_persona_is_not_seeded_again(tmp_path: Path, shipped_copy: Path) -> None:
    store = PersonaStore(tmp_path / "personas")
    seeded = store.seed_from(shipped_copy, [])
    import shutil

    shutil.rmtree(tmp_path / "personas" / "aria")
    store.seed_from(shipped_copy, seeded)
    assert "aria" not in store.slugs()


def test_create_writes_soul_and_settings(tmp_path: Path) -> None:
    store = PersonaStore(tmp_path)
    persona = store.create("Mika Sato", "ja", "テスト")
    assert persona.slug == "mika-sato"
    assert persona.settings.language == "ja"
    assert "Mika Sato" in persona.soul
    again = store.create("Mika Sato")
    assert again.slug == "mika-sato-2"


def test_japanese_only_name_gets_a_usable_slug() -> None:
    assert slugify("ひかり", set()) == "persona"
    assert slugify("ひかり", {"persona"}) == "persona-2"


def test_broken_persona_toml_is_listed_with_reason_and_kept(tmp_path: Path, shipped_copy: Path) -> None:
    store = PersonaStore(tmp_path / "personas")
    store.seed_from(shipped_copy, [])
    broken = tmp_path / "personas" / "aria" / "persona.toml"
    broken.write_text('name = "Aria"\n[model\nspec = "bundled"\n', encoding="utf-8")
    infos = {i.slug: i for i in store.list()}
    assert not infos["aria"].ok
    assert str(broken) in infos["aria"].error
    assert "line 2" in infos["aria"].error
    assert infos["hikari"].ok
    with pytest.raises(ConfigError):
        store.load("aria")
    assert broken.read_text(encoding="utf-8").startswith('name = "Aria"\n[model')


def test_invalid_field_names_field(tmp_path: Path) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "persona.toml").write_text('name = "X"\n[model]\ntemperature = "hot"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        PersonaStore(tmp_path).load("x")
    assert "model.temperature" in str(err.value)


def test_unknown_persona_lists_known_ones(tmp_path: Path, shipped_copy: Path) -> None:
    store = PersonaStore(tmp_path)
    store.seed_from(shipped_copy, [])
    with pytest.raises(PersonaError) as err:
        store.load("nobody")
    assert "nobody" in str(err.value) and "aria" in str(err.value)
