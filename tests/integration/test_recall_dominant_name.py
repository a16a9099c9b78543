"""Recall in a life with one dominant name (issue 23, defect 17): a cat named Miso is in 28 of the 104
messages of tests/data/recall_miso.jsonl. A word that frequent in the archive still says what a question
is about; it must be weighed, never left out. Real SQLite FTS5, sqlite-vec and the bundled e5 embedder,
imported through the same code as `nexus-ark memory import`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.agent.session import RECALL_K
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parent.parent / "data" / "recall_miso.jsonl"
# Miso's messages that say how she is: appetite, sickness, the vet's findings, recovery (15 of her 28).
MISO_HEALTH = {
    "m18",
    "m19",
    "m20",
    "m26",
    "m28",
    "m29",
    "m39",
    "m57",
    "m58",
    "m59",
    "m72",
    "m75",
    "m82",
    "m83",
    "m84",
}
THREW_UP = "m28"  # "Miso threw up again… third time this week. I'm getting worried."


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    store = MemoryStore(tmp_path_factory.mktemp("miso") / "memory.db")
    report = import_jsonl(DATA, on_store(store), {"Aria"})
    assert report.imported == 104 and not report.errors
    store.archive.embed_pending(default_embedder())
    yield store
    store.close()


def test_the_test_persona_talks_about_miso_in_more_than_a_quarter_of_the_items(memory: MemoryStore) -> None:
    texts = [r[0] for r in memory.db.execute("select text from items where kind = 'message'")]
    assert len(texts) == 104 and sum("Miso" in t for t in texts) == 28


def test_how_is_miso_doing_ranks_a_message_about_her_health_first(memory: MemoryStore) -> None:
    hits = memory.archive.search("How is Miso doing?", default_embedder(), k=RECALL_K)
    assert hits[0].source_id in MISO_HEALTH, [h.text for h in hits]


def test_did_miso_keep_throwing_up_recalls_threw_up_again(memory: MemoryStore) -> None:
    """What a turn recalls into the prompt (RECALL_K items) holds the message that answers: "throwing"
    finds "threw" too."""
    hits = memory.archive.search("Did Miso keep throwing up?", default_embedder(), k=RECALL_K)
    assert THREW_UP in [h.source_id for h in hits], [h.text for h in hits]


def test_keyword_recall_alone_finds_the_dominant_name_with_the_rest_of_the_question(
    memory: MemoryStore,
) -> None:
    """Without an embedder (keyword recall only) a message with both the name and the question's other
    words comes first: the name weighs less than a rare word, not nothing."""
    hits = memory.archive.search("Did Miso keep throwing up?", None, k=RECALL_K, mode="fts")
    assert hits[0].source_id == THREW_UP, [h.text for h in hits]
    hits = memory.archive.search("Is Miso eating normally?", None, k=1, mode="fts")
    assert hits[0].source_id == "m57", [h.text for h in hits]
