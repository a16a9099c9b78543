"""Hostile input, round three (issue 33), on the real stores: a name no folder can have names no persona and
no room; an export never overwrites what a folder holds; a hand edit made while a soul change waited to be
written is kept in a version; a 10 MB setting is quoted cut; `soul proposals accept --persona X 1` parses;
a card holding NaN or Infinity is refused naming the field; times out of range are refused at the boundary
and read back from storage as "no time"."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest
import tomli_w

from nexus_ark.cli.parser import build_parser
from nexus_ark.clock import checked_epoch, checked_time, stored_time
from nexus_ark.errors import NexusArkError, PersonaError
from nexus_ark.memory.portability import export_memory
from nexus_ark.memory.store import MemoryStore
from nexus_ark.model_config import ModelConfig
from nexus_ark.personas.cards import parse_card
from nexus_ark.personas.cards.schema import CardError
from nexus_ark.personas.store import PersonaStore
from nexus_ark.rooms.room import RoomStore
from nexus_ark.soul.keeper import SoulKeeper
from tests.cards_maker import v3_card

LONG = "a" * 300


def test_a_name_longer_than_a_file_name_is_no_persona_and_no_room(tmp_path: Path) -> None:
    store = PersonaStore(tmp_path / "personas")
    store.create("Aria")
    for name in (LONG, "あ" * 100, "x/../../etc", "nul\x00inside"):  # 300 bytes of UTF-8 for the second
        with pytest.raises(PersonaError) as refused:
            store.load(name)
        assert "There is no persona" in refused.value.message
        assert len(refused.value.message) < 300, "the name is quoted cut"
        assert store.slug_for(name) == name  # then load() says it is no persona
    with pytest.raises(NexusArkError, match="There is no room"):
        RoomStore(tmp_path / "rooms").load(LONG)


def test_an_export_into_a_folder_that_holds_files_goes_into_a_new_subfolder(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    try:
        store.components.set_core_memory("I am Aria.")
        folder = tmp_path / "ex"
        folder.mkdir()
        (folder / "memory.md").write_text("another persona's export", encoding="utf-8")
        written = export_memory(store, folder, "Aria")
        assert (folder / "memory.md").read_text(encoding="utf-8") == "another persona's export"
        assert written.parent.parent == folder and written.parent.name.startswith("Aria-memory-")
        assert "I am Aria." in (written.parent / "memory.md").read_text(encoding="utf-8")
        again = export_memory(store, folder, "Aria")  # a second one in the same second: its own folder
        assert again.parent not in (folder, written.parent)
        empty = tmp_path / "empty"
        empty.mkdir()
        assert export_memory(store, empty, "Aria") == empty / "memory.json"  # an empty folder is used as is
    finally:
        store.close()


def test_a_hand_edit_made_while_a_soul_change_waited_is_kept_as_a_version(tmp_path: Path) -> None:
    folder = tmp_path / "aria"
    folder.mkdir()
    soul = folder / "persona.md"
    soul.write_text("# Aria\nFirst words.\n", encoding="utf-8")
    store = MemoryStore(folder / "memory.db")
    try:
        keeper = SoulKeeper(folder, store)
        keeper.reconcile()  # "first"
        # The app recorded a change, then crashed before writing the file ...
        pending = keeper.records.add_version("# Aria\nThe app's change.\n", "editor", applied=False)
        # ... and the person edited persona.md by hand before the next open.
        soul.write_text("# Aria\nThe person's own edit.\n", encoding="utf-8")
        recorded = SoulKeeper(folder, store).reconcile()
        assert soul.read_text(encoding="utf-8") == "# Aria\nThe person's own edit.\n"
        assert recorded is not None and recorded.author == "outside"
        texts = [v.text for v in keeper.records.versions()]
        assert "# Aria\nThe person's own edit.\n" in texts and pending.text in texts  # neither is lost
        assert f"version {pending.id}" in recorded.reason
        assert SoulKeeper(folder, store).reconcile() is None  # settled: the next open changes nothing
    finally:
        store.close()


def test_a_soul_change_cut_off_before_the_file_is_still_finished(tmp_path: Path) -> None:
    folder = tmp_path / "aria"
    folder.mkdir()
    soul = folder / "persona.md"
    soul.write_text("# Aria\nFirst words.\n", encoding="utf-8")
    store = MemoryStore(folder / "memory.db")
    try:
        keeper = SoulKeeper(folder, store)
        keeper.reconcile()
        keeper.records.add_version("# Aria\nThe app's change.\n", "editor", applied=False)
        assert SoulKeeper(folder, store).reconcile() is None
        assert soul.read_text(encoding="utf-8") == "# Aria\nThe app's change.\n"
        assert [v.applied for v in keeper.records.versions()] == [True, True]
    finally:
        store.close()


def test_a_ten_megabyte_model_spec_is_quoted_cut(tmp_path: Path) -> None:
    store = PersonaStore(tmp_path / "personas")
    store.create("Aria")
    toml = tmp_path / "personas" / "aria" / "persona.toml"
    settings = tomllib.loads(toml.read_text("utf-8"))
    settings.setdefault("model", {})["spec"] = "x" * 10_000_000
    toml.write_text(tomli_w.dumps(settings), "utf-8")
    [info] = store.list()
    assert info.error and "model.spec" in info.error
    assert len(info.error) < 2_000, f"{len(info.error)} characters"
    with pytest.raises(ValueError) as refused:
        ModelConfig(spec="y" * 10_000_000)
    assert len(str(refused.value)) < 2_000


@pytest.mark.parametrize(
    "argv",
    [
        ["soul", "proposals", "accept", "--persona", "aria", "1"],
        ["soul", "proposals", "accept", "1", "--persona", "aria"],
        ["soul", "proposals", "--persona", "aria", "accept", "1"],
    ],
)
def test_soul_proposals_takes_the_id_before_or_after_persona(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert (args.persona, args.action, args.id) == ("aria", "accept", 1)


@pytest.mark.parametrize(
    ("raw", "shown"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-1e999", "-Infinity")]
)
def test_a_card_holding_nan_or_infinity_is_refused_naming_the_field(raw: str, shown: str) -> None:
    card = v3_card()
    card["data"]["extensions"]["depth"] = "@@"
    text = json.dumps(card).replace('"@@"', raw)
    with pytest.raises(CardError) as refused:
        parse_card(json.loads(text), "odd.json")
    assert "odd.json" in refused.value.message and "data.extensions.depth" in refused.value.message
    assert shown in refused.value.message


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "1899-12-31"]
)
def test_a_time_out_of_range_is_refused_coming_in_and_unknown_going_out(stamp: str) -> None:
    with pytest.raises(ValueError, match="out of range"):
        checked_time(stamp)
    assert stored_time(stamp) is None
    assert stored_time("2026-01-01T10:00:00") is not None
    assert checked_time("2026-01-01T10:00:00+09:00") == datetime(2026, 1, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="0001-01-01"):
        checked_epoch(-62135596800.0)


def test_a_document_over_the_limit_is_refused_in_words_before_any_indexing(tmp_path: Path) -> None:
    from nexus_ark.memory.knowledge import DOCUMENT_MAX_CHARS, extract_text

    big = tmp_path / "book.txt"
    big.write_text("A sentence about the sea. " * (DOCUMENT_MAX_CHARS // 26 + 10), encoding="utf-8")
    with pytest.raises(NexusArkError) as refused:
        extract_text(big)
    assert (
        "book.txt holds" in refused.value.message
        and f"at most {DOCUMENT_MAX_CHARS:,}" in refused.value.message
    )
    fine = tmp_path / "notes.txt"
    fine.write_text("Mika's cat is called Miso.", encoding="utf-8")
    assert extract_text(fine) == "Mika's cat is called Miso."


def test_a_chatgpt_zip_of_whitespace_is_read_in_seconds_and_its_conversation_kept(tmp_path: Path) -> None:
    """100 MB of whitespace around one conversation, zipped to about 100 KB: read one character at a time it
    took about a second per 10 MB of a core (27 s for 300 MB)."""
    import time
    import zipfile

    from nexus_ark.memory.chatgpt_import import import_chatgpt
    from nexus_ark.memory.importer import on_store

    conversation = {
        "title": "Tea",
        "create_time": 1720000000.0,
        "conversation_id": "c-tea",
        "current_node": "u1",
        "mapping": {
            "u1": {
                "id": "u1",
                "parent": None,
                "children": [],
                "message": {
                    "id": "u1",
                    "author": {"role": "user"},
                    "create_time": 1720000010.0,
                    "content": {"content_type": "text", "parts": ["I like jasmine tea."]},
                },
            }
        },
    }
    path = tmp_path / "export.zip"
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("conversations.json", "w") as f,
    ):
        f.write(b"[")
        for _ in range(100):
            f.write(b" " * 1_000_000)
        f.write(json.dumps(conversation).encode() + b"\n" * 1_000_000 + b"]")
    assert path.stat().st_size < 1_000_000
    store = MemoryStore(tmp_path / "memory.db")
    try:
        started = time.monotonic()
        report = import_chatgpt(path, on_store(store))
        took = time.monotonic() - started
        assert (report.imported, report.errors) == (1, [])
        assert took < 6.0, f"{took:.1f} s"
    finally:
        store.close()


def test_a_memory_export_holding_a_year_1_time_is_refused_whole_naming_the_row(tmp_path: Path) -> None:
    from nexus_ark.memory.portability import import_memory

    source = MemoryStore(tmp_path / "a.db")
    try:
        source.messages.add(speaker="user", role="user", content="A day at the sea.")
        source.messages.add(
            speaker="user", role="user", content="Long ago.", created_at="0001-01-01T00:00:00"
        )
        export_memory(source, tmp_path / "export", "Aria")
    finally:
        source.close()
    target = MemoryStore(tmp_path / "b.db")
    try:
        with pytest.raises(NexusArkError) as refused:
            import_memory(target, tmp_path / "export")
        assert "table messages, row 2: created_at '0001-01-01T00:00:00'" in refused.value.message
        assert "out of range" in refused.value.message and refused.value.hint == "Nothing was restored."
        assert target.messages.count() == 0
    finally:
        target.close()


def test_a_ten_megabyte_jsonl_line_is_refused_in_words_and_the_rest_of_the_file_kept(tmp_path: Path) -> None:
    from nexus_ark.memory.importer import MAX_LINE_BYTES, import_jsonl, on_store

    def line(n: int, text: str) -> str:
        return json.dumps(
            {"id": f"l{n}", "speaker": "Mika", "text": text, "timestamp": "2025-03-01T10:00:00"}
        )

    path = tmp_path / "chat.jsonl"
    huge = "the tide came in " * (10_000_000 // 17)
    path.write_text(
        "\n".join([line(1, "Luna the cat is twelve."), line(2, huge), line(3, "We went to Kyoto.")]) + "\n",
        encoding="utf-8",
    )
    store = MemoryStore(tmp_path / "m.db")
    try:
        report = import_jsonl(path, on_store(store), {"aria"})
        kept = [m.content for m in store.messages.recent(limit=10)]
    finally:
        store.close()
    assert report.imported == 2
    assert sorted(kept) == ["Luna the cat is twelve.", "We went to Kyoto."]
    assert len(report.errors) == 1
    refusal = str(report.errors[0])
    assert "chat.jsonl:2:" in refusal and f"{MAX_LINE_BYTES:,}" in refusal and "skipped" in refusal
    assert len(refusal) < 300, "the line itself is not echoed"
