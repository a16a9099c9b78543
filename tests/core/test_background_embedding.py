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
        assert app.import_chatgpt_export("aria", EXPORT).imported == 9
        assert lingering.wait(120)
        later = app.import_chatgpt_export("aria", MALFORMED)  # its good conversations, while that finishes
        assert later.imported > 0
        go_on.set()
        embedder = app.embedder()
        reader = app.open_memory("aria", read_only=True)
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
