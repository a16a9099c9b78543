"""What a dream wrote leads a search back to the turns it was written from (archive/written_units.py): a
question that matches an episode's summary, but not the words of the turn that says it, finds that turn.
Real SQLite FTS5 and sqlite-vec, the bundled e5 model; the turns come in through `memory import`'s code,
so the episode cites them the way a dream does ("msg:<id>" of the message, which the archive indexes
under the id it was imported with)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.memory.archive import NewItem, written_units
from nexus_ark.memory.components import Episode
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

# The day of "the keys" is the day Mika moved, which only the episode says in the question's words; the
# other turns share a word or a speaker with the question and come first without the episode.
SAID = [
    ("d1", "Sam", "My brother's flat is tiny, he keeps complaining about it.", "2023-04-02T10:00:00"),
    ("d2", "Mika", "Moving furniture around the living room was exhausting.", "2023-04-09T10:00:00"),
    ("d3", "Sam", "Did you see the new bakery near the station?", "2023-04-16T10:00:00"),
    (
        "d4",
        "Mika",
        "I finally picked up the keys this morning, the boxes are everywhere!",
        "2023-05-01T10:00:00",
    ),
    ("d5", "Sam", "Congrats! Tell me everything.", "2023-05-01T10:01:00"),
    ("d6", "Mika", "We talked about the office party next year.", "2023-05-14T10:00:00"),
    ("d7", "Sam", "Rent in this city is brutal for everyone.", "2023-05-21T10:00:00"),
    ("d8", "Mika", "My sister started a new job in Kyoto.", "2023-06-04T10:00:00"),
]
QUESTION = "When did Mika move into her new apartment?"


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    tmp = tmp_path_factory.mktemp("lead")
    path = tmp / "turns.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "speaker": who, "text": text, "timestamp": at}) + "\n"
            for i, who, text, at in SAID
        ),
        "utf-8",
    )
    store = MemoryStore(tmp / "memory.db")
    report = import_jsonl(path, on_store(store), set())
    assert report.imported == len(SAID) and not report.errors
    keys = store.db.execute("select id from messages where source_id = 'd4'").fetchone()[0]
    store.components.put_episode(
        Episode(
            date="2023-05-01",
            summary="Mika moved into her new apartment today and was unpacking boxes.",
            source_ids=[f"msg:{keys}"],
        )
    )
    store.archive.embed_pending(default_embedder())
    yield store
    store.close()


def _top(memory: MemoryStore, k: int) -> list[str | None]:
    return [h.source_id for h in memory.archive.search(QUESTION, default_embedder(), k=k)]


def test_an_episode_found_by_the_question_brings_back_the_turn_it_was_written_from(
    memory: MemoryStore,
) -> None:
    top = _top(memory, 4)
    assert "d4" in top, f"the turn the episode cites is not in the top 4 {top}"


def test_without_the_lead_back_that_turn_ranks_lower(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(written_units, "LEAD_WEIGHT", 0.0)
    top = _top(memory, 4)
    assert "d4" not in top, f"found without the lead-back: the test cannot tell it works ({top})"


def test_an_entity_leads_to_a_chat_turn_indexed_under_its_message_id(tmp_path: Path) -> None:
    """A turn the chat stored is indexed as "msg:<id>" (not imported): an entity citing it leads there,
    and a turn it does not cite is not brought in."""
    store = MemoryStore(tmp_path / "memory.db")
    try:
        turn = store.archive.add(
            NewItem(kind="message", text="Mika: The cat is called Luna.", source_id="msg:7")
        )
        store.archive.add(NewItem(kind="message", text="Mika: Good night!", source_id="msg:8"))
        entity = store.components.write_entity("Luna", "Mika's cat.", ["msg:7"])
        unit = store.db.execute("select item_id from entities where name = ?", [entity.name]).fetchone()[0]
        ranking, share = written_units.WrittenUnits(store.db).sources({unit: 1.0}, "", [])
        assert ranking == [turn] and share == {turn: written_units.LEAD_WEIGHT}
    finally:
        store.close()
