"""Links across conversations (archive/links.py): what a question whose two facts were said in two
conversations needs, on a real archive (SQLite + sqlite-vec, turns indexed as a chat or an import indexes
them, the bundled e5 model).

"Where did Caroline move from?" finds "I moved from my home country" (conversation one); the answer,
"...my home country, Sweden", was said six weeks later and shares no word with the question but "home
country" with the first turn. The links are off in the app (none raised held-out recall on LoCoMo under
cross-validation: docs/benchmarks.md); these tests switch each on and check it does what it is for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.memory.archive import links
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

FIRST = [
    ("Caroline", "Hi Mel! This week was a lot: I finally unpacked the last boxes."),
    ("Melanie", "Hey! How are you settling in?"),
    (
        "Caroline",
        "My friends here have been great. I've known them for four years, since I moved from my home "
        "country.",
    ),
    ("Melanie", "That's lovely, friends like that are rare."),
    ("Caroline", "Tomorrow I'm going to the library to study for my counseling course."),
    ("Melanie", "Good luck! I'm taking the kids swimming."),
]
SECOND = [
    ("Melanie", "Hey Caroline! The kids and I painted a sunset last weekend."),
    ("Caroline", "Beautiful! Look at this necklace: a gift from my grandma in my home country, Sweden."),
    ("Melanie", "It's gorgeous. What does it mean to you?"),
    ("Caroline", "It stands for love and strength; I wear it every day."),
    ("Melanie", "We moved the couch and the bookshelf around in the living room."),
    ("Caroline", "My neighbour moved away to another city last month."),
    ("Melanie", "Moving is so stressful. We moved house twice when I was a kid."),
]
QUESTION = "Where did Caroline move from four years ago?"


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    store = MemoryStore(Path(tmp_path_factory.mktemp("links")) / "memory.db")
    for day, prefix, turns in (("2023-05-08", "a", FIRST), ("2023-06-20", "b", SECOND)):
        index_turns(
            store.archive,
            [
                Turn(speaker=s, text=t, created_at=f"{day}T13:{i:02d}:00", source_id=f"{prefix}{i}")
                for i, (s, t) in enumerate(turns)
            ],
        )
    store.archive.embed_pending(default_embedder())
    yield store
    store.close()


def _top(memory: MemoryStore, k: int) -> list[str | None]:
    return [h.source_id for h in memory.archive.search(QUESTION, default_embedder(), k=k)]


def _id(memory: MemoryStore, source_id: str) -> int:
    return memory.archive.ids_of_source(source_id)[0]


def _ids(memory: MemoryStore, prefix: str, n: int) -> list[int]:
    return [_id(memory, f"{prefix}{k}") for k in range(n)]


def test_the_second_hop_from_a_turn_finds_the_other_conversations_turn_sharing_its_rare_words(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(links, "HOP_SEEDS", 1)
    monkeypatch.setattr(links, "HOP_WITH_QUERY", False)
    hop = memory.archive.recall.links
    ranking, share = hop.keyword_hop(QUESTION, [_id(memory, "a2")], "", [])
    found = [memory.archive.get(i)["source_id"] for i in ranking]  # type: ignore[index]
    assert found[0] == "b1", found  # "home country"
    assert not [s for s in found if s.startswith("a")], found  # never the seed's own conversation
    assert set(share.values()) == {links.HOP_WEIGHT}


def test_a_two_conversation_answer_comes_into_the_top_six_only_with_the_link(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _top(memory, 6)
    assert before[0] == "a2" and "b1" not in before, before
    monkeypatch.setattr(links, "HOP_SEEDS", 2)
    monkeypatch.setattr(links, "HOP_WITH_QUERY", False)
    monkeypatch.setattr(links, "HOP_WEIGHT", 1.0)
    after = _top(memory, 6)
    assert after[0] == "a2" and "b1" in after, after


def test_the_best_turn_of_each_conversation_is_by_the_person_the_question_names(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(links, "SESSION_BEST_WEIGHT", 0.5)
    # The first fusion's order, made up: oldest first (Melanie's turns among them).
    ids = sorted(_ids(memory, "a", len(FIRST)) + _ids(memory, "b", len(SECOND)))
    fused = {i: 1.0 / n for n, i in enumerate(ids, 1)}
    rankings = memory.archive.recall.links.rankings(QUESTION, fused, None, None, "", [])
    assert len(rankings) == 1
    firsts = [memory.archive.get(i) for i in rankings[0][0]]
    assert [(f["speaker"], f["source_id"]) for f in firsts if f] == [("Caroline", "a0"), ("Caroline", "b1")]


def test_taking_the_named_person_out_of_the_query_vector_moves_it_away_from_the_name(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = default_embedder()
    hop = memory.archive.recall.links
    ids = _ids(memory, "a", len(FIRST)) + _ids(memory, "b", len(SECOND))
    pool = (np.array(ids, np.int64), np.zeros((len(ids), embedder.dim), np.float32))
    vector = embedder.embed_query(QUESTION)
    assert hop.without_names(QUESTION, vector, pool, embedder) is vector  # off in the app
    monkeypatch.setattr(links, "NAME_WEIGHT", 0.4)
    name = embedder.embed_query("Caroline")
    moved = hop.without_names(QUESTION, vector, pool, embedder)
    assert float(moved @ name) < float(vector @ name) - 0.1
    assert abs(float(np.linalg.norm(moved)) - 1.0) < 1e-4
    unnamed = embedder.embed_query("Where did they move from?")
    assert hop.without_names("Where did they move from?", unnamed, pool, embedder) is unnamed


def _pool(memory: MemoryStore) -> tuple[np.ndarray, np.ndarray]:
    """Every turn with its e5 passage vector: the vector candidates of a search of this small archive."""
    ids = _ids(memory, "a", len(FIRST)) + _ids(memory, "b", len(SECOND))
    texts = [memory.archive.get(i)["text"] for i in ids]  # type: ignore[index]
    return np.array(ids, np.int64), default_embedder().embed_passages(texts)


def test_feedback_seeds_from_distinct_conversations_take_one_hit_of_each(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    best = [_id(memory, s) for s in ("a2", "a3", "a1", "b1", "b0")]
    hop = memory.archive.recall.links
    assert hop.seeds(best, 2) == best[:2]  # off: the two best hits
    monkeypatch.setattr(links, "SEED_SESSIONS", True)
    assert hop.seeds(best, 2) == [_id(memory, "a2"), _id(memory, "b1")]


def test_the_named_persons_ranking_holds_only_their_turns_and_cross_feedback_only_other_conversations(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = _pool(memory)
    vector = default_embedder().embed_query(QUESTION)
    fused = {_id(memory, "a2"): 1.0}
    hop = memory.archive.recall.links
    monkeypatch.setattr(links, "NAMED_WEIGHT", 0.5)
    [(named, share)] = hop.rankings(QUESTION, fused, pool, vector, "", [])
    speakers = {memory.archive.get(i)["speaker"] for i in named}  # type: ignore[index]
    assert speakers == {"Caroline"} and len(named) == 6 and set(share.values()) == {0.5}
    monkeypatch.setattr(links, "NAMED_WEIGHT", 0.0)
    monkeypatch.setattr(links, "CROSS_WEIGHT", 0.5)
    monkeypatch.setattr(links, "CROSS_SEEDS", 1)
    [(far, _)] = hop.rankings(QUESTION, fused, pool, vector, "", [])
    found = [memory.archive.get(i)["source_id"] for i in far]  # type: ignore[index]
    assert sorted(found) == [f"b{k}" for k in range(len(SECOND))], found
