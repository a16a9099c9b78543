"""Links across conversations, for a question whose facts were said in two or more of them (issue 37,
multi-hop): extra rankings fused beside the first ones, each starting from what the first fusion found.

- the keyword second hop (HOP_SEEDS): the rare words and word pairs of the best hits ("I moved from my
  home country" -> "home country"), with the question's own words, find the turns of OTHER conversations
  holding them ("a gift from my grandma in my home country, Sweden");
- the named person's turns (NAMED_WEIGHT): the vector candidates said by the one speaker the question
  names ("What instruments does Melanie play?" is about Melanie's own turns);
- the best turn of each conversation by that person (SESSION_BEST_WEIGHT): a question that gathers
  ("What has Melanie painted?") has one answer in each of several conversations, while the first fusion
  fills its top 10 with one conversation's turns (each turn is indexed and embedded with its neighbours,
  so the turns around the best hit score nearly as well as it);
- cross-conversation feedback (CROSS_WEIGHT): the query moved towards each best hit ranks the vector
  candidates of the other conversations;
- the named person out of the query vector (NAME_WEIGHT): what is asked, not whom it is about (the
  vector ranking alone finds more of the evidence; fused with the keyword rankings, about nothing changes);
- feedback seeds from distinct conversations (SEED_SESSIONS): archive/search.py's pseudo-relevance
  feedback moves the query towards the best hit of each of the best conversations instead of the best
  hits.

Every one is OFF (0 / False): under two-fold cross-validation over the LoCoMo dev conversations none
chose itself on both folds nor raised the held-out recall (docs/benchmarks.md, "Issue 37, multi-hop:
links across conversations"); they stay measurable as `bench.memory_recall --cv` VARIANTS. Conversations
are told apart by time, so nothing new is stored: turns said within CONTEXT_WINDOW_S of each other are one
exchange (as the index groups them, archive/items.py).
"""

from __future__ import annotations

import re
from datetime import datetime
from itertools import pairwise
from typing import Any

import numpy as np
import sqlite_utils

from nexus_ark.clock import stored_time
from nexus_ark.memory.archive.items import CONTEXT_WINDOW_S
from nexus_ark.memory.archive.keywords import CANDIDATES, KeywordRanking, porter_terms
from nexus_ark.providers.embedders import Embedder

Ranking = tuple[list[int], dict[int, float]]

# Keyword second hop: the best hits it starts from (0: off), the most linking terms taken from each, how
# rare a term must be to link (the share of items holding it), whether word pairs link too, whether the
# question's own words join the linking ones, and the hop's share of the fusion.
HOP_SEEDS = 0
HOP_TERMS = 8
HOP_RARE_SHARE = 0.02
HOP_PAIRS = True
HOP_WITH_QUERY = True
HOP_WEIGHT = 0.5
# The named person's vector candidates, and the best turn of each conversation by that person: their
# shares of the fusion (0: off), and how deep in the first fusion the latter looks.
NAMED_WEIGHT = 0.0
SESSION_BEST_WEIGHT = 0.0
SESSION_BEST_DEPTH = 100
# Cross-conversation feedback: the CROSS_SEEDS best hits, how far the query moves towards each, and each
# ranking's share of the fusion (0: off).
CROSS_SEEDS = 2
CROSS_MOVE = 0.5
CROSS_WEIGHT = 0.0
# Feedback seeds from distinct conversations, looking this many hits deep per seed.
SEED_SESSIONS = False
SEED_LOOK = 5
# The person a question names, taken out of its vector: e5 puts much of a short question's direction on a
# name ("What instruments does Melanie play?"), and every turn spoken by or to Melanie carries her name
# (in its text and its context), so the vector ranking finds her turns about anything. The query vector
# less NAME_WEIGHT times the name's own query vector ranks by what is asked; who is asked about is the
# speaker weight's part (archive/search.py). 0 turns it off.
NAME_WEIGHT = 0.0
NAME_AS_PASSAGE = False
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def names(query: str, speaker: str) -> bool:
    """Whether the query names the speaker: as a whole word ("Melanie" in "What did Melanie paint?", not
    "Mel" in "melody"), or, for a name written in CJK (no spaces between words), anywhere in it."""
    name = speaker.strip().casefold()
    if not name:
        return False
    if _CJK.search(name):
        return name in query.casefold()
    return re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", query.casefold()) is not None


