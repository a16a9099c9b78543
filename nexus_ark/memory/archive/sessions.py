"""Sessions as retrieval units: the conversation a turn was said in, scored as a whole, lifts its turns.

A question is often answered by a turn that shares few words with it ("What did Melanie do after the
race?" → "we went for ice cream"), said in the same conversation as the turns that do match. A turn alone
is a weak unit; the conversation it sits in says more: several of its turns match the question a little
(its keywords and its vectors together), where a stray turn elsewhere matches it once. So the best turns
of the first fusion are grouped into sessions (the messages of one room said within SESSION_GAP_S of one
another, the way the index groups exchanges: archive/items.py), each session is scored by what its turns
gathered in the fusion and by its own vector (the mean of its turns' vectors, against the query's), and
the turns of the best sessions are fused as one more ranking: the best session's turns first, each
session's in their own order.

What dreams write leads back to the turns it was written from: an episode, an entity or an insight among
the best hits brings the turns its source_ids name ("msg:<id>", or the id a turn was imported with) into
the fusion as one more ranking, so a question that matches the day's summary finds what was said.

Nothing is stored: a session is found from the items' room and time at search time, and a written unit's
turns from the source ids it was stored with, so every existing database gets both and import is
unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import sqlite_utils

from nexus_ark.clock import stored_time
from nexus_ark.memory.archive.items import CONTEXT_WINDOW_S
from nexus_ark.memory.archive.vectors import vectors_from_bytes

# The best turns of the first fusion grouped into sessions (0 turns the ranking off). Off: under
# cross-validation over the LoCoMo dev conversations no setting of it beat the search without it (it gained
# on one conversation and lost on the other: docs/benchmarks.md, "Sessions and dreams' units").
SESSION_POOL = 0
# Turns further apart than this (same room) are two sessions.
SESSION_GAP_S = CONTEXT_WINDOW_S
# The sessions whose turns the ranking gives the fusion, and at most how many turns of each.
SESSION_TOP = 3
SESSION_TURNS = 10
# How a session's turns' fused scores add up to its own: the best SESSION_SUM of them summed.
SESSION_SUM = 3
# The session's own vector (the mean of its turns' vectors) ranks the sessions beside their turns'
# scores (fused by reciprocal rank, SESSION_RRF_K); False: the turns' scores alone.
SESSION_VECTOR = True
SESSION_VECTOR_SESSIONS = 20  # sessions (best by their turns' scores) whose vectors are read
SESSION_MAX_TURNS = 200  # a longer session's vector is the mean of its first 200 turns in the span
SESSION_RRF_K = 5
# The ranking's share of the fusion (each turn's reciprocal rank times this).
SESSION_WEIGHT = 0.5

# Written units (what dreams write) among the best LEAD_SEEDS hits lead back to at most LEAD_TURNS of
# their source turns each (those the fusion scored first), at this share of the fusion (0 turns it off).
LEAD_TABLES = {"episode": "episodes", "entity": "entities", "insight": "insights"}
LEAD_SEEDS = 10
LEAD_TURNS = 5
LEAD_WEIGHT = 0.5
LEAD_SOURCES = 200  # an entity named in a thousand turns is read by its first 200

Session = list[int]  # its candidate turns' ids, best first


class SessionRanking:
    """Sessions scored as units, their turns fused as one more ranking."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def rankings(
        self,
        fused: dict[int, float],
        vector: np.ndarray | None,
        model: tuple[str, int] | None,
        where: str,
        params: list[Any],
    ) -> list[tuple[list[int], dict[int, float]]]:
        """The rankings this module adds to the fusion: the best sessions' turns, and the turns the best
        written units lead back to (each left out when it finds nothing)."""
        out = [self.ranking(fused, vector, model, where, params), self.sources(fused, where, params)]
        return [r for r in out if r[0]]

    def sources(
        self, fused: dict[int, float], where: str, params: list[Any]
    ) -> tuple[list[int], dict[int, float]]:
        """The turns that the written units among the best hits were written from, best unit first; each
        turn's share LEAD_WEIGHT."""
        if not LEAD_SEEDS or not LEAD_WEIGHT or not fused:
            return [], {}
        best = sorted(fused, key=fused.__getitem__, reverse=True)[:LEAD_SEEDS]
        kinds = dict(
            self.db.execute(
                f"select id, kind from items where id in ({','.join('?' * len(best))})", best
            ).fetchall()
        )
        # Their component rows, not the items, hold the source ids: an entity or an episode written again
        # gains sources there (components/written.py). Only the tables of the kinds found are read (they
        # have no index on item_id: a scan, cheap at the hundreds of rows dreams write in a year).
        queries = [
            (f"select item_id, source_ids from {table} where item_id in ({','.join('?' * len(ids))})", ids)
            for kind, table in LEAD_TABLES.items()
            if (ids := [i for i in best if kinds.get(i) == kind])
        ]
        if not queries:
            return [], {}
        rows = self.db.execute(
            " union all ".join(sql for sql, _ in queries), [i for _, ids in queries for i in ids]
        ).fetchall()
        cited = {item_id: _source_ids(value)[:LEAD_SOURCES] for item_id, value in rows}
        ranking: list[int] = []
        for unit in (i for i in best if cited.get(i)):
            turns = [i for i in self._turns(cited[unit], where, params) if i not in ranking]
            turns.sort(key=lambda i: -fused.get(i, 0.0))  # stable: unscored turns keep their order
            ranking.extend(turns[:LEAD_TURNS])
        return ranking, {i: LEAD_WEIGHT for i in ranking}

    def _turns(self, source_ids: list[str], where: str, params: list[Any]) -> list[int]:
        """The message items of these source ids: "msg:<id>" (a message, indexed under that id or under
        the id it was imported with) or an imported turn's own id; in the order cited."""
        numbers = [int(s[4:]) for s in source_ids if s.startswith("msg:") and s[4:].isdigit()]
        imported: dict[int, str] = {}
        if numbers:
            imported = dict(
                self.db.execute(
                    f"select id, source_id from messages where id in ({','.join('?' * len(numbers))}) "
                    "and source_id is not null",
                    numbers,
                ).fetchall()
            )
        keys = [
            imported.get(int(s[4:]), s) if s.startswith("msg:") and s[4:].isdigit() else s for s in source_ids
        ]
        keys = list(dict.fromkeys(keys))
        rows = self.db.execute(
            # "+": found by source_id (items_source), not by kind (every message would be read)
            f"select i.source_id, i.id from items i where +i.kind = 'message' and i.source_id in "
            f"({','.join('?' * len(keys))}){where}",
            [*keys, *params],
        ).fetchall()
        found = dict(rows)
        return [found[k] for k in keys if k in found]

    def ranking(
        self,
        fused: dict[int, float],
        vector: np.ndarray | None,
        model: tuple[str, int] | None,
        where: str,
        params: list[Any],
    ) -> tuple[list[int], dict[int, float]]:
        """The turns of the best sessions, best session first; each turn's share SESSION_WEIGHT.
        `model` is the embedder's (model id, dim) whose stored vectors make the sessions' vectors."""
        if not SESSION_POOL or not SESSION_WEIGHT or not fused:
            return [], {}
        sessions = self._sessions(sorted(fused, key=fused.__getitem__, reverse=True)[:SESSION_POOL])
        if not sessions:
            return [], {}
        gathered = [sum(sorted((fused[i] for i in s), reverse=True)[:SESSION_SUM]) for s, _ in sessions]
        order = sorted(range(len(sessions)), key=lambda n: -gathered[n])
        if SESSION_VECTOR and vector is not None and model is not None:
            near = order[:SESSION_VECTOR_SESSIONS]
            similarity = self._similarity([sessions[n][1] for n in near], vector, model, where, params)
            if similarity is not None:
                by_vector = [near[j] for j in np.argsort(-similarity)]
                score = {n: 1 / (SESSION_RRF_K + r + 1) for r, n in enumerate(near)}
                for r, n in enumerate(by_vector):
                    score[n] += 1 / (SESSION_RRF_K + r + 1)
                order = sorted(near, key=lambda n: -score[n])
        ranking = [i for n in order[:SESSION_TOP] for i in sessions[n][0][:SESSION_TURNS]]
        return ranking, {i: SESSION_WEIGHT for i in ranking}

    def _sessions(self, ids: list[int]) -> list[tuple[Session, tuple[str | None, str, str]]]:
        """The candidates grouped into sessions (messages only), each with (room, first, last time) of its
        candidates; a session's candidates keep the order of `ids`."""
        rows = self.db.execute(
            f"select id, room, created_at from items where kind = 'message' and id in "
            f"({','.join('?' * len(ids))})",
            ids,
        ).fetchall()
        timed = [(room, t, created_at, i) for i, room, created_at in rows if (t := stored_time(created_at))]
        timed.sort(key=lambda r: (r[0] or "", r[1]))
        rank = {i: n for n, i in enumerate(ids)}
        out: list[tuple[Session, tuple[str | None, str, str]]] = []
        members: list[int] = []
        for n, (room, t, _, _) in enumerate(timed):
            if members and (room != timed[n - 1][0] or (t - timed[n - 1][1]).total_seconds() > SESSION_GAP_S):
                out.append(_session(members, timed, rank))
                members = []
            members.append(n)
        if members:
            out.append(_session(members, timed, rank))
        return out

    def _similarity(
        self,
        spans: list[tuple[str | None, str, str]],
        vector: np.ndarray,
        model: tuple[str, int],
        where: str,
        params: list[Any],
    ) -> np.ndarray | None:
        """Each session's mean turn vector (its messages from its first to its last candidate's time)
        against the query vector."""
        model_id, dim = model
        query = np.asarray(vector, np.float32)
        out = []
        for room, first, last in spans:
            blobs = [
                r[0]
                for r in self.db.execute(
                    "select e.vector from items i join embeddings e on e.hash = i.embed_hash "
                    "and e.model = ? where i.kind = 'message' and i.room is ? "
                    f"and i.created_at between ? and ?{where} limit {SESSION_MAX_TURNS}",
                    [model_id, room, first, last, *params],
                ).fetchall()
            ]
            if not blobs:
                return None
            mean = vectors_from_bytes(blobs, dim).mean(axis=0)
            out.append(float(mean @ query) / (float(np.linalg.norm(mean)) or 1.0))
        return np.array(out)


def _session(
    members: list[int], timed: list[Any], rank: dict[int, int]
) -> tuple[Session, tuple[str | None, str, str]]:
    first, last = timed[members[0]], timed[members[-1]]
    ids = sorted((timed[m][3] for m in members), key=rank.__getitem__)
    return ids, (first[0], first[2], last[2])


def _source_ids(value: str | None) -> list[str]:
    """A stored source_ids column (a JSON list of strings), or [] where it is none."""
    try:
        ids = json.loads(value) if value else []
    except ValueError:
        return []
    return [str(i) for i in ids] if isinstance(ids, list) else []
