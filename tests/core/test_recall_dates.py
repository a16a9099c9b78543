"""A question that names a date finds what was said on that date first (archive.search DATE_BOOST), in
English and Japanese; a "May I ask" is not a date. Real SQLite FTS5; keyword search (no embedder), so
which turn matches the words better is plain: the turn of another day says "cooked pasta" in fewer
words and comes first unless the date counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.memory.archive import NewItem
from nexus_ark.memory.store import MemoryStore


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryStore]:
    store = MemoryStore(tmp_path / "memory.db")
    said = [
        ("a", "Mika: We cooked pasta.", "2023-11-02T19:00:00"),
        (
            "b",
            "Mika: We cooked pasta and a big pot of soup with the kids and two friends.",
            "2023-10-13T19:00:00",
        ),
        ("c", "ミキ: パスタを作った。", "2023-11-02T19:00:00"),
        ("d", "ミキ: 子どもたちと友だちとパスタと大きな鍋のスープを作った。", "2023-10-13T19:00:00"),
        (
            "e",
            "Mika: We cooked pasta and a big pot of soup with the kids and two friends.",
            "2023-05-06T19:00:00",
        ),
    ]
    for source_id, text, at in said:
        store.archive.add(
            NewItem(kind="message", text=text, source_id=source_id, speaker="Mika", created_at=at)
        )
    yield store
    store.close()


def _first(memory: MemoryStore, query: str) -> str | None:
    return memory.archive.search(query, None, k=1, mode="fts")[0].source_id


@pytest.mark.parametrize(
    ("query", "turn"),
    [
        ("What did we cook on October 13, 2023?", "b"),
        ("What did we cook on 13 October?", "b"),
        ("What did we cook in October 2023?", "b"),
        ("2023年10月13日に何を作った？", "d"),
    ],
)
def test_a_question_naming_a_date_finds_that_days_turn_first(
    memory: MemoryStore, query: str, turn: str
) -> None:
    assert _first(memory, query) == turn


def test_may_as_a_verb_is_not_a_date(memory: MemoryStore) -> None:
    # "May" alone is a verb far more often than a month: the turn from May 6 gains nothing from it.
    assert _first(memory, "May I ask what we cooked pasta with?") == "a"
