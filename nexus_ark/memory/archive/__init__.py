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

The three rankings are fused by reciprocal rank (k = 20), then nudged by importance and recency
(Generative Agents style). The keyword rankings weigh every query term by how rare it is in the archive
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

import sqlite_utils

from nexus_ark.clock import Clock, SystemClock
from nexus_ark.memory.archive.items import CONTEXT_WINDOW_S, ArchiveItems, NewItem, content_hash
from nexus_ark.memory.archive.keywords import KeywordRanking, porter_terms, trigram_terms
from nexus_ark.memory.archive.mirror import BitMirror, pack_bits
from nexus_ark.memory.archive.search import ArchiveSearch, SearchHit, SearchMode
from nexus_ark.memory.archive.vectors import (
    EMBED_CHARS,
    ArchiveVectors,
    clip_for_embedding,
    prune_vector_log,
)

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


class Archive(ArchiveItems, ArchiveVectors, KeywordRanking, ArchiveSearch):
    """One persona's archive: items (archive.items), their vectors (archive.vectors), keyword rankings
    (archive.keywords) and the fused search (archive.search)."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()
        self._vec_lock = threading.Lock()
        self._mirror_lock = threading.Lock()  # the mirrors are shared by the threads using this archive
        self._mirrors: dict[str, BitMirror] = {}
