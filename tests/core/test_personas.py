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


def _windows_refuses(folder_name: str) -> bool:
    """Windows' own rules for a file or folder name (an oracle independent of slugify)."""
    reserved = {"con", "prn", "aux", "nul"} | {f"{d}{n}" for d in ("com", "lpt") for n in "0123456789¹²³"}
    stem = folder_name.split(".")[0].rstrip(" ").lower()
    return (
        not folder_name
        or folder_name[-1] in ". "
        or stem in reserved
        or any(c in '<>:"/\\|?*' or ord(c) < 32 for c in folder_name)
    )


@pytest.mark.parametrize("name", ["CON", "nul", "COM1", "com¹", "Lpt9 ", "con.txt", "aux.", "PRN  "])
def test_windows_reserved_names_get_folders_every_os_can_create(tmp_path: Path, name: str) -> None:
    persona = PersonaStore(tmp_path).create(name)
    assert not _windows_refuses(persona.slug), persona.slug
    assert persona.folder.name == persona.slug and persona.settings.name == name.strip()


def test_slugs_differ_from_existing_folders_in_case_too(tmp_path: Path) -> None:
    (tmp_path / "Mika").mkdir()  # a folder made by hand: on Windows and macOS "mika" is the same folder
    assert PersonaStore(tmp_path).create("mika").slug == "mika-2"


@pytest.mark.parametrize("name", ["Mi\tka", "Mi\nka", "Mi\rka", "Mi\x00ka", "Mi\u2028ka"])
def test_names_that_break_one_line_output_are_refused(tmp_path: Path, name: str) -> None:
    store = PersonaStore(tmp_path)
    with pytest.raises(ConfigError) as err:
        store.create(name)
    assert "name" in err.value.message and "one line" in err.value.message
    assert store.slugs() == [], "nothing was created"


def test_too_long_name_says_field_and_limit_without_a_pydantic_dump(tmp_path: Path) -> None:
    store = PersonaStore(tmp_path)
    with pytest.raises(ConfigError) as err:
        store.create("A" * 300)
    text = str(err.value)
    assert "name" in text and "80" in text and "300 characters" in text
    assert "pydantic" not in text and "http" not in text and "A" * 100 not in text
    assert store.slugs() == []


def test_missing_or_empty_soul_is_reported_but_the_persona_stays_usable(
    tmp_path: Path, shipped_copy: Path
) -> None:
    store = PersonaStore(tmp_path / "personas")
    store.seed_from(shipped_copy, [])
    (tmp_path / "personas" / "aria" / "persona.md").unlink()
    (tmp_path / "personas" / "hikari" / "persona.md").write_text(" \n\n", encoding="utf-8")
    infos = {i.slug: i for i in store.list()}
    assert infos["aria"].ok and "persona.md is missing" in infos["aria"].warning
    assert infos["hikari"].ok and "persona.md is empty" in infos["hikari"].warning
    assert not PersonaStore(shipped_copy).list()[0].warning


HAND_EDITED = """\
# Aria, tuned by hand: keep these notes
name = "Aria"
language = "en"  # English only
description = "A warm companion."

[model]
# warmer than the default, on purpose
temperature = 0.9  # tried 1.2: too wild
spec = "bundled"
max_tokens = 1_000

[conversation]
history_messages = 40
"""


