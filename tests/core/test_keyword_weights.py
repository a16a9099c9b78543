"""Keyword recall weighs terms and leaves none out (issue 23, defect 17), on real SQLite FTS5: a name in most
items still counts, irregular verb forms are found, and in a large archive a frequent term weighs on the
items the other terms found instead of being read in full. Keyword-only search (no embedder), so each
assertion is about the keyword ranking itself; tests/integration/test_recall_dominant_name.py runs the
hybrid search with the real e5 model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.memory.archive import NewItem, porter_terms
from nexus_ark.memory.archive import keywords as archive_keywords
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.terms import forms, idf

MISO = [
    "Miso slept on the sofa all afternoon.",
    "Miso chased a fly around the kitchen.",
    "I bought Miso a new scratching post.",
    "Miso sat in the window watching birds.",
    "Miso knocked a glass off the table.",
    "Miso ignored her new toy completely.",
    "Miso was purring on my lap tonight.",
    "Miso hid under the bed during the storm.",
    "Miso ate her whole breakfast.",
    "Miso meowed at the door at dawn.",
    "Miso saw the vet today and she is healthy, a clean bill.",
    "Miso threw up again this morning.",
]
OTHERS = [
    "The vet clinic sent a bill.",  # shares "vet" and "bill" with a Miso item, and is shorter
    "We cooked pasta with basil for dinner.",
    "The train was late again.",
    "I finished the puzzle at last.",
    "It rained all weekend.",
    "Tom was throwing the ball for the neighbour's dog.",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    memory = MemoryStore(tmp_path / "memory.db")
    for n, text in enumerate(MISO + OTHERS):
        memory.archive.add(NewItem(kind="message", text=text, source_id=f"t{n}"))
    yield memory
    memory.close()


def search(store: MemoryStore, query: str) -> list[str]:
    return [h.text for h in store.archive.search(query, None, k=5, mode="fts")]


def test_a_name_in_most_items_still_counts_toward_the_items_holding_it(store: MemoryStore) -> None:
    """The name "miso" is in 12 of 18 items: FTS5's bm25 gives it an IDF of 1e-6 (past half of the rows),
    and the shorter vet item without Miso came first."""
    assert idf(12, 18) > 0.3
    assert search(store, "Did Miso see the vet about her bill?")[0] == MISO[10]


def test_throwing_finds_threw_and_the_name_picks_whose(store: MemoryStore) -> None:
    assert {"throw", "threw", "thrown"} <= set(forms("throwing"))
    assert {"threw", "thrown"} <= set(porter_terms("Did Miso keep throwing up?"))
    assert search(store, "Did Miso keep throwing up?")[0] == MISO[11]


def test_in_a_large_archive_a_common_name_weighs_on_what_the_other_words_found(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past COMMON_TERM_FLOOR items (2,000 in a real archive; 3 here) a term's items are not all read: it
    weighs on the items the other terms found, and a query of such terms only is answered by the rarest."""
    monkeypatch.setattr(archive_keywords, "COMMON_TERM_FLOOR", 3)
    monkeypatch.setattr(archive_keywords, "COMMON_TERM_SHARE", 0.0)
    assert search(store, "Did Miso see the vet about her bill?")[0] == MISO[10]
    only_common = search(store, "Miso")
    assert only_common and all("Miso" in text for text in only_common)
