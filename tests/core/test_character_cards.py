"""SillyTavern character cards V2 and V3: what a card becomes, what an export carries, what is refused.

Real files (tests/data/cards, built by tests/cards_maker.py to the published specs), a real NexusApp on a
temporary data folder, real SQLite."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nexus_ark import cli
from nexus_ark.agent.prompt import build_prompt
from nexus_ark.agent.prompt_inputs import gather_inputs
from nexus_ark.app import NexusApp
from nexus_ark.cards_io import export_card, import_card
from nexus_ark.clock import FixedClock
from nexus_ark.memory.components import Components
from nexus_ark.paths import assets_dir
from nexus_ark.personas.cards import (
    V2_BACKFILL_NOTE,
    CardError,
    plan_persona,
    png_texts,
    read_card_bytes,
    read_png_chunks,
)
from tests import cards_maker
from tests.cards_maker import b64, picture, v2_card, v3_card, with_text_chunks

CARDS = Path(__file__).resolve().parents[1] / "data" / "cards"
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
FIXTURES = ["seraphina_v2.png", "seraphina_v2.json", "shizuku_v3.png", "shizuku_v3.json"]


@pytest.fixture
def app(tmp_path: Path):
    with NexusApp(tmp_path / "data", clock=FixedClock(NOW)) as opened:
        yield opened


def _folder_listing(app: NexusApp) -> tuple[list[str], list[str]]:
    backups = app.layout.backups_dir
    return sorted(app.personas.store.slugs()), sorted(
        p.name for p in backups.iterdir()
    ) if backups.is_dir() else []


def _greetings(app: NexusApp, slug: str) -> list[tuple[str, bool]]:
    """The opening message and its other versions: (text, hidden), in order."""
    store = app.personas.memory(slug)
    first = store.messages.recent()[0]
    return [(m.content, m.hidden) for m in store.messages.versions(first.id)]


def _entities(app: NexusApp, slug: str) -> dict[str, str]:
    return {e.name: e.text for e in app.personas.memory(slug).components.entities()}


def _stored(app: NexusApp, slug: str) -> dict[str, Any]:
    return json.loads((app.personas.store.root / slug / "card.json").read_text(encoding="utf-8"))


def test_the_fixtures_are_the_cards_the_maker_builds(tmp_path: Path) -> None:
    """The committed files are what the maker writes from the specs (so the fixtures can be rebuilt)."""
    for path in cards_maker.write_all(tmp_path):
        assert path.read_bytes() == (CARDS / path.name).read_bytes(), path.name


def test_v2_png_card_maps_every_field_to_its_place(app: NexusApp) -> None:
    done = import_card(app, CARDS / "seraphina_v2.png")
    data = v2_card()["data"]
    persona = app.personas.load(done.slug)
    assert (done.spec, done.avatar, done.greetings, done.lore_in_memory, done.lore_always) == (
        "chara_card_v2",
        True,
        3,
        2,
        1,
    )
    # persona.toml: the name, the language, a one-line description with the names filled in.
    assert persona.settings.name == "Seraphina Vale"
    assert persona.settings.language == "en"
    assert persona.settings.description == (
        "Seraphina Vale is a wandering cartographer-mage who maps the floating isles of Eldoria."
    )
    # persona.md: readable sections; the constant lore entry is always in it; creator notes never are.
    soul = persona.soul
    assert soul.startswith("# Seraphina Vale\n\n" + data["description"] + "\n\n## Personality\n\n")
    for heading, key in [
        ("Personality", "personality"),
        ("Scenario", "scenario"),
        ("Instructions", "system_prompt"),
        ("Reminders", "post_history_instructions"),
        ("Example messages", "mes_example"),
    ]:
        assert f"## {heading}\n\n{data[key]}\n" in soul
    assert "## Always true\n\nIn Eldoria, every spell costs the caster a small memory.\n" in soul
    assert "slow" not in soul and "black ledger" not in soul
    # The whole card is kept as it came; the picture is the PNG without its card chunk.
    assert _stored(app, done.slug) == v2_card()
    avatar = (persona.folder / "avatar.png").read_bytes()
    assert png_texts(read_png_chunks(avatar, "avatar.png"), "avatar.png", ("chara", "ccv3")) == {}
    assert avatar == picture(hue=0)
    # The first message opens the conversation; the alternates are its other versions.
    assert _greetings(app, done.slug) == [
        ("*Seraphina looks up from her compass.* Oh! Hello, you. I'm Seraphina Vale. "
         "Mind holding this needle steady?", False),
        ("*The harbour bell rings.* You're late, you; the isles drifted east overnight.", True),
        ("*Seraphina Vale waves a rolled map.* Care to see where nobody has been?", True),
    ]  # fmt: skip
    # Lore: enabled, not constant entries become entities with their keys; the disabled one does not.
    assert _entities(app, done.slug) == {
        "Eldoria": "Eldoria is a realm of islands that float on warm updrafts.\n"
        "Keys: Eldoria, floating isles",
        "Amulet": "Seraphina's amulet glows when a storm is near; her mother gave it.\n"
        "Keys: lunar pendant, moonstone",
    }
    meta = json.loads((persona.folder / "card-import.json").read_text(encoding="utf-8"))
    assert meta["lore_entities"] == {"0": "Eldoria", "1": "Amulet"}
    assert meta["lore_always"] == [2]


def test_v3_png_card_is_read_from_ccv3_with_its_v3_fields_and_japanese(app: NexusApp) -> None:
    done = import_card(app, CARDS / "shizuku_v3.png")
    persona = app.personas.load(done.slug)
    assert done.spec == "chara_card_v3"
    assert _stored(app, done.slug) == v3_card()  # ccv3, not the V2 copy beside it
    assert persona.settings.language == "ja"
    assert "## 性格\n\n穏やか、几帳面、少し照れ屋。\n" in persona.soul
    assert "## 念押し\n\n{{char}}として丁寧語で話すこと。\n" in persona.soul
    # The nickname stands for {{char}}; "{{user}}さん" reads "あなた" without the honorific.
    assert _greetings(app, done.slug) == [
        ("こんばんは、あなた。しずくです。今夜は月がきれいですね。", False),
        ("あ、あなた。望遠鏡、のぞいてみますか？", True),
    ]
    entities = _entities(app, done.slug)
    assert entities["天文台"].endswith("\nKeys: 星見台, ほしみだい")
    assert entities["tea"] == "しずくは夜勤のときにほうじ茶を飲む。"  # a regex key is no word to match


def test_ccv3_chunk_wins_over_chara_when_both_exist() -> None:
    wrong = v2_card()
    wrong["data"]["name"] = "Not Me"
    png = with_text_chunks(picture(), [("chara", b64(wrong)), ("ccv3", b64(v3_card()))])
    assert read_card_bytes(png, "both.png").data.name == "月野しずく"
    png = with_text_chunks(picture(), [("ccv3", b64(v3_card())), ("chara", b64(wrong))])
    assert read_card_bytes(png, "both.png").data.name == "月野しずく"


@pytest.mark.parametrize("kind", [b"zTXt", b"iTXt"])
def test_compressed_and_international_text_chunks_are_read(kind: bytes) -> None:
    png = with_text_chunks(picture(), [("chara", b64(v2_card()))], kind=kind)
    card = read_card_bytes(png, "card.png")
    assert card.raw == v2_card()
    assert card.avatar == picture()


def test_a_v3_png_with_only_its_v2_copy_loses_the_backfill_note() -> None:
    """The V3 spec's note in a V2 copy's creator notes is the app's, not the creator's: trimmed on import."""
    copy = cards_maker.v2_backfill(v3_card())
    assert copy["data"]["creator_notes"].startswith(V2_BACKFILL_NOTE)
    card = read_card_bytes(with_text_chunks(picture(), [("chara", b64(copy))]), "old.png")
    assert card.data.creator_notes == "Quiet astronomer; Japanese."


def test_json_cards_import_without_avatar(app: NexusApp) -> None:
    for name, expected in [("seraphina_v2.json", v2_card()), ("shizuku_v3.json", v3_card())]:
        done = import_card(app, CARDS / name)
        assert _stored(app, done.slug) == expected
        assert not done.avatar and not (done.folder / "avatar.png").exists()


def test_a_json_v3_card_brings_its_main_icon_as_avatar(app: NexusApp, tmp_path: Path) -> None:
    card = v3_card()
    icon = "data:image/png;base64," + base64.b64encode(picture(hue=50)).decode()
    card["data"]["assets"] = [
        {"type": "background", "uri": "ccdefault:", "name": "main", "ext": "png"},
        {"type": "icon", "uri": icon, "name": "main", "ext": "png"},
    ]
    path = tmp_path / "with_icon.json"
    path.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    done = import_card(app, path)
    assert (done.folder / "avatar.png").read_bytes() == picture(hue=50)
    card["data"]["assets"][1]["uri"] = "data:image/png;base64,bm90IGEgcGljdHVyZQ=="  # "not a picture"
    path.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    done = import_card(app, path)
    assert not done.avatar and done.warnings == [
        "the main icon asset is not a readable PNG: the persona has no avatar"
    ]


def test_lore_is_recalled_by_a_key_that_only_its_keys_hold(app: NexusApp) -> None:
    """Lorebook behaviour: an entry comes into the prompt when a message says one of its keys."""
    english = import_card(app, CARDS / "seraphina_v2.json").slug
    japanese = import_card(app, CARDS / "shizuku_v3.json").slug

    def entities_for(slug: str, text: str) -> list[str]:
        context = gather_inputs(app.personas.memory(slug), text, [], [], lookback_days=0, now=NOW, recall_k=3)
        return context.entities

    found = entities_for(english, "Do you still wear the lunar pendant?")
    assert any(e.startswith("Amulet: Seraphina's amulet glows") for e in found), found
    assert entities_for(english, "Good morning, how did you sleep?") == []
    assert entities_for(english, "What is in the black ledger?") == []  # the disabled entry
    found = entities_for(japanese, "星見台への行き方を教えて")
    assert any(e.startswith("天文台: 山の上にある古い天文台") for e in found), found


def _contains(original: Any, exported: Any, where: str = "") -> list[str]:
    """Where `exported` differs from `original` on what `original` has (added keys are checked apart)."""
    if isinstance(original, dict) and isinstance(exported, dict):
        return [
            p for k, v in original.items() for p in _contains(v, exported.get(k, KeyError), f"{where}.{k}")
        ]
    if isinstance(original, list) and isinstance(exported, list) and len(original) == len(exported):
        return [
            p
            for i, (a, b) in enumerate(zip(original, exported, strict=True))
            for p in _contains(a, b, f"{where}[{i}]")
        ]
    return [] if original == exported else [f"{where}: {original!r} != {exported!r}"]  # fmt: skip


def _added(original: dict[str, Any], exported: dict[str, Any]) -> set[str]:
    added = set(exported["data"]) - set(original["data"])
    book = exported["data"].get("character_book") or {}
    entries = original["data"].get("character_book", {}).get("entries", [])
    for before, after in zip(entries, book.get("entries", []), strict=True):
        added |= {f"entry.{k}" for k in set(after) - set(before)}
    return added


@pytest.mark.parametrize("fmt", ["png", "json"])
@pytest.mark.parametrize("fixture", FIXTURES)
def test_export_then_import_round_trips_every_field(
    app: NexusApp, tmp_path: Path, fixture: str, fmt: str
) -> None:
    first = import_card(app, CARDS / fixture)
    exported = export_card(app, first.slug, tmp_path / f"out.{fmt}")
    assert exported.path == tmp_path / f"out.{fmt}" and exported.format == fmt
    second = import_card(app, exported.path)
    assert second.spec == "chara_card_v3"
    before, after = _stored(app, first.slug), _stored(app, second.slug)
    # Every field of the card as imported comes back equal; V3 adds only its required defaults and
    # the export's modification date (the V3 spec: set on export).
    before_data = {k: v for k, v in before["data"].items() if k != "modification_date"}
    assert (
        _contains({**before, "data": before_data, "spec": "chara_card_v3", "spec_version": "3.0"}, after)
        == []
    )
    assert after["data"]["modification_date"] == int(NOW.timestamp())
    assert _added(before, after) <= {"group_only_greetings", "modification_date", "entry.use_regex"}
    # And the persona made of it is the same persona.
    one, two = app.personas.load(first.slug), app.personas.load(second.slug)
    assert two.soul == one.soul
    assert two.settings.model_dump(include={"name", "language", "description"}) == one.settings.model_dump(
        include={"name", "language", "description"}
    )
    assert _greetings(app, second.slug) == _greetings(app, first.slug)
    assert _entities(app, second.slug) == _entities(app, first.slug)
    if fmt == "png" and first.avatar:
        assert (two.folder / "avatar.png").read_bytes() == (one.folder / "avatar.png").read_bytes()


def test_exported_png_carries_ccv3_and_a_v2_copy_for_older_apps(app: NexusApp, tmp_path: Path) -> None:
    slug = import_card(app, CARDS / "seraphina_v2.png").slug
    out = export_card(app, slug, tmp_path).path  # a folder: <slug>.png in it
    assert out == tmp_path / f"{slug}.png"
    texts = png_texts(read_png_chunks(out.read_bytes(), out.name), out.name, ("chara", "ccv3"))
    v3 = json.loads(base64.b64decode(texts["ccv3"]))
    v2 = json.loads(base64.b64decode(texts["chara"]))
    assert (v3["spec"], v3["spec_version"], v2["spec"], v2["spec_version"]) == (
        "chara_card_v3",
        "3.0",
        "chara_card_v2",
        "2.0",
    )
    assert v2["data"]["creator_notes"] == f"{V2_BACKFILL_NOTE}\n\n{v2_card()['data']['creator_notes']}"
    assert "group_only_greetings" not in v2["data"]
    assert v2["name"] == "Seraphina Vale" and v2["first_mes"] == v2_card()["data"]["first_mes"]  # V1 readers
    assert v2["data"]["character_book"]["entries"][1]["keys"] == ["lunar pendant", "moonstone"]


def test_export_carries_the_persons_edits_but_not_what_conversation_wrote(
    app: NexusApp, tmp_path: Path
) -> None:
    slug = import_card(app, CARDS / "seraphina_v2.json").slug
    persona = app.personas.load(slug)
    soul = persona.soul.replace("Curious, patient, dry humour;", "Bold, impatient;")
    (persona.folder / "persona.md").write_text(soul, encoding="utf-8")
    store = app.personas.memory(slug)
    # The person edits an entry in the window (the dashboard's entity editor writes no sources)...
    store.components.write_entity("Eldoria", "Eldoria's isles sink at night.\nKeys: Eldoria, sinking isles")
    # ...a conversation rewrote another (what it learned may be about the person: not for a card)...
    store.components.write_entity("Amulet", "The user's grandmother has one too.", ["msg:7"])
    out = export_card(app, slug, tmp_path / "edited.json")
    data = json.loads(out.path.read_text(encoding="utf-8"))["data"]
    assert data["personality"] == "Bold, impatient; keeps promises; dislikes waste."
    assert data["description"] == v2_card()["data"]["description"]
    entries = data["character_book"]["entries"]
    assert (entries[0]["content"], entries[0]["keys"]) == (
        "Eldoria's isles sink at night.",
        ["Eldoria", "sinking isles"],
    )
    assert entries[0]["extensions"] == {"position": 0, "probability": 100}  # the rest of the entry stays
    assert entries[1]["content"] == v2_card()["data"]["character_book"]["entries"][1]["content"]
    assert any("Amulet" in w for w in out.warnings)
    # An entry the person forgot in memory is left out of the card.
    item = store.components.db.execute("select item_id from entities where name = 'Eldoria'").fetchone()[0]
    store.forget([item])
    data = json.loads(export_card(app, slug, tmp_path / "forgot.json").path.read_text(encoding="utf-8"))[
        "data"
    ]
    assert [e.get("id") for e in data["character_book"]["entries"]] == [1, 2, 3]


def test_persona_made_here_exports_with_the_app_icon_and_no_lorebook(app: NexusApp, tmp_path: Path) -> None:
    store = app.personas.memory("aria")
    store.components.write_entity("Mika", "The user's sister; lives in Osaka.", ["msg:1"])  # private
    out = export_card(app, "aria", tmp_path / "aria.png").path
    chunks = read_png_chunks(out.read_bytes(), out.name)
    icon = read_png_chunks((assets_dir() / "icons" / "app.png").read_bytes(), "app.png")
    assert chunks[0] == icon[0]  # the icon's own IHDR: its picture
    card = read_card_bytes(out.read_bytes(), out.name)
    aria = app.personas.load("aria")
    assert card.data.name == "Aria" and card.data.creator_notes == aria.settings.description
    assert card.data.description == aria.soul.split("\n", 1)[1].strip("\n")
    assert card.data.character_book is None and "Osaka" not in out.read_bytes().decode("latin-1")
    again = import_card(app, out)
    assert app.personas.load(again.slug).settings.language == "en"


def _deep_json() -> bytes:
    return b'{"spec": "chara_card_v2", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def _card_with(**changes: Any) -> bytes:
    card = v2_card()
    card["data"].update(changes)
    return json.dumps(card).encode()


def _many_entries() -> bytes:
    card = v2_card()
    card["data"]["character_book"]["entries"] = [{"keys": ["k"], "content": "c", "enabled": True}] * 100_000
    return json.dumps(card).encode()


def _raw_extension(value: str) -> bytes:
    """A card whose data.extensions.x is the JSON text `value` as it is (json.dumps cannot write it)."""
    card = v2_card()
    card["data"]["extensions"] = {"x": "@@"}
    return json.dumps(card).replace('"@@"', value).encode()


def _lore_of(count: int, chars: int) -> bytes:
    card = v2_card()
    entries = [{"keys": [f"k{i}"], "content": "z" * chars, "enabled": True} for i in range(count)]
    card["data"]["character_book"] = {"entries": entries}
    return json.dumps(card).encode()


SERAPHINA_PNG = (CARDS / "seraphina_v2.png").read_bytes()
NAMELESS = {"spec": "chara_card_v3", "data": {"description": "x"}}
BAD_LORE = {"entries": [{"keys": ["a"], "content": "b", "enabled": "yes"}]}
BAD_CARDS: list[tuple[str, Any, str]] = [
    ("text.png", b"just some text", "text.png is not a PNG image"),
    ("plain.png", picture(), "plain.png is a PNG image without a character card"),
    ("cut.png", SERAPHINA_PNG[:5000], "cut.png is a broken PNG"),
    ("damaged.png", SERAPHINA_PNG[:200] + b"X" + SERAPHINA_PNG[201:], "wrong checksum"),
    ("b64.png", with_text_chunks(picture(), [("chara", "not*base64!")]), "'chara' chunk is not valid base64"),
    (
        "json.png",
        with_text_chunks(picture(), [("ccv3", base64.b64encode(b"{name: Seraphina").decode())]),
        "'ccv3' chunk is not valid JSON",
    ),
    (
        "bad.json",
        b'{"spec": "chara_card_v2", "data": {"name": "A",}}',
        "bad.json: the file is not valid JSON",
    ),
    ("latin1.json", '{"name": "Zo\u00eb"}'.encode("latin-1"), "latin1.json: the file is not UTF-8"),
    ("deep.json", _deep_json(), "nested too deeply"),
    ("spec.json", json.dumps({"spec": "v9", "data": {"name": "A"}}).encode(), "field 'spec' is 'v9'"),
    ("nospec.json", json.dumps({"hello": "world"}).encode(), "field 'spec' is missing"),
    ("list.json", b"[1, 2]", "a character card is a JSON object"),
    ("noname.json", json.dumps(NAMELESS).encode(), "field 'data.name' is missing"),
    ("blank.json", _card_with(name="   "), "field 'data.name' is empty"),
    ("long.json", _card_with(name="N" * 81), "field 'data.name' is 81 characters long"),
    ("twolines.json", _card_with(name="Sera\nphina"), "field 'data.name' is not one line"),
    ("tags.json", _card_with(tags="fantasy"), "field 'data.tags': Input should be a valid list"),
    ("type.json", _card_with(description=42), "field 'data.description': Input should be a valid string"),
    ("huge.json", _card_with(description="x" * 200_001), "field 'data.description': has 200001 characters"),
    (
        "surrogate.json",
        _card_with(first_mes="\ud800"),
        "field 'data.first_mes': contains an invalid character",
    ),
    (
        "kept.json",
        _card_with(extensions={"x": ["ok", "\udc00"]}),
        "field 'data.extensions.x[1]' contains an invalid",
    ),
    ("nul.json", _card_with(scenario="a\x00b"), "field 'data.scenario': contains a NUL character"),
    ("lore.json", _many_entries(), "field 'data.character_book.entries': has 100000 entries: at most 10000"),
    ("enabled.json", _card_with(character_book=BAD_LORE), "field 'data.character_book.entries[0].enabled'"),
    # Valid JSON that Python cannot make values of, or that this app cannot write back (issue 23, defect 5)
    (
        "digits.json",
        _raw_extension("1" * 5000),
        "field 'data.extensions.x' holds a number of more than 4,300 digits",
    ),
    ("deepext.json", _raw_extension("[" * 600 + "]" * 600), "field 'data.extensions.x[0][0][0]"),
    # the card, data, extensions, then 98 lists: 101 levels
    ("deep101.json", _raw_extension("[" * 98 + "]" * 98), "is nested more than 100 levels deep"),
    (
        "lorechars.json",
        _lore_of(2_001, 1_000),
        "field 'data.character_book.entries': its entries hold 2,023,902 characters for memory: at most "
        "2,000,000 are read",
    ),
]


@pytest.mark.parametrize(("name", "blob", "message"), BAD_CARDS, ids=[c[0] for c in BAD_CARDS])
def test_bad_card_is_refused_naming_file_and_field_and_leaves_nothing(
    app: NexusApp, tmp_path: Path, name: str, blob: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(blob)
    before = _folder_listing(app)
    with pytest.raises(CardError) as caught:
        import_card(app, path)
    assert message in str(caught.value)
    assert name in str(caught.value)
    assert _folder_listing(app) == before


def test_the_command_line_says_why_a_card_was_refused_in_the_same_english_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reasons are notices now, so that the window can show them translated; the command line prints
    the very same English, problem list and hint included."""
    path = tmp_path / "tags.json"
    path.write_bytes(_card_with(description=42, tags="fantasy"))
    assert cli.main(["--data-dir", str(tmp_path / "data"), "persona", "import", str(path)]) == 2
    assert capsys.readouterr().err == (
        "error: tags.json: field 'data.description': Input should be a valid string (got 42); "
        "field 'data.tags': Input should be a valid list (got 'fantasy').\nNothing was imported.\n"
    )