def test_model_change_keeps_comments_order_and_other_settings(tmp_path: Path, shipped_copy: Path) -> None:
    from nexus_ark.app import NexusApp
    from nexus_ark.model_config import ModelConfig

    path = shipped_copy / "aria" / "persona.toml"
    path.write_text(HAND_EDITED, encoding="utf-8")
    with NexusApp(tmp_path / "data", shipped_personas=shipped_copy) as app:
        app.personas.save_models(
            "aria",
            {"spec": "ollama:qwen2.5:1.5b", "api_base": "http://127.0.0.1:11434", "api_key": ""},
            ModelConfig(spec="bundled"),
        )
        saved = tmp_path / "data" / "personas" / "aria" / "persona.toml"
        text = saved.read_text(encoding="utf-8")
        for kept in (
            "# Aria, tuned by hand: keep these notes",
            'language = "en"  # English only',
            "# warmer than the default, on purpose",
            "temperature = 0.9  # tried 1.2: too wild",
            "max_tokens = 1_000",
        ):
            assert kept in text
        assert (
            text.index("temperature") < text.index('spec = "ollama:qwen2.5:1.5b"') < text.index("max_tokens")
        )
        persona = app.personas.load("aria")
        assert persona.settings.model.spec == "ollama:qwen2.5:1.5b"
        assert persona.settings.model.max_tokens == 1000
        assert persona.settings.internal_model is not None
        assert persona.settings.internal_model.spec == "bundled"

        # "Same as the conversation model" removes the internal table and nothing else.
        app.personas.save_models("aria", {"spec": "bundled", "api_base": "", "api_key": ""}, None)
        text = saved.read_text(encoding="utf-8")
        assert "internal_model" not in text
        assert "# warmer than the default, on purpose" in text and "history_messages = 40" in text
        assert app.personas.load("aria").settings.model.spec == "bundled"


def test_a_broken_personas_reason_stays_a_notice_when_copied_even_with_braces_in_it(tmp_path: Path) -> None:
    """Why a persona cannot be opened is a notice (the window shows it translated). Copied or pickled, as
    pydantic and worker hand-offs may do, it stays the same English and the same notice, even when the
    value it quotes holds braces (it is made again from its template, not from the English)."""
    import copy
    import pickle

    from nexus_ark.notices import Notice

    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "persona.toml").write_text('name = "Odd"\nlanguage = "{ja}"\n', encoding="utf-8")
    [info] = PersonaStore(tmp_path).list()
    assert "language: Input should be 'en' or 'ja' (got '{ja}')" in info.error
    for copied in (copy.deepcopy(info).error, pickle.loads(pickle.dumps(info)).error):
        assert copied == info.error
        assert isinstance(copied, Notice) and copied.template == info.error.template


@pytest.mark.parametrize(
    ("value", "problem"),
    [("[" * 2000 + "]" * 2000, "nested too deeply"), ("9" * 5000, "more than 4,300 digits")],
)
def test_a_persona_toml_python_cannot_read_is_one_broken_persona_with_its_line(
    tmp_path: Path, shipped_copy: Path, value: str, problem: str
) -> None:
    # tomllib raises RecursionError / ValueError on these, not TOMLDecodeError: it ended `persona list`.
    store = PersonaStore(tmp_path / "personas")
    store.seed_from(shipped_copy, [])
    broken = tmp_path / "personas" / "aria" / "persona.toml"
    broken.write_text(f'name = "Aria"\n# it\'s broken\nx = {value}\n', encoding="utf-8")
    infos = {i.slug: i for i in store.list()}
    assert not infos["aria"].ok
    assert str(broken) in infos["aria"].error and problem in infos["aria"].error
    assert "line 3" in infos["aria"].error
    assert infos["hikari"].ok
    with pytest.raises(ConfigError):
        store.load("aria")


def test_a_persona_is_found_by_the_name_the_window_shows_unless_two_share_it(tmp_path: Path) -> None:
    """`chat --persona ひかり` said there was no persona 'ひかり' (its folder is hikari): a person types the
    name the window shows. Case and width are folded; a display name two personas share names neither."""
    store = PersonaStore(tmp_path)
    hikari = store.create("ひかり", "ja").slug
    aria = store.create("Aria").slug
    assert hikari != "ひかり" and store.slug_for("ひかり") == hikari
    assert store.slug_for("ARIA") == store.slug_for("ａｒｉａ") == store.slug_for(aria) == aria
    copy = store.duplicate(aria, "Aria").slug  # a second persona shown as "Aria"
    assert store.slug_for("Aria") == aria  # its own folder's name, in another case, still means it
    assert store.slug_for(copy) == copy
    store.duplicate(hikari, "ひかり")
    assert store.slug_for("ひかり") == "ひかり"  # two are shown so: neither is meant
    assert store.slug_for("nobody") == "nobody"
    with pytest.raises(PersonaError, match="no persona 'nobody'") as refused:
        store.load(store.slug_for("nobody"))
    assert f"{hikari} (ひかり)" in str(refused.value) and f"{aria}," in str(refused.value)  # both names
