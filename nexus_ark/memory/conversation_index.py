"""Putting messages into the archive with their neighbouring turns (see archive/ for why), and taking
a forgotten turn back out of its neighbours.

Each message item records which items lent it their text, in meta["neighbours"] = [before id, after id]
(null where there is none): the item before is in its context and in what its vector was made of, the item
after in its context. Forgetting a turn rebuilds exactly those neighbours from what remains, so an
identical turn elsewhere ("ok" said twice) or a longer one that contains it ("okay") is left untouched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel

from nexus_ark.memory.archive import CONTEXT_WINDOW_S, Archive, NewItem

# A neighbour lends at most this much of its text to an item's context and vector: a pasted page next to
# a short turn must neither crowd that turn out of its vector nor be copied into every neighbour.
NEIGHBOUR_CHARS = 1000


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


def _span(text: str) -> str:
    return text[:NEIGHBOUR_CHARS]


def _context(before: str | None, after: str | None) -> str:
    return " ".join(_span(x) for x in (before, after) if x)


def _embed_text(before: str | None, own: str) -> str:
    return f"{_span(before)}\n{own}" if before else own


def _close(a: str, b: str) -> bool:
    try:
        return (
            abs((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()) <= CONTEXT_WINDOW_S
        )
    except (TypeError, ValueError):
        return False


def _set_neighbours(archive: Archive, item_id: int, before: int | None, after: int | None) -> None:
    archive.db.execute(
        "update items set meta = json_set(coalesce(meta, '{}'), '$.neighbours', json(?)) where id = ?",
        [json.dumps([before, after]), item_id],
    )


def index_turns(archive: Archive, turns: Sequence[Turn]) -> list[int]:
    """Add turns (in conversation order) as message items in one transaction."""
    if not turns:
        return []
    room = turns[0].room
    lines = [_line(t) for t in turns]
    with archive.db.atomic():
        previous = archive.db.execute(
            "select id, text, created_at, context, meta from items where kind = 'message' and room = ? "
            "order by id desc limit 1",
            [room],
        ).fetchone()
        joins_previous = previous is not None and _close(previous[2], turns[0].created_at)
        rows = []
        links: list[tuple[int | None, int | None]] = []  # batch positions; -1 is the previous item
        for i, turn in enumerate(turns):
            before = before_at = None
            if i > 0 and turns[i - 1].room == turn.room and _close(turns[i - 1].created_at, turn.created_at):
                before, before_at = lines[i - 1], i - 1
            elif i == 0 and joins_previous:
                before, before_at = previous[1], -1
            after = after_at = None
            if (
                i + 1 < len(turns)
                and turns[i + 1].room == turn.room
                and _close(turn.created_at, turns[i + 1].created_at)
            ):
                after, after_at = lines[i + 1], i + 1
            item = NewItem(
                kind="message",
                text=lines[i],
                source_id=turn.source_id,
                room=turn.room,
                speaker=turn.speaker,
                created_at=turn.created_at,
            )
            rows.append((item, _context(before, after), _embed_text(before, lines[i])))
            links.append((before_at, after_at))
        ids = archive.add_many(rows)

        def item_at(at: int | None) -> int | None:
            return None if at is None else previous[0] if at == -1 else ids[at]

        for item_id, (before_at, after_at) in zip(ids, links, strict=True):
            _set_neighbours(archive, item_id, item_at(before_at), item_at(after_at))
        if joins_previous:
            # The earlier last turn now has a next neighbour: its context gains it.
            archive.set_context(previous[0], f"{previous[3]} {_span(lines[0])}".strip())
            if _linked(previous[4]):  # (one indexed before links were recorded stays unlinked: see below)
                _set_neighbours(archive, previous[0], _neighbours(previous[4])[0], ids[0])
    return ids


def _linked(meta: str | None) -> bool:
    return meta is not None and bool(meta) and json.loads(meta).get("neighbours") is not None


def _neighbours(meta: str | None) -> list[int | None]:
    value = json.loads(meta).get("neighbours") if meta else None
    return list(value) if isinstance(value, list) and len(value) == 2 else [None, None]


def forget_in_neighbours(archive: Archive, item_ids: Sequence[int]) -> int:
    """Before items are deleted: take their text out of the neighbours that carry it, by the links each
    neighbour recorded, and rebuild those neighbours' context and vector text from what remains.
    Returns how many neighbours changed."""
    gone = set(item_ids)
    if not gone:
        return 0
    marks = ",".join("?" * len(gone))
    linked = archive.db.execute(
        f"select id, meta from items where kind = 'message' and id not in ({marks}) and ("
        f"json_extract(meta, '$.neighbours[0]') in ({marks}) or json_extract(meta, '$.neighbours[1]') "
        f"in ({marks}))",
        [*gone, *gone, *gone],
    ).fetchall()
    changed = 0
    with archive.db.atomic():
        for item_id, meta in linked:
            before, after = _neighbours(meta)
            lost_before = before in gone
            before = None if lost_before else before
            after = None if after in gone else after
            archive.set_context(item_id, _context(_text(archive, before), _text(archive, after)))
            if lost_before:  # its vector was made with the forgotten turn: remade from its own text
                archive.set_embed_text(item_id, None)
            _set_neighbours(archive, item_id, before, after)
            changed += 1
        changed += _forget_in_unlinked_neighbours(archive, gone)
    return changed


def _text(archive: Archive, item_id: int | None) -> str | None:
    if item_id is None:
        return None
    row = archive.db.execute("select text from items where id = ?", [item_id]).fetchone()
    return row[0] if row else None


def _forget_in_unlinked_neighbours(archive: Archive, gone: set[int]) -> int:
    """Neighbours indexed before links were recorded: the adjacent message of the same room within the
    exchange window, where only the exact span index_turns put there is removed (the end of the earlier
    one's context; the start of the later one's context and of its vector text)."""
    marks = ",".join("?" * len(gone))
    forgotten = archive.db.execute(
        f"select id, text, room, created_at from items where id in ({marks}) and kind = 'message'",
        list(gone),
    ).fetchall()
    changed = 0
    for item_id, text, room, created_at in forgotten:
        for order in ("desc", "asc"):
            row = archive.db.execute(
                "select id, text, context, embed_text, created_at, meta from items where kind = 'message' "
                f"and room is ? and id {'<' if order == 'desc' else '>'} ? order by id {order} limit 1",
                [room, item_id],
            ).fetchone()
            if row is None or row[0] in gone or not _close(row[4], created_at):
                continue
            other, own, context, embed_text, _, meta = row
            if _linked(meta):
                continue  # it names its neighbours: handled by its links
            span = _span(text)
            if order == "desc" and (context == span or context.endswith(" " + span)):
                archive.set_context(other, context[: -len(span)].rstrip())
                changed += 1
            elif order == "asc" and (context == span or context.startswith(span + " ")):
                archive.set_context(other, context[len(span) :].lstrip())
                if embed_text in (f"{text}\n{own}", f"{span}\n{own}"):
                    archive.set_embed_text(other, None)
                changed += 1
    return changed
