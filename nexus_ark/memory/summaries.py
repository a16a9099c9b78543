"""Running summaries of a conversation (rolling compression, agent/compression.py writes them).

Each row is the summary after one compression step: the previous summary extended with the next oldest
messages. A row keeps the ids of the messages its step added; the ids a summary covers are its own plus its
predecessors'. The messages themselves are never touched: the full text stays in the database. Every
summary is also an archive item of kind "summary" (source id "summary:<id>"), so recall finds it.

Forgetting a message (its archive item deleted: MemoryStore.forget, ChatSession.delete(forget=True)) makes
every summary whose text holds it stale, in the same transaction (a trigger, migration m010): its text is
blanked, its archive item deleted, and `current` passes over it. A plain delete of a message keeps its
archive item, hence the summary. The stale summaries are rebuilt from the messages that remain
(`rebuild_to` says up to where; agent/compression.py does it after the next reply).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.archive import Archive, NewItem
from nexus_ark.memory.db import inserted_id
from nexus_ark.notices import notice

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
    sources: list[str] = []  # the archive source ids of the messages this step added
    stale: int = 0  # 1: it held a forgotten message (text blanked, out of prompt and recall); 2: rebuilt

    @property
    def source_id(self) -> str:
        return f"summary:{self.id}"


_COLUMNS = (
    "id, room, text, previous_id, first_id, last_id, covered, item_id, model, tokens, created_at, "
    "sources, stale"
)
IN_USE = 0
STALE = 1
REBUILT = 2


def _to_model(row: Sequence) -> ConversationSummary:
    values = dict(zip(_COLUMNS.split(", "), row, strict=True))
    values["covered"] = json.loads(values["covered"])
    values["sources"] = json.loads(values["sources"])
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
        still matches the line is used instead (its later turns come back verbatim). A stale summary (it
        held a forgotten message) is never used: the newest one before it is. A message deleted without
        forgetting leaves its summary in use, even when it was the last one covered."""
        row = self.db.execute(
            f"select {', '.join('s.' + c for c in _COLUMNS.split(', '))} from conversation_summaries s "
            "left join messages m on m.id = s.last_id where s.room = ? and coalesce(m.hidden, 0) = 0 "
            "and s.stale = 0 "
            "order by s.id desc limit 1",
            [room],
        ).fetchone()
        return _to_model(row) if row else None

    def get(self, summary_id: int) -> ConversationSummary | None:
        row = self.db.execute(
            f"select {_COLUMNS} from conversation_summaries where id = ?", [summary_id]
        ).fetchone()
        return _to_model(row) if row else None

    def all(self, room: str, *, stale: bool = False) -> list[ConversationSummary]:
        """The room's summaries in use, oldest first (with `stale`, also those a forgotten message voided)."""
        where = "" if stale else f" and stale = {IN_USE}"
        rows = self.db.execute(
            f"select {_COLUMNS} from conversation_summaries where room = ?{where} order by id", [room]
        ).fetchall()
        return [_to_model(r) for r in rows]

    def rebuild_to(self, room: str) -> int | None:
        """The newest message on the conversation's line that a stale summary covered and the summary in
        use does not: the rebuild must cover the line up to it. None when nothing waits to be rebuilt;
        stale summaries whose messages the summary in use covers again are marked rebuilt."""
        rows = self.db.execute(
            f"select {_COLUMNS} from conversation_summaries where room = ? and stale = {STALE} order by id",
            [room],
        ).fetchall()
        stale = [_to_model(r) for r in rows]
        if not stale:
            return None
        current = self.current(room)
        done_to = current.last_id if current is not None else 0
        ids = sorted({i for s in stale for i in s.covered})
        hidden: dict[int, bool] = {}  # the covered messages that still exist: whether off the line
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for message_id, off_line in self.db.execute(
                f"select id, hidden from messages where id in ({marks})", part
            ):
                hidden[message_id] = bool(off_line)
        waiting = [i for i in ids if hidden.get(i) is False and i > done_to]
        if waiting:
            return max(waiting)
        # Rebuilt, or its messages are gone. One whose messages are on an older branch stays stale:
        # choosing that branch again brings its rebuild back.
        done = [
            s.id
            for s in stale
            if any(hidden.get(i) is False for i in s.covered) or not any(i in hidden for i in s.covered)
        ]
        if done:
            marks = ",".join("?" * len(done))
            self.db.execute(
                f"update conversation_summaries set stale = {REBUILT} where id in ({marks})", done
            )
        return None

    def sweep_forgotten(self, room: str | None = None) -> list[ConversationSummary]:
        """Finish what forgetting started (the trigger cannot reach the vector indexes): drop the vectors
        of summaries made stale since the last sweep, and say in the timeline what happened. Returns them."""
        where = "stale = 1 and item_id is not null" + (" and room = ?" if room is not None else "")
        rows = self.db.execute(
            f"select {_COLUMNS} from conversation_summaries where {where} order by id",
            [room] if room is not None else [],
        ).fetchall()
        voided = [_to_model(r) for r in rows]
        if not voided:
            return []
        with self.db.atomic():
            self.archive.drop_vectors([s.item_id for s in voided if s.item_id is not None])
            marks = ",".join("?" * len(voided))
            self.db.execute(
                f"update conversation_summaries set item_id = null where id in ({marks})",
                [s.id for s in voided],
            )
            self.activity.append(
                "compression",
                notice(
                    "{count} running summary held a forgotten message: removed from the prompt and from "
                    "recall, to be rebuilt from the messages that remain",
                    count=len(voided),
                )
                if len(voided) == 1
                else notice(
                    "{count} running summaries held a forgotten message: removed from the prompt and from "
                    "recall, to be rebuilt from the messages that remain",
                    count=len(voided),
                ),
                data={
                    "forgotten_summaries": [s.id for s in voided],
                    "rooms": sorted({s.room for s in voided}),
                },
            )
        return voided

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
        rebuilt: bool = False,
    ) -> ConversationSummary:
        """Store the next running summary, its archive item and its "compression" timeline entry in one
        transaction (all or nothing). `rebuilt`: it replaces summaries a forgotten message voided."""
        if not covered:
            raise ValueError("a summary step covers at least one message")
        covered = sorted(covered)
        now = iso(self.clock.now())
        marks = ",".join("?" * len(covered))
        sources = [
            r[0]
            for r in self.db.execute(
                f"select coalesce(source_id, 'msg:' || id) from messages where id in ({marks}) order by id",
                covered,
            )
        ]
        with self.db.atomic():
            cur = self.db.execute(
                "insert into conversation_summaries (room, text, previous_id, first_id, last_id, covered, "
                "model, tokens, created_at, sources) values (?,?,?,?,?,?,?,?,?,?)",
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
                    json.dumps(sources),
                ],
            )
            summary_id = inserted_id(cur)
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
            self.activity.compression(
                notice("(rebuilt without forgotten messages) {summary}", summary=text) if rebuilt else text,
                covered,
            )
        found = self.get(summary_id)
        assert found is not None
        return found
