"""Putting messages into the archive with their neighbouring turns (see archive.py for why)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel

from nexus_ark.memory.archive import CONTEXT_WINDOW_S, Archive, NewItem


class Turn(BaseModel):
    speaker: str
    text: str
    created_at: str
    source_id: str | None = None
    room: str = "main"


def _line(turn: Turn | dict) -> str:
    if isinstance(turn, dict):
        return turn["text"]
    return f"{turn.speaker}: {turn.text}"


def _close(a: str, b: str) -> bool:
    try:
        return (
            abs((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()) <= CONTEXT_WINDOW_S
        )
    except (TypeError, ValueError):
        return False


def index_turns(archive: Archive, turns: Sequence[Turn]) -> list[int]:
    """Add turns (in conversation order) as message items in one transaction."""
    if not turns:
        return []
    room = turns[0].room
    previous = archive.db.execute(
        "select id, text, created_at from items where kind = 'message' and room = ? order by id desc limit 1",
        [room],
    ).fetchone()
    lines = [_line(t) for t in turns]
    rows = []
    for i, turn in enumerate(turns):
        before = None
        if i > 0 and turns[i - 1].room == turn.room and _close(turns[i - 1].created_at, turn.created_at):
            before = lines[i - 1]
        elif i == 0 and previous is not None and _close(previous[2], turn.created_at):
            before = previous[1]
        after = None
        if (
            i + 1 < len(turns)
            and turns[i + 1].room == turn.room
            and _close(turn.created_at, turns[i + 1].created_at)
        ):
            after = lines[i + 1]
        context = " ".join(x for x in (before, after) if x)
        embed_text = f"{before}\n{lines[i]}" if before else lines[i]
        item = NewItem(
            kind="message",
            text=lines[i],
            source_id=turn.source_id,
            room=turn.room,
            speaker=turn.speaker,
            created_at=turn.created_at,
        )
        rows.append((item, context, embed_text))
    ids = archive.add_many(rows)
    if previous is not None and _close(previous[2], turns[0].created_at):
        # The earlier last turn now has a next neighbour: add it to its context.
        old_context = archive.db.execute("select context from items where id = ?", [previous[0]]).fetchone()[
            0
        ]
        archive.set_context(previous[0], f"{old_context} {lines[0]}".strip())
    return ids
