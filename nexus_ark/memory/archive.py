"""The archive recall searches: every message, episode, entity, insight, goal and knowledge chunk as an
item, indexed three ways and fused.

- FTS5 with the porter/unicode61 tokenizer (English and other spaced languages), bm25 ranked;
- FTS5 with the trigram tokenizer: Japanese is written without spaces, so keyword recall matches
  character 3-grams of the query;
- sqlite-vec KNN over binary-quantized embeddings (fast at 100k+ items), re-scored with the float vectors.

The three rankings are fused by reciprocal rank (k = 20), then nudged by importance and recency
(Generative Agents style). A message is indexed with its neighbouring turns as low-weight context and
embedded together with the turn before it: answers often sit next to the turn that names the topic
(measured on LoCoMo in docs/benchmarks.md). Nothing is ever truncated: old items stay searchable.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

import numpy as np
import sqlite_utils
from pydantic import BaseModel, Field

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.providers.embedders import Embedder

SearchMode = Literal["hybrid", "fts", "vector"]
RRF_K = 20
CANDIDATES = 100
VECTOR_CANDIDATES = 400
TEXT_WEIGHT, CONTEXT_WEIGHT = 2.0, 1.0
IMPORTANCE_WEIGHT, RECENCY_WEIGHT, RECENCY_HALF_LIFE_DAYS = 0.2, 0.1, 30.0
# Neighbouring messages belong to one exchange when they are this close in time.
CONTEXT_WINDOW_S = 6 * 3600

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
        "any",
        "some",
    ]
)
_LATIN = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]+")


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


def porter_query(query: str) -> str | None:
    words = [w.lower() for w in _LATIN.findall(query) if not _CJK.fullmatch(w)]
    terms = [w for w in words if w not in _STOPWORDS and len(w) > 1]
    return " OR ".join(_quote(t) for t in dict.fromkeys(terms)) or None


def trigram_query(query: str) -> str | None:
    """Latin words of 3+ letters, and every character 3-gram of each CJK run."""
    terms: list[str] = []
    for run in _CJK.findall(query):
        terms.extend(run[i : i + 3] for i in range(len(run) - 2))
    latin = _CJK.sub(" ", query)
    terms.extend(w.lower() for w in _LATIN.findall(latin) if len(w) >= 3 and w.lower() not in _STOPWORDS)
    return " OR ".join(_quote(t) for t in dict.fromkeys(terms)) or None


def _parse_time(value: str) -> datetime | None:
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.astimezone()


class Archive:
    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()
        self._vec_lock = threading.Lock()

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

    def set_context(self, item_id: int, context: str) -> None:
        with self.db.atomic():
            self.db.execute("update items set context = ? where id = ?", [context, item_id])

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
        tables = [r[0] for r in self.db.execute("select vec_table from embedding_models")]
        with self.db.atomic():
            for table in tables:
                self.db.execute(f"delete from {table} where item_id in ({marks})", list(item_ids))
            self.db.execute(f"delete from items where id in ({marks})", list(item_ids))

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
                "select vec_table, dim from embedding_models where model = ?", [embedder.model_id]
            ).fetchone()
            if row:
                return row[0]
            if not create:
                return None
            n = self.db.execute("select count(*) from embedding_models").fetchone()[0]
            table = f"vec_{n + 1}"
            with self.db.atomic():
                self.db.execute(
                    f"create virtual table {table} using vec0(item_id integer primary key, "
                    f"embedding bit[{embedder.dim}])"
                )
                self.db.execute(
                    "insert into embedding_models (model, dim, vec_table) values (?, ?, ?)",
                    [embedder.model_id, embedder.dim, table],
                )
            return table

    def pending_vectors(self, embedder: Embedder) -> int:
        table = self.vec_table(embedder)
        return self.db.execute(
            f"select count(*) from items i where not exists (select 1 from {table} v where v.item_id = i.id)"
        ).fetchone()[0]

    def embed_pending(
        self,
        embedder: Embedder,
        *,
        batch: int = 64,
        cancel: threading.Event | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Give every item a vector from `embedder`. Resumable: each batch commits, and texts already
        embedded by this model (same content hash) are reused, never embedded again."""
        table = self.vec_table(embedder)
        total = self.pending_vectors(embedder)
        done = 0
        while not (cancel is not None and cancel.is_set()):
            rows = self.db.execute(
                f"select i.id, coalesce(i.embed_text, i.text), i.embed_hash from items i "
                f"where not exists (select 1 from {table} v where v.item_id = i.id) order by i.id limit ?",
                [batch],
            ).fetchall()
            if not rows:
                break
            self._store_vectors(embedder, table, rows)
            done += len(rows)
            if progress is not None:
                progress(done, total)
        return done

    def _store_vectors(self, embedder: Embedder, table: str, rows: list[tuple[int, str, str]]) -> None:
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
        fresh = embedder.embed_passages([t for _, t in missing]) if missing else np.zeros((0, embedder.dim))
        with self.db.atomic():
            for (h, _), vector in zip(missing, fresh, strict=True):
                blob = np.asarray(vector, dtype=np.float32).tobytes()
                known[h] = blob
                self.db.execute(
                    "insert or ignore into embeddings (hash, model, vector) values (?, ?, ?)",
                    [h, embedder.model_id, blob],
                )
            for item_id, _, h in rows:
                self.db.execute(
                    f"insert or replace into {table} (item_id, embedding) values (?, vec_quantize_binary(?))",
                    [item_id, known[h]],
                )

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
        rankings: list[list[int]] = []
        if mode in ("hybrid", "fts"):
            for table, expr in (("items_fts", porter_query(query)), ("items_tri", trigram_query(query))):
                if expr:
                    rankings.append(self._fts(table, expr, where, params))
        if mode in ("hybrid", "vector") and (embedder is not None or query_vector is not None):
            vector = query_vector if query_vector is not None else embedder.embed_query(query)  # type: ignore[union-attr]
            rankings.append(self._knn(embedder, vector, where, params))
        fused: dict[int, float] = {}
        for ranking in rankings:
            for rank, item_id in enumerate(ranking):
                fused[item_id] = fused.get(item_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        if not fused:
            return []
        return self._rank(fused, k)

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

    def _fts(self, table: str, expr: str, where: str, params: list[Any]) -> list[int]:
        sql = (
            f"select f.rowid from {table} f join items i on i.id = f.rowid where {table} match ?{where} "
            f"order by bm25({table}, {TEXT_WEIGHT}, {CONTEXT_WEIGHT}) limit {CANDIDATES}"
        )
        return [r[0] for r in self.db.execute(sql, [expr, *params]).fetchall()]

    def _knn(self, embedder: Embedder | None, vector: np.ndarray, where: str, params: list[Any]) -> list[int]:
        if embedder is None:
            return []
        table = self.vec_table(embedder, create=False)
        if table is None:
            return []
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        # Hamming distance on 1-bit vectors finds candidates fast; float vectors then decide the order.
        rows = self.db.execute(
            f"select v.item_id, e.vector from (select item_id from {table} where embedding match "
            f"vec_quantize_binary(?) and k = {VECTOR_CANDIDATES}) v join items i on i.id = v.item_id "
            f"join embeddings e on e.hash = i.embed_hash and e.model = ?{where}",
            [blob, embedder.model_id, *params],
        ).fetchall()
        if not rows:
            return []
        ids = np.array([r[0] for r in rows])
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        order = np.argsort(-(matrix @ np.asarray(vector, dtype=np.float32)))[:CANDIDATES]
        return [int(i) for i in ids[order]]

    def _rank(self, fused: dict[int, float], k: int) -> list[SearchHit]:
        ids = list(fused)
        rows = self.db.execute(
            f"select id, source_id, kind, text, created_at, importance, speaker from items "
            f"where id in ({','.join('?' * len(ids))})",
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
