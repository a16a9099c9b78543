"""The archive recall searches: every message, episode, entity, insight, goal and knowledge chunk as an
item, indexed three ways and fused.

- FTS5 with the porter/unicode61 tokenizer (English and other spaced languages), bm25 ranked;
- FTS5 with the trigram tokenizer: Japanese is written without spaces, so keyword recall matches
  character 3-grams of the query;
- binary-quantized embeddings kept in sqlite-vec (vec0, bit[dim]); the nearest candidates by Hamming
  distance are re-scored with the float vectors. Bits are the signs of (vector - the model's mean
  vector): e5 vectors share a large common direction, and raw signs kept only 81-86 % of the true top 10
  among 150 candidates on LoCoMo, centred signs 98-99 %. The Hamming scan itself runs on an in-memory copy of
  the bits (48 bytes an item: 14 MB at 300k), measured 10x faster than vec0's own scan at 100k items
  (docs/benchmarks.md).

The three rankings are fused by reciprocal rank (k = 20); the query vector moved towards the two best
hits' vectors is searched again and fused as a fourth (pseudo-relevance feedback: what else was said
about the same thing, often in another session); then hits are nudged by importance and recency
(Generative Agents style) and by whether the question names their speaker or the date they were said
(archive/search.py).
The keyword rankings weigh every query term by how rare it is in the archive
(memory/terms.py; "threw" is searched for "throwing") and leave none out; beside the vector ranking, an
item found only by terms that say little (words most items contain, hiragana-only trigrams) counts for
less in the fusion, so such terms cannot rank noise above the vector ranking's finds. A message
is indexed with its neighbouring turns as low-weight context and embedded together with the turn before it:
answers often sit next to the turn that names the topic (measured on LoCoMo in docs/benchmarks.md).
Nothing is ever truncated: old items stay searchable; only what is embedded is cut to what the embedder
reads (EMBED_CHARS).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, overload

import numpy as np
import sqlite_utils

from nexus_ark.clock import Clock, SystemClock
from nexus_ark.memory.archive.items import CONTEXT_WINDOW_S, ArchiveItems, NewItem, content_hash
from nexus_ark.memory.archive.keywords import KeywordRanking, porter_terms, trigram_terms
from nexus_ark.memory.archive.mirror import pack_bits
from nexus_ark.memory.archive.search import ArchiveSearch, SearchHit, SearchMode
from nexus_ark.memory.archive.vectors import (
    EMBED_CHARS,
    ArchiveVectors,
    clip_for_embedding,
    prune_vector_log,
)
from nexus_ark.providers.embedders import Embedder

# What the rest of Nexus Ark imports from here. Tuning constants stay in their modules (a test that
# changes one patches e.g. archive.keywords, where it is read).
__all__ = [
    "CONTEXT_WINDOW_S",
    "EMBED_CHARS",
    "Archive",
    "NewItem",
    "SearchHit",
    "SearchMode",
    "clip_for_embedding",
    "content_hash",
    "pack_bits",
    "porter_terms",
    "prune_vector_log",
    "trigram_terms",
]


class Archive:
    """One persona's archive, made of parts with their own state: `items` (the rows), `vectors` (the
    indexes per embedding model and their mirrors), `keywords` (the two full-text rankings) and `recall`
    (the fused search). The methods here are what the rest of Nexus Ark calls; each hands on to its part."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()
        self.vectors = ArchiveVectors(db)
        self.items = ArchiveItems(db, self.clock, self.vectors)
        self.keywords = KeywordRanking(db)
        self.recall = ArchiveSearch(db, self.clock, self.vectors, self.keywords)

    # -- items -------------------------------------------------------------------------------------
    def add(self, item: NewItem, *, context: str = "", embed_text: str | None = None) -> int:
        return self.items.add(item, context=context, embed_text=embed_text)

    def add_many(self, rows: Sequence[tuple[NewItem, str, str | None]]) -> list[int]:
        return self.items.add_many(rows)

    def update_text(self, item_id: int, text: str) -> None:
        self.items.update_text(item_id, text)

    def set_context(self, item_id: int, context: str) -> None:
        self.items.set_context(item_id, context)

    def set_embed_text(self, item_id: int, embed_text: str | None) -> None:
        self.items.set_embed_text(item_id, embed_text)

    def archive(self, item_id: int, reason: str) -> None:
        self.items.archive(item_id, reason)

    def restore(self, item_id: int) -> None:
        self.items.restore(item_id)

    def delete_items(self, item_ids: Sequence[int]) -> None:
        self.items.delete_items(item_ids)

    def get(self, item_id: int) -> dict[str, Any] | None:
        return self.items.get(item_id)

    def count(self, kind: str | None = None) -> int:
        return self.items.count(kind)

    def ids_of_source(self, source_id: str) -> list[int]:
        return self.items.ids_of_source(source_id)

    def written_since(self, since: str, kinds: Sequence[str]) -> list[int]:
        return self.items.written_since(since, kinds)

    def newest_ids(self, kind: str, created_since: str, limit: int) -> list[int]:
        return self.items.newest_ids(kind, created_since, limit)

    # -- vectors -----------------------------------------------------------------------------------
    def drop_vectors(self, item_ids: Sequence[int]) -> None:
        self.vectors.drop_vectors(item_ids)

    @overload
    def vec_table(self, embedder: Embedder) -> str: ...
    @overload
    def vec_table(self, embedder: Embedder, create: bool) -> str | None: ...
    def vec_table(self, embedder: Embedder, create: bool = True) -> str | None:
        return self.vectors.vec_table(embedder, create)

    def pending_vectors(self, embedder: Embedder) -> int:
        return self.vectors.pending_vectors(embedder)

    def embed_pending(
        self,
        embedder: Embedder,
        *,
        batch: int = 64,
        cancel: threading.Event | None = None,
        progress: Callable[[int, int], None] | None = None,
        limit: int | None = None,
        only: Sequence[int] | None = None,
    ) -> int:
        """ArchiveVectors.embed_pending: every item given a vector, resumably; how many this call stored."""
        return self.vectors.embed_pending(
            embedder, batch=batch, cancel=cancel, progress=progress, limit=limit, only=only
        )

    # -- recall ------------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        embedder: Embedder | None = None,
        *,
        k: int = 10,
        kinds: Iterable[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        include_archived: bool = False,
        mode: SearchMode = "hybrid",
        query_vector: np.ndarray | None = None,
    ) -> list[SearchHit]:
        """ArchiveSearch.search: the vector and keyword rankings fused, nudged by importance and recency."""
        return self.recall.search(
            query,
            embedder,
            k=k,
            kinds=kinds,
            since=since,
            until=until,
            include_archived=include_archived,
            mode=mode,
            query_vector=query_vector,
        )
