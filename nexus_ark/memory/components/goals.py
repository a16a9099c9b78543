"""The persona's goals (short and long term, with progress notes) and the dream levels' bookkeeping."""

# SQL reads best as one statement a line.
# ruff: noqa: E501

from __future__ import annotations

import json
import uuid
from typing import Any

from nexus_ark.errors import NexusArkError
from nexus_ark.memory.archive import NewItem
from nexus_ark.memory.components.base import ComponentPart, json_list
from nexus_ark.memory.components.records import Goal, GoalStatus, GoalTerm
from nexus_ark.notices import notice
from nexus_ark.prompts.archive import GOAL_ITEM

# A goal's term and status in the timeline's sentences: in English as stored ("short-term"), in a window
# translated.
_TERM_WORDS = {"short": notice("short-term"), "long": notice("long-term")}
_STATUS_WORDS = {
    "active": notice("active"),
    "completed": notice("completed"),
    "abandoned": notice("abandoned"),
}

_GOAL_COLUMNS = (
    "id, term, goal, status, priority, progress_notes, related_values, source_ids, created_at, updated_at"
)


def _goal(row: Any) -> Goal:
    a, b, c, d, e, f, g, h, i, j = row
    return Goal(
        id=a,
        term=b,
        goal=c,
        status=d,
        priority=e,
        progress_notes=json_list(f),
        related_values=json_list(g),
        source_ids=json_list(h),
        created_at=i,
        updated_at=j,
    )


class GoalMemory(ComponentPart):
    """Goals (each also an archive item) and reflection_meta."""

    # -- goals ------------------------------------------------------------------------------------
    def put_goal(self, goal: Goal) -> Goal:
        if not goal.goal.strip():
            raise NexusArkError(notice("A goal needs a text: an empty goal was not saved."))
        goal = goal.model_copy(update={"id": goal.id or f"{goal.term[:2]}_{uuid.uuid4().hex[:8]}"})
        now = self._now()
        text = GOAL_ITEM.format(term=goal.term, status=goal.status, goal=goal.goal)
        with self.db.atomic():
            row = self.db.execute("select item_id from goals where id = ?", [goal.id]).fetchone()
            term = _TERM_WORDS.get(goal.term, f"{goal.term}-term")
            status = _STATUS_WORDS.get(goal.status, goal.status)
            if row and row[0]:
                self.archive.update_text(row[0], text)
                item_id = row[0]
            else:
                item_id = self.archive.add(
                    NewItem(kind="goal", text=text, source_ids=goal.source_ids, importance=0.6)
                )
            self.db.execute(
                "insert into goals (id, term, goal, status, priority, progress_notes, related_values, source_ids, "
                "item_id, created_at, updated_at) values (?,?,?,?,?,?,?,?,?,?,?) on conflict(id) do update set "
                "goal = excluded.goal, status = excluded.status, priority = excluded.priority, "
                "progress_notes = excluded.progress_notes, related_values = excluded.related_values, "
                "source_ids = excluded.source_ids, updated_at = excluded.updated_at",
                [
                    goal.id,
                    goal.term,
                    goal.goal,
                    goal.status,
                    goal.priority,
                    json.dumps(goal.progress_notes, ensure_ascii=False),
                    json.dumps(goal.related_values, ensure_ascii=False),
                    json.dumps(goal.source_ids),
                    item_id,
                    now,
                    now,
                ],
            )
            what = (
                notice("{term} updated ({status}): {goal}", term=term, status=status, goal=goal.goal)
                if row
                else notice("{term} added ({status}): {goal}", term=term, status=status, goal=goal.goal)
            )
            self.activity.memory_write(
                notice("goal"),
                what,
                item_id=item_id,
                goal_id=goal.id,
            )
        return goal

    def goals(self, term: GoalTerm | None = None, status: GoalStatus | None = "active") -> list[Goal]:
        rows = self.db.execute(
            f"select {_GOAL_COLUMNS} from goals "
            "where (? is null or term = ?) and (? is null or status = ?) order by priority, created_at",
            [term, term, status, status],
        ).fetchall()
        return [_goal(row) for row in rows]

    def goal(self, goal_id: str) -> Goal | None:
        row = self.db.execute(f"select {_GOAL_COLUMNS} from goals where id = ?", [goal_id]).fetchone()
        return _goal(row) if row else None

    def _existing_goal(self, goal_id: str) -> Goal:
        goal = self.goal(goal_id)
        if goal is None:
            raise NexusArkError(notice("There is no goal {goal_id!r}.", goal_id=goal_id))
        return goal

    def add_progress(self, goal_id: str, note: str, source_ids: list[str] | None = None) -> Goal:
        """A progress note on a goal (by the persona in a dream or a tool, or by the user)."""
        if not note.strip():
            raise NexusArkError(notice("A progress note needs a text: an empty note was not saved."))
        goal = self._existing_goal(goal_id)
        sources = [*goal.source_ids, *(s for s in source_ids or [] if s not in goal.source_ids)]
        return self.put_goal(
            goal.model_copy(
                update={"progress_notes": [*goal.progress_notes, note.strip()], "source_ids": sources}
            )
        )

    def set_goal_status(self, goal_id: str, status: GoalStatus, note: str = "") -> Goal:
        """Complete or abandon a goal (or take it up again), with an optional note saying why."""
        goal = self._existing_goal(goal_id)
        notes = [*goal.progress_notes, note.strip()] if note.strip() else goal.progress_notes
        return self.put_goal(goal.model_copy(update={"status": status, "progress_notes": notes}))

    def reflection_meta(self) -> dict[str, str]:
        """The dream levels' bookkeeping (seed 001's goal metadata): last_reflection_level and
        last_level1_date / last_level2_date / last_level3_date, among other keys."""
        return dict(self.db.execute("select key, value from reflection_meta").fetchall())

    def set_reflection_meta(self, key: str, value: str) -> None:
        with self.db.atomic():
            self.db.execute("insert or replace into reflection_meta (key, value) values (?, ?)", [key, value])
