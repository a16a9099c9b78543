"""How drive_history keeps each point's inputs: a drive's inputs only when they differ from the row before's
(issue 23, defect 13).

The open question curiosity reads or the goal goal_achievement weighs stays the same for days, while boredom's
minutes change at every point; whole rows took ~620 bytes of inputs each, most of them the row before's again.
A drive missing from a row's `inputs` has the inputs of the nearest earlier row (by id) that holds it. The
writer (mind/state.recompute) stores `compact(whole, previous)`; readers (mind/state.history) get every
point whole (`whole`, then `following` along the rows); retention (memory/retention.py), which deletes
rows older than its window, first stores whole what the rows it keeps would otherwise lose (`keep_readable`).
Rows written whole (every row before this) read as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlite_utils

DRIVES = ("boredom", "curiosity", "goal_achievement", "devotion")  # mind.drives.DRIVES, in its order
# drive_daily's statistics columns, a drive's mean, min and max in DRIVES' order
DAY_COLUMNS = tuple(f"{name}_{part}" for name in DRIVES for part in ("mean", "min", "max"))


def dumps(inputs: dict[str, Any]) -> str:
    return json.dumps(inputs, ensure_ascii=False, separators=(",", ":"))


def following(before: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """A row's inputs whole, from the row before's (`before`, whole) and what the row stores."""
    merged = {**before, **stored}
    return {**{n: merged[n] for n in DRIVES if n in merged}, **merged}


def compact(whole: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """What a row stores of `whole`: each drive's inputs unless the row before (`previous`, whole) has the
    same."""
    if previous is None:
        return whole
    return {name: value for name, value in whole.items() if name not in previous or previous[name] != value}


def whole(db: sqlite_utils.Database, row_id: int, stored: dict[str, Any]) -> dict[str, Any]:
    """Row `row_id`'s inputs whole: what it stores (`stored`), and for each drive it leaves out, the nearest
    earlier row's."""
    found = {}
    for name in DRIVES:
        if name in stored:
            continue
        row = db.execute(
            "select inputs -> ('$.' || ?) from drive_history where id < ? "
            "and json_type(inputs, '$.' || ?) is not null order by id desc limit 1",
            [name, row_id, name],
        ).fetchone()
        if row is not None:
            found[name] = json.loads(row[0])
    return following(found, stored)


def whole_from(db: sqlite_utils.Database, first_id: int) -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
    """Row `first_id` and every row after it, by id: (what it stores, its inputs whole)."""
    rows = db.execute("select id, inputs from drive_history where id >= ? order by id", [first_id]).fetchall()
    result: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    state: dict[str, Any] | None = None
    for row_id, text in rows:
        stored = json.loads(text)
        state = whole(db, row_id, stored) if state is None else following(state, stored)
        result[row_id] = (stored, state)
    return result


def keep_readable(db: sqlite_utils.Database, deleted: Iterable[int]) -> int:
    """Before the rows `deleted` go (inside the caller's transaction): a row kept after the first of them
    that would read a drive's inputs from one of them stores its inputs again, compacted against the kept
    row before it. Returns how many rows were rewritten (usually one: the oldest kept)."""
    gone = set(deleted)
    if not gone:
        return 0
    first = min(gone)
    before = db.execute(
        "select id, inputs from drive_history where id < ? order by id desc limit 1", [first]
    ).fetchone()
    kept_before = whole(db, before[0], json.loads(before[1])) if before is not None else {}
    rewritten = 0
    for row_id, (stored, inputs) in whole_from(db, first).items():
        if row_id in gone:
            continue
        if following(kept_before, stored) != inputs:
            now = compact(inputs, kept_before) if kept_before else inputs
            db.execute("update drive_history set inputs = ? where id = ?", [dumps(now), row_id])
            rewritten += 1
        kept_before = inputs
    return rewritten