def test_oversized_file_is_refused_before_it_is_read(app: NexusApp, tmp_path: Path) -> None:
    """A 50 MB base64 chunk makes a 50 MB file: refused by its size, nothing read into memory."""
    path = tmp_path / "huge.png"
    with path.open("wb") as fh:
        fh.write(picture())
        fh.truncate(50 * 2**20)
    with pytest.raises(CardError, match=r"huge.png is 52.4 MB: a character card may be at most 32 MB"):
        import_card(app, path)
    assert _folder_listing(app)[0] == ["aria", "hikari"]


def test_failure_while_writing_memory_removes_the_half_made_persona(
    app: NexusApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails half-way (a stand-in for a full disk: the second entity raises) leaves no
    persona folder, no backup folder and no open runtime behind."""
    before = _folder_listing(app)
    real = Components.write_entity
    calls = []

    def failing(self, name, text, source_ids=None):  # type: ignore[no-untyped-def]
        calls.append(name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(self, name, text, source_ids)

    monkeypatch.setattr(Components, "write_entity", failing)
    with pytest.raises(OSError, match="No space left"):
        import_card(app, CARDS / "seraphina_v2.png")
    assert _folder_listing(app) == before
    assert "seraphina-vale" not in [r.slug for r in app.personas.runtimes()]
    monkeypatch.setattr(Components, "write_entity", real)
    done = import_card(app, CARDS / "seraphina_v2.png")  # and the same card imports cleanly afterwards
    assert done.slug == "seraphina-vale" and len(_entities(app, done.slug)) == 2


def test_a_huge_integer_spec_version_is_read_as_a_newer_version(app: NexusApp, tmp_path: Path) -> None:
    """float() of a 400-digit integer raised OverflowError: the import ended with a traceback."""
    card = v3_card()
    card["spec_version"] = int("9" * 400)
    path = tmp_path / "version.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    done = import_card(app, path)
    assert done.name == "月野しずく"
    assert any(str(w).startswith("spec_version 9999") and "newer than 3.0" in w for w in done.warnings)
    assert all(len(w) < 200 for w in done.warnings)


def test_nesting_at_the_limit_imports_and_exports(app: NexusApp, tmp_path: Path) -> None:
    path = tmp_path / "deep100.json"
    path.write_bytes(_raw_extension("[" * 97 + "]" * 97))  # the card, data, extensions: 100 levels
    done = import_card(app, path)
    out = export_card(app, done.slug, tmp_path / "out.json").path
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert exported["data"]["extensions"]["x"] == json.loads("[" * 97 + "]" * 97)


def test_ten_thousand_lore_entries_of_one_name_are_named_in_linear_time() -> None:
    """Each copy of a name was found by trying "name (2)", "name (3)"... from 2: 10,000 entries of one
    name took 50 million tries (109 s through the CLI on a loaded machine, 9 s here)."""
    card = v2_card()
    card["data"]["character_book"] = {
        "entries": [{"keys": ["same"], "content": "c", "name": "Same"}] * 10_000
    }
    started = time.monotonic()
    plan = plan_persona(read_card_bytes(json.dumps(card).encode(), "same.json"))
    assert time.monotonic() - started < 5  # quadratic: 9 s here; headroom for a loaded machine
    names = [m.name for m in plan.lore]
    assert names[:3] == ["Same", "Same (2)", "Same (3)"] and names[-1] == "Same (10000)"
    assert len({n.casefold() for n in names}) == 10_000


def test_example_messages_reach_the_prompt_as_a_note_without_their_heading(
    app: NexusApp, tmp_path: Path
) -> None:
    """Under '## Example messages' with SillyTavern's <START> markers, a small model began replies with the
    heading (issue 23, defect 20). persona.md keeps the heading (it is edited and exported from there)."""
    card = v2_card()
    card["data"]["mes_example"] = (
        "<START>\n{{user}}: What are you drawing?\n{{char}}: The wind's roads.\n"
        "<START>\n{{user}}: Tea?\n{{char}}: Always."
    )
    path = tmp_path / "examples.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    done = import_card(app, path)
    persona = app.personas.load(done.slug)
    assert "## Example messages\n\n<START>\n" in persona.soul
    system = build_prompt(persona, [], "Hello").messages[0].content
    assert "Example messages" not in system and "<START>" not in system
    assert (
        "## Reminders\n\nStay in character as {{char}}; never speak for {{user}}.\n\n"
        "(How Seraphina Vale talks, shown by example. These lines are not part of this conversation: never "
        "repeat them or this note.)\n"
        "{{user}}: What are you drawing?\n{{char}}: The wind's roads.\n\n"
        "{{user}}: Tea?\n{{char}}: Always.\n\n"
        "## Always true"
    ) in system
    japanese = app.personas.load(import_card(app, CARDS / "shizuku_v3.json").slug)
    system = build_prompt(japanese, [], "こんにちは").messages[0].content
    assert "会話の例" not in system and "<START>" not in system
    assert "（月野しずくの話し方の例です。" in system and "{{char}}: ベガです。夏の夜に明るいから。" in system


def test_a_soul_without_examples_reaches_the_prompt_as_written(app: NexusApp) -> None:
    persona = app.personas.load("aria")
    assert build_prompt(persona, [], "Hi").messages[0].content.startswith(persona.soul.strip())
