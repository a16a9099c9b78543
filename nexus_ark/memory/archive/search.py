"""The archive's search: the vector ranking and the two keyword rankings fused by reciprocal rank, then
nudged by importance and recency."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

import numpy as np
import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, stored_time
from nexus_ark.memory.archive.keywords import CANDIDATES, KeywordRanking, porter_terms, trigram_terms
from nexus_ark.memory.archive.mirror import pack_bits
from nexus_ark.memory.archive.vectors import ArchiveVectors, clip_for_embedding, vectors_from_bytes
from nexus_ark.memory.archive.written_units import WrittenUnits
from nexus_ark.providers.embedders import Embedder

SearchMode = Literal["hybrid", "fts", "vector"]
RRF_K = 20
# Items read by the Hamming scan and re-scored with their float vectors: by the query, and by the query
# moved towards its best hits (below; 500 holds what a second scan of its own found: docs/benchmarks.md).
VECTOR_CANDIDATES = 500
# Importance, recency and the speaker and date a question names change a fused score by a small factor
# (at most ~2.2), so only the best few dozen by fused score can end in the top k: only those rows are read.
RANK_POOL = 50
IMPORTANCE_WEIGHT, RECENCY_WEIGHT, RECENCY_HALF_LIFE_DAYS = 0.2, 0.1, 30.0
# A question that names someone is most often about what that person said: a hit whose speaker is named in
# the query (as a whole word) weighs this much more. On LoCoMo dev (docs/benchmarks.md, "Memory recall on
# LoCoMo") single-hop recall@1 0.39 -> 0.49; @10 about unchanged by it alone.
SPEAKER_BOOST = 0.1
# Pseudo-relevance feedback: the query vector moved towards the vectors of the best FEEDBACK_HITS hits of
# the first fusion (by FEEDBACK_WEIGHT of their mean) finds what else was said about the same thing, often
# in other sessions (multi-hop evidence), and is fused as one more ranking (of the same Hamming candidates:
# a scan of its own cost 10 ms at 100k items and found no more). Chosen by both folds of the
# cross-validation over 2, 3 and 5 hits and weights 0.3, 0.5 and 1.0. 0 turns it off.
FEEDBACK_HITS = 2
FEEDBACK_WEIGHT = 0.3
# A question naming a date ("on October 13, 2023", "in June", "10月13日") is about what was said then: hits
# written on that date (to the precision named) weigh this much more. On LoCoMo dev it moved conv-26's
# dated questions (+0.010 recall@10) and changed none of conv-30's (docs/benchmarks.md).
DATE_BOOST = 0.5
_VERB_MONTHS = {"may", "march"}
_MONTH_NAMES = "january february march april may june july august september october november december"
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), 1)}
_EN_DATE = re.compile(
    r"(?:\b(\d{1,2})(?:st|nd|rd|th)?\s+)?\b(" + "|".join(_MONTHS) + r")\b(?:\s+(\d{1,2})(?:st|nd|rd|th)?\b)?"
    r"(?:,?\s+(\d{4}))?",
    re.IGNORECASE,
)
_JA_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(?:(\d{1,2})日)?")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_CJK_NAME = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


class SearchHit(BaseModel):
    item_id: int
    source_id: str | None
    kind: str
    text: str
    score: float
    timestamp: str
    speaker: str | None = None


def _fuse(rankings: list[tuple[list[int], dict[int, float]]]) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranking, share in rankings:
        for rank, item_id in enumerate(ranking):
            fused[item_id] = fused.get(item_id, 0.0) + share.get(item_id, 1.0) / (RRF_K + rank + 1)
    return fused


def _names(query: str, speaker: str) -> bool:
    """Whether the query names the speaker: as a whole word ("Melanie" in "What did Melanie paint?", not
    "Mel" in "melody"), or, for a name written in CJK (no spaces between words), anywhere in it."""
    name = speaker.strip().casefold()
    if not name:
        return False
    if _CJK_NAME.search(name):
        return name in query.casefold()
    return re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", query.casefold()) is not None


def _nearest(pool: tuple[np.ndarray, np.ndarray], vector: np.ndarray) -> list[int]:
    """The pool's best CANDIDATES by the float vectors' dot product with `vector`, best first."""
    ids, matrix = pool
    order = np.argsort(-(matrix @ np.asarray(vector, np.float32)))[:CANDIDATES]
    return [int(i) for i in ids[order]]


def _query_dates(query: str) -> list[tuple[int | None, int, int | None]]:
    """The dates a question names, as (year or None, month, day or None): "October 13, 2023", "13 October",
    "in June", "2023年10月13日", "10月", "2023-10-13"."""
    found: list[tuple[int | None, int, int | None]] = []
    for m in _EN_DATE.finditer(query):
        day = m.group(1) or m.group(3)
        if m.group(2).lower() in _VERB_MONTHS and not (day or m.group(4)):
            continue  # "may I ask", "march on": a month only with a day or a year
        found.append(
            (int(m.group(4)) if m.group(4) else None, _MONTHS[m.group(2).lower()], int(day) if day else None)
        )
    for m in _JA_DATE.finditer(query):
        found.append(
            (
                int(m.group(1)) if m.group(1) else None,
                int(m.group(2)),
                int(m.group(3)) if m.group(3) else None,
            )
        )
    for m in _ISO_DATE.finditer(query):
        found.append((int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None))
    return [d for d in found if 1 <= d[1] <= 12 and (d[2] is None or 1 <= d[2] <= 31)]


def _on(date: datetime | None, named: list[tuple[int | None, int, int | None]]) -> bool:
    return date is not None and any(
        date.month == month and (year is None or date.year == year) and (day is None or date.day == day)
        for year, month, day in named
    )


def _parse_time(value: str) -> datetime | None:
    """A stored time, or None (unparseable, or a year-1 date an older version imported): such an item
    ranks as a year old, and the search goes on."""
    return stored_time(value)


class ArchiveSearch:
    """The archive's recall: the vector ranking (from `vectors`) and the keyword rankings (`keywords`),
    fused."""

    def __init__(
        self, db: sqlite_utils.Database, clock: Clock, vectors: ArchiveVectors, keywords: KeywordRanking
    ) -> None:
        self.db = db
        self.clock = clock
        self.vectors = vectors
        self.keywords = keywords
        self.written = WrittenUnits(db)

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
            pool = self._candidates(embedder, vector, where, params)
            rankings.append((_nearest(pool, vector), {}))
        else:
            vector = None
        if mode in ("hybrid", "fts"):
            # Alone, a keyword ranking is better off with every item it finds at full weight.
            beside_vectors = any(ranking for ranking, _ in rankings)
            for table, terms in (("items_fts", porter_terms(query)), ("items_tri", trigram_terms(query))):
                rankings.append(self.keywords.ranking(table, terms, fts_where, params, beside_vectors))
        fused = _fuse(rankings)
        if FEEDBACK_HITS and mode == "hybrid" and vector is not None and fused:
            top = sorted(fused, key=fused.__getitem__, reverse=True)[:FEEDBACK_HITS]
            found = self._vectors_of(embedder, top, where, params)
            if len(found):
                moved = np.asarray(vector, np.float32) + FEEDBACK_WEIGHT * found.mean(axis=0)
                moved /= np.linalg.norm(moved) or 1.0
                rankings.append((_nearest(pool, moved), {}))
            fused = _fuse(rankings)
        if mode == "hybrid" and fused:  # what dreams wrote among the best hits leads to its turns
            turns = self.written.sources(fused, where, params)
            if turns[0]:
                rankings.append(turns)
                fused = _fuse(rankings)
        if not fused:
            return []
        return self._rank(fused, k, include_archived, query)

    def _vectors_of(
        self, embedder: Embedder | None, ids: list[int], where: str, params: list[Any]
    ) -> np.ndarray:
        """The vectors of these items that the filters keep (an archived item lends the query nothing)."""
        if embedder is None or not ids:
            return np.zeros((0, 0), np.float32)
        rows = self.db.execute(
            f"select e.vector from items i join embeddings e on e.hash = i.embed_hash and e.model = ? "
            f"where i.id in ({','.join('?' * len(ids))}){where}",
            [embedder.model_id, *ids, *params],
        ).fetchall()
        if not rows:
            return np.zeros((0, 0), np.float32)
        return vectors_from_bytes([r[0] for r in rows], embedder.dim)

    def _filters(
        self, kinds: Iterable[str] | None, since: str | None, until: str | None, include_archived: bool
    ) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
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

    def _candidates(
        self, embedder: Embedder | None, vector: np.ndarray, where: str, params: list[Any]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ids and float vectors of the items nearest `vector` by Hamming distance (the filters kept)."""
        none = (np.zeros(0, np.int64), np.zeros((0, len(vector)), np.float32))
        if embedder is None:
            return none
        row = self.db.execute(
            "select vec_table, generation from embedding_models where model = ?", [embedder.model_id]
        ).fetchone()
        if row is None:
            return none
        table = row[0]
        vector = np.asarray(vector, dtype=np.float32)
        # Over-fetch when filters will drop some candidates.
        want = VECTOR_CANDIDATES * (4 if params else 1)
        candidates = self.vectors.nearest(table, pack_bits(vector, self.vectors.center(table)), want)
        if not candidates:
            return none
        rows = self.db.execute(
            f"select i.id, e.vector from items i join embeddings e on e.hash = i.embed_hash and e.model = ? "
            f"where i.id in ({','.join('?' * len(candidates))}){where}",
            [embedder.model_id, *candidates, *params],
        ).fetchall()
        if not rows:
            return none
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        return ids, vectors_from_bytes([r[1] for r in rows], len(vector))  # float32, from float16

    def _rank(
        self, fused: dict[int, float], k: int, include_archived: bool, query: str = ""
    ) -> list[SearchHit]:
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
        named = {h.speaker for h in hits if h.speaker and _names(query, h.speaker)}
        dates = _query_dates(query) if DATE_BOOST else []
        for h in hits:
            if dates and _on(_parse_time(h.timestamp), dates):
                h.score *= 1 + DATE_BOOST
        for h in hits:
            if h.speaker in named:
                h.score *= 1 + SPEAKER_BOOST
        hits.sort(key=lambda h: -h.score)
        return hits[:k]
