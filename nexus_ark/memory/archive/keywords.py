"""The archive's keyword rankings: a query's terms (porter words with their irregular forms, CJK
trigrams) and the items holding them, each term weighed by how rare it is in the archive (memory/terms.py)."""

from __future__ import annotations

import re
from typing import Any

import sqlite_utils

from nexus_ark.memory.archive.vectors import EMBED_CHARS
from nexus_ark.memory.terms import forms, fts5_idf, idf

# Each ranking (keywords here, the vector ranking in archive.search) gives the fusion this many items.
CANDIDATES = 100
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
# A search reads at most this much of its query, and ranks by at most this many words per index:
# a pasted 100 kB text must not become 100,000 keyword lookups.
QUERY_CHARS = EMBED_CHARS
MAX_QUERY_TERMS = 48

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


class KeywordRanking:
    """The archive's keyword rankings over items_fts (porter) and items_tri (trigram)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def ranking(
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
