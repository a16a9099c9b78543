"""Running summaries of a conversation (rolling compression, agent/compression.py writes them).

Each row is the summary after one compression step: the previous summary extended with the next oldest
messages. A row keeps the ids of the messages its step added; the ids a summary covers are its own plus its
predecessors'. The messages themselves are never touched: the full text stays in the database. Every
summary is also an archive item of kind "summary" (source id "summary:<id>"), so recall finds it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.archive import Archive, NewItem

SUMMARY_KIND = "summary"


class ConversationSummary(BaseModel):
    id: int
    room: str
    text: str
    previous_id: int | None
    first_id: int  # the oldest message this step covered
    last_id: int  # the newest message covered (by this step, hence by the whole summary)
    covered: list[int]  # the messages this step added
    item_id: int | None = None
    model: str = ""
    tokens: int = 0
    created_at: str = ""

    @property
    def source_id(self) -> str:
        return f"summary:{self.id}"


_COLUMNS = "id, room, text, previous_id, first_id, last_id, covered, item_id, model, tokens, created_at"


def _to_model(row: Sequence) -> ConversationSummary:
    values = dict(zip(_COLUMNS.split(", "), row, strict=True))
    values["covered"] = json.loads(values["covered"])
    return ConversationSummary.model_validate(values)


class Summaries:
    """The running summaries of one persona's memory (through the caller's connection)."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        archive: Archive,
        activity: ActivityLog,
        clock: Clock | None = None,
    ) -> None:
        self.db = db
        self.archive = archive
        self.activity = activity
        self.clock = clock or SystemClock()

    def current(self, room: str) -> ConversationSummary | None:
        """The newest summary whose last covered message is still on the conversation's line. An edit or
        a regeneration that took covered messages off the line makes a summary stale; an older one that
        still matches the line is used instead (its later turns come back verbatim)."""
        row = self.db.execute(
            f"select {', '.join('s.' + c for c in _COLUMNS.split(', '))} from conversation_summaries s "
            "join messages m on m.id = s.last_id where s.room = ? and m.hidden = 0 "
            "order by s.id desc limit 1",
            [room],
        ).fetchone()
        return _to_model(row) if row else None

    def get(self, summary_id: int) -> ConversationSummary | None:
        row = self.db.execute(
            f"select {_COLUMNS} from conversation_summaries where id = ?", [summary_id]
        ).fetchone()
        return _to_model(row) if row else None

    def all(self, room: str) -> list[ConversationSummary]:
        rows = self.db.execute(
            f"select {_COLUMNS} from conversation_summaries where room = ? order by id", [room]
        ).fetchall()
        return [_to_model(r) for r in rows]

    def covered_ids(self, summary: ConversationSummary) -> list[int]:
        """Every message a summary covers: its own step's and its predecessors', oldest first."""
        ids: list[int] = []
        step: ConversationSummary | None = summary
        while step is not None:
            ids[:0] = step.covered
            step = self.get(step.previous_id) if step.previous_id is not None else None
        return ids

    def add(
        self,
        room: str,
        text: str,
        covered: Sequence[int],
        *,
        previous: ConversationSummary | None,
        model: str = "",
        tokens: int = 0,
        speaker: str | None = None,
    ) -> ConversationSummary:
        """Store the next running summary, its archive item and its "compression" timeline entry in one
        transaction (all or nothing)."""
        if not covered:
            raise ValueError("a summary step covers at least one message")
        covered = sorted(covered)
        now = iso(self.clock.now())
        with self.db.atomic():
            cur = self.db.execute(
                "insert into conversation_summaries (room, text, previous_id, first_id, last_id, covered, "
                "model, tokens, created_at) values (?,?,?,?,?,?,?,?,?)",
                [
                    room,
                    text,
                    previous.id if previous else None,
                    covered[0],
                    covered[-1],
                    json.dumps(covered),
                    model,
                    tokens,
                    now,
                ],
            )
            summary_id = int(cur.lastrowid)
            item_id = self.archive.add(
                NewItem(
                    kind=SUMMARY_KIND,
                    text=text,
                    source_id=f"summary:{summary_id}",
                    room=room,
                    speaker=speaker,
                    importance=0.6,
                    meta={
                        "first_id": covered[0],
                        "last_id": covered[-1],
                        "previous_id": previous and previous.id,
                    },
                )
            )
            self.db.execute(
                "update conversation_summaries set item_id = ? where id = ?", [item_id, summary_id]
            )
            self.activity.compression(text, covered)
        found = self.get(summary_id)
        assert found is not None
        return found
