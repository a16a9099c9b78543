"""Which reflection level a dream has, from the goal metadata's dates (seed 001): level 3 every 30 days,
level 2 every 7, level 1 otherwise. A higher level does the lower levels' work too, so after a long gap the
one dream that runs catches up on everything."""

from __future__ import annotations

from datetime import date

from nexus_ark.memory.components import Components

WEEK_DAYS = 7
MONTH_DAYS = 30
FIRST = "first_dream_date"


def _date(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def choose_level(meta: dict[str, str], day: date) -> int:
    """The first dream is level 1 and starts the clocks; a week after the last level 2 (or the first
    dream) comes level 2, a month after the last level 3 (or the first dream) level 3."""
    first = _date(meta.get(FIRST)) or day
    last3 = _date(meta.get("last_level3_date")) or first
    last2 = _date(meta.get("last_level2_date")) or first
    if (day - last3).days >= MONTH_DAYS:
        return 3
    if (day - last2).days >= WEEK_DAYS:
        return 2
    return 1


def record_level(components: Components, level: int, day: date) -> None:
    """After a dream of `level` on `day` (inside the caller's transaction)."""
    meta = components.reflection_meta()
    stamp = day.isoformat()
    if not meta.get(FIRST):
        components.set_reflection_meta(FIRST, stamp)
    components.set_reflection_meta("last_reflection_level", str(level))
    for lvl in range(1, level + 1):  # a level-3 dream did the weekly and daily work as well
        key = f"last_level{lvl}_date"
        if (meta.get(key) or "") < stamp:
            components.set_reflection_meta(key, stamp)
