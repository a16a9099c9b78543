"""The embeddings table's layout (issue 23, defect 13): a float32 vector of the real e5 model (1,536 bytes)
sat in a WITHOUT ROWID row that spilled into a 4 KB overflow page of its own (4.6 KB a vector on disk).
Migration m015 rebuilds it as a rowid table whose leaf pages hold the vectors; a database from before keeps
every vector (byte for byte through m015; m019 then keeps each as the float16 it rounds to, 768 bytes) and
recall answers as it did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import nexus_ark.memory.archive.vectors as archive_vectors
from nexus_ark.memory.archive import Archive
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.db import connect
from nexus_ark.memory.migrations import migrations
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

SAID = [
    "My sister Hana moved to Osaka for a job at a bakery.",
    "The cat threw up again this morning, third time this week.",
    "I started learning the cello in September.",
    "We hiked up Mount Takao on Sunday and it rained the whole way.",
    "My manager asked me to lead the new payments project.",
    "猫のミソが最近よく寝ています。",
    "週末に友達と京都へ紅葉を見に行きました。",
    "I keep forgetting to water the basil on the balcony.",
] * 6  # the same texts again: vectors are shared by content hash
QUERIES = ["Where did Hana move?", "Is the cat sick?", "ミソは元気?", "What instrument am I learning?"]


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


def _turns() -> list[Turn]:
    return [
        Turn(
            speaker="Mika",
            text=f"{text} ({i // 8})",
            created_at=f"2026-01-{1 + i // 8:02d}T10:{i % 60:02d}:00",
            source_id=f"t{i}",
        )
        for i, text in enumerate(SAID)
    ]


def _overflow_pages(store: MemoryStore) -> int:
    return store.db.execute(
        "select count(*) from dbstat where name = 'embeddings' and pagetype = 'overflow'"
    ).fetchone()[0]


def test_an_old_database_upgraded_keeps_every_vector_and_recall_answers_the_same(
    tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.db"
    db = connect(path)
    migrations.apply(db, stop_before="m015_embeddings_in_leaf_pages")  # the schema as it shipped before
    archive = Archive(db)  # filled through the archive, as the app did (float32 vectors then)
    with monkeypatch.context() as then:
        then.setattr(archive_vectors, "vector_bytes", lambda v: np.asarray(v, dtype=np.float32).tobytes())
        index_turns(archive, _turns())
        archive.embed_pending(embedder)
    vectors = sorted(db.execute("select hash, model, vector from embeddings").fetchall())
    before = {q: [h.item_id for h in archive.search(q, embedder, k=10)] for q in QUERIES}
    assert len(vectors) >= 8 and len(vectors[0][2]) == 4 * embedder.dim
    db.conn.close()

    store = MemoryStore(path)  # migrates to this version
    try:
        after = sorted(store.db.execute("select hash, model, vector from embeddings").fetchall())
        as_float16 = [(h, m, np.frombuffer(v, dtype="<f4").astype("<f2").tobytes()) for h, m, v in vectors]
        assert after == as_float16, "a vector was lost or changed by the upgrade"
        assert {q: [h.item_id for h in store.archive.search(q, embedder, k=10)] for q in QUERIES} == before
        assert _overflow_pages(store) == 0
        # The unique key still holds: a text embedded again is not stored twice.
        index_turns(
            store.archive,
            [
                Turn(
                    speaker="Mika", text=SAID[0] + " (0)", created_at="2026-02-01T10:00:00", source_id="again"
                )
            ],
        )
        store.archive.embed_pending(embedder)
        assert store.db.execute("select count(*) from embeddings").fetchone()[0] == len(vectors)
        assert store.db.execute("pragma integrity_check").fetchone()[0] == "ok"
    finally:
        store.close()


def test_a_vector_takes_about_1_2_kilobytes_on_disk_not_four_and_a_half(tmp_path: Path, embedder) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    try:
        index_turns(
            store.archive,
            [
                Turn(speaker="Mika", text=f"note number {i}", created_at="2026-02-01T10:00:00")
                for i in range(200)
            ],
        )
        store.archive.embed_pending(embedder)
        count = store.db.execute("select count(*) from embeddings").fetchone()[0]
        on_disk = store.db.execute(
            "select sum(pgsize) from dbstat where name in ('embeddings', 'embeddings_key')"
        ).fetchone()[0]
        assert count == 200
        assert _overflow_pages(store) == 0
        assert on_disk / count < 1_300, f"{on_disk / count:.0f} bytes a vector"  # float16: 1,188
    finally:
        store.close()
