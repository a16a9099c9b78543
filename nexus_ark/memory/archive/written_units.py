"""What dreams write leads a search back to the turns it was written from.

An episode, an entity or an insight among the best hits brings the turns its source_ids name ("msg:<id>",
or the id a turn was imported with) into the fusion as one more ranking, so a question that matches the
day's summary also finds what was said. Nothing is stored: a written unit's turns are found from the source
ids it was stored with, so every existing database gets it and import is unchanged.

(Sessions scored as units, and links across conversations, were measured here under cross-validation and
lost or tied: docs/benchmarks.md, "Sessions and dreams' units" and "Links across conversations"; their code
was removed and can be read at commit 3735481.)
"""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

# Written units (what dreams write) among the best LEAD_SEEDS hits lead back to at most LEAD_TURNS of
# their source turns each (those the fusion scored first), at this share of the fusion (0 turns it off).
LEAD_TABLES = {"episode": "episodes", "entity": "entities", "insight": "insights"}
LEAD_SEEDS = 10
LEAD_TURNS = 5
LEAD_WEIGHT = 0.5
LEAD_SOURCES = 200  # an entity named in a thousand turns is read by its first 200


class WrittenUnits:
    """The turns behind the written units among the best hits, as one ranking of the fusion."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

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


def _source_ids(value: str | None) -> list[str]:
    """A stored source_ids column (a JSON list of strings), or [] where it is none."""
    try:
        ids = json.loads(value) if value else []
    except ValueError:
        return []
    return [str(i) for i in ids] if isinstance(ids, list) else []