class DriveHistory:
    """The drive_history rows (one point a recomputation that changed something) and their roll-up by day,
    drive_daily (memory/retention.py writes it). mind/state.py reads and adds points through it."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def last(self) -> tuple[Any, ...] | None:
        """The newest point as stored: (dominant, the four levels in DRIVES' order, its id, its inputs
        as stored: JSON, compacted; `whole` makes them whole)."""
        row = self.db.execute(
            "select dominant, boredom, curiosity, goal_achievement, devotion, id, inputs from drive_history "
            "order by id desc limit 1"
        ).fetchone()
        return tuple(row) if row is not None else None

    def add(
        self,
        time: str,
        trigger: str,
        levels: Iterable[float],
        dominant: str | None,
        narrative: str,
        inputs: str,
    ) -> None:
        """A point; `inputs` as stored (JSON, compacted against the point before: `compact`)."""
        self.db.execute(
            "insert into drive_history (time, trigger, boredom, curiosity, goal_achievement, devotion, "
            "dominant, narrative, inputs) values (?,?,?,?,?,?,?,?,?)",
            [time, trigger, *levels, dominant, narrative, inputs],
        )

    def newest(self, since: str | None, limit: int) -> list[tuple[Any, ...]]:
        """The newest `limit` points from `since` on, newest first: (time, trigger, the four levels,
        dominant, narrative, inputs as stored, id)."""
        return [
            tuple(r)
            for r in self.db.execute(
                "select time, trigger, boredom, curiosity, goal_achievement, devotion, dominant, narrative, "
                "inputs, id from drive_history where time >= coalesce(?, '') order by id desc limit ?",
                [since, limit],
            ).fetchall()
        ]

    def whole_from(self, first_id: int) -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
        """Point `first_id` and every point after it, by id: (what it stores, its inputs whole)."""
        return whole_from(self.db, first_id)

    def days(self, since: str | None, before: str | None, limit: int) -> list[tuple[Any, ...]]:
        """The rolled-up days from `since` and before `before`, newest first: (day, time, points, dominant,
        narrative, then each drive's mean, min and max in DRIVES' order)."""
        stats = ", ".join(f"{n}_mean, {n}_min, {n}_max" for n in DRIVES)
        return [
            tuple(r)
            for r in self.db.execute(
                f"select day, time, points, dominant, narrative, {stats} from drive_daily "
                "where time >= coalesce(?, '') and (? is null or time < ?) order by time desc limit ?",
                [since, before, before, limit],
            ).fetchall()
        ]

    # -- retention (memory/retention.py): old points rolled up into one a day -------------------------
    def older_than(self, before: str, limit: int) -> list[tuple[Any, ...]]:
        """Points before `before`, oldest first, at most `limit`, never the newest (recompute compares
        the drives with it): (id, time, the four levels, dominant, narrative)."""
        levels = ", ".join(DRIVES)
        return [
            tuple(r)
            for r in self.db.execute(
                f"select id, time, {levels}, dominant, narrative from drive_history "
                "where time < ? and id < (select max(id) from drive_history) order by time, id limit ?",
                [before, limit],
            ).fetchall()
        ]

    def delete(self, ids: list[int]) -> None:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            self.db.execute(f"delete from drive_history where id in ({','.join('?' * len(chunk))})", chunk)

    def day(self, day: str) -> tuple[Any, ...] | None:
        """A rolled-up day: (time, points, dominant, narrative, then DAY_COLUMNS); None: not rolled up."""
        row = self.db.execute(
            f"select time, points, dominant, narrative, {', '.join(DAY_COLUMNS)} from drive_daily "
            "where day = ?",
            [day],
        ).fetchone()
        return tuple(row) if row is not None else None

    def put_day(
        self, day: str, time: str, points: int, dominant: str | None, narrative: str, values: list[float]
    ) -> None:
        """A rolled-up day, written or replaced; `values` in DAY_COLUMNS' order."""
        self.db.execute(
            f"insert into drive_daily (day, time, points, dominant, narrative, {', '.join(DAY_COLUMNS)}) "
            f"values (?, ?, ?, ?, ?, {', '.join('?' * len(DAY_COLUMNS))}) on conflict(day) do update set "
            "time = excluded.time, points = excluded.points, dominant = excluded.dominant, "
            f"narrative = excluded.narrative, {', '.join(f'{c} = excluded.{c}' for c in DAY_COLUMNS)}",
            [day, time, points, dominant, narrative, *values],
        )