def apart(time: datetime | None, others: list[datetime]) -> bool:
    """Whether a time is of another conversation than every one of `others` (unknown: not apart)."""
    return time is not None and all(abs((time - o).total_seconds()) > CONTEXT_WINDOW_S for o in others)


def _pairs(words: list[str]) -> list[str]:
    """Consecutive terms as phrases ("home country"; stopwords are not terms, so "bag of chips" gives
    "bag chips", which finds nothing: a phrase must be in the text as it is)."""
    return [f"{a} {b}" for a, b in pairwise(words)]


class ConversationLinks:
    """The rankings that link a question's best hits to other conversations (all off unless set)."""

    def __init__(self, db: sqlite_utils.Database, keywords: KeywordRanking) -> None:
        self.db = db
        self.keywords = keywords
        # Names' vectors by (model, name, as passage): a person is named in many questions.
        self.name_vectors: dict[tuple[str, str, bool], np.ndarray] = {}

    def without_names(
        self, query: str, vector: np.ndarray, pool: tuple[np.ndarray, np.ndarray], embedder: Embedder
    ) -> np.ndarray:
        """The query vector less NAME_WEIGHT times the vector of each speaker among the candidates that
        the question names (unit length again); the vector itself when it names none."""
        if not NAME_WEIGHT or not len(pool[0]):
            return vector
        speakers = {s for s in self._rows([int(i) for i in pool[0]], "speaker").values() if s}
        named = sorted(s for s in speakers if names(query, s))
        if not named or len(named) == len(speakers):
            return vector
        moved = np.asarray(vector, np.float32).copy()
        for name in named:
            key = (embedder.model_id, name, NAME_AS_PASSAGE)
            if key not in self.name_vectors:
                made = embedder.embed_passages([name])[0] if NAME_AS_PASSAGE else embedder.embed_query(name)
                self.name_vectors[key] = np.asarray(made, np.float32)
            moved -= NAME_WEIGHT * self.name_vectors[key]
        return moved / (np.linalg.norm(moved) or 1.0)

    def seeds(self, best: list[int], n: int) -> list[int]:
        """The n best hits, or with SEED_SESSIONS the best hit of each of the n best conversations."""
        if not SEED_SESSIONS:
            return best[:n]
        head = best[: n * SEED_LOOK]
        when = self._rows(head, "created_at")
        picked: list[int] = []
        times: list[datetime] = []
        for i in head:
            t = stored_time(when.get(i))
            if t is None or apart(t, times):
                picked.append(i)
                times.extend([t] if t is not None else [])
            if len(picked) == n:
                break
        return picked

    def rankings(
        self,
        query: str,
        fused: dict[int, float],
        pool: tuple[np.ndarray, np.ndarray] | None,
        vector: np.ndarray | None,
        where: str,
        params: list[Any],
    ) -> list[Ranking]:
        """The switched-on rankings, each with its items' shares of the fusion."""
        best = sorted(fused, key=fused.__getitem__, reverse=True)
        out = [self.keyword_hop(query, best, where, params)] if HOP_SEEDS else []
        if not (NAMED_WEIGHT or SESSION_BEST_WEIGHT or CROSS_WEIGHT):
            return out
        speaker = self._rows(best[:SESSION_BEST_DEPTH], "speaker")
        when = {i: stored_time(t) for i, t in self._rows(best[:SESSION_BEST_DEPTH], "created_at").items()}
        if pool is not None and vector is not None and len(pool[0]):
            ids = [int(i) for i in pool[0]]
            speaker.update(self._rows(ids, "speaker"))
            when.update({i: stored_time(t) for i, t in self._rows(ids, "created_at").items()})
        speakers = {s for s in speaker.values() if s}
        named = {s for s in speakers if names(query, s)}
        one = named if len(named) == 1 and len(speakers) > 1 else set()
        if SESSION_BEST_WEIGHT and one:
            firsts: list[int] = []
            taken: list[datetime] = []
            for i in best[:SESSION_BEST_DEPTH]:
                t = when.get(i)
                if speaker.get(i) in one and t is not None and apart(t, taken):
                    firsts.append(i)
                    taken.append(t)
            out.append((firsts, {i: SESSION_BEST_WEIGHT for i in firsts}))
        if pool is None or vector is None or not len(pool[0]):
            return out
        ids_array, matrix = pool
        q = np.asarray(vector, np.float32)
        if NAMED_WEIGHT and one:
            order = [int(ids_array[j]) for j in np.argsort(-(matrix @ q))]
            mine = [i for i in order if speaker.get(i) in one][:CANDIDATES]
            out.append((mine, {i: NAMED_WEIGHT for i in mine}))
        if CROSS_WEIGHT:
            row = {int(i): j for j, i in enumerate(ids_array)}
            for seed in [s for s in best[:CROSS_SEEDS] if s in row]:
                seen = when.get(seed)
                near = [
                    int(ids_array[j]) for j in np.argsort(-(matrix @ (q + CROSS_MOVE * matrix[row[seed]])))
                ]
                far = [i for i in near if seen is None or apart(when.get(i), [seen])][:CANDIDATES]
                out.append((far, {i: CROSS_WEIGHT for i in far}))
        return out

    def keyword_hop(self, query: str, best: list[int], where: str, params: list[Any]) -> Ranking:
        """Items of other conversations than the seeds', best first, holding the seeds' rare terms (and
        the query's); each item's share of the fusion HOP_WEIGHT."""
        seeds = best[:HOP_SEEDS]
        texts = self._rows(seeds, "text")
        when = self._rows(seeds, "created_at")
        asked = porter_terms(query)
        total = self.db.execute("select count(*) from items").fetchone()[0]
        rare = max(2, int(total * HOP_RARE_SHARE))
        terms: list[str] = []
        for seed in seeds:
            words = [w for w in porter_terms(texts.get(seed) or "") if w not in asked]
            counted = [(self._count(t, rare + 1), t) for t in words + (_pairs(words) if HOP_PAIRS else [])]
            terms.extend(t for _, t in sorted(c for c in counted if 1 < c[0] <= rare)[:HOP_TERMS])
        if not terms:
            return [], {}
        if HOP_WITH_QUERY:
            terms.extend(asked)
        ranking, _ = self.keywords.ranking("items_fts", list(dict.fromkeys(terms)), where, params, False)
        times = [t for t in (stored_time(when.get(s)) for s in seeds) if t is not None]
        found = self._rows(ranking, "created_at")
        far = [i for i in ranking if apart(stored_time(found.get(i)), times)]
        return far, {i: HOP_WEIGHT for i in far}

    def _rows(self, ids: list[int], column: str) -> dict[int, Any]:
        """One column of these items, by id."""
        if not ids:
            return {}
        rows = self.db.execute(
            f"select id, {column} from items where id in ({','.join('?' * len(ids))})", ids
        ).fetchall()
        return {int(r[0]): r[1] for r in rows}

    def _count(self, term: str, limit: int) -> int:
        """Items whose own text holds the term (a pair as a phrase; the neighbours that hold it as
        context are the same exchange); counting stops past `limit`."""
        return self.db.execute(
            f"select count(*) from (select rowid from items_fts where items_fts match ? limit {int(limit)})",
            ['text : "' + term.replace('"', '""') + '"'],
        ).fetchone()[0]
