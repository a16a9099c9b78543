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
