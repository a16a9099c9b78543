"""One activity timeline per persona: what happened, in order, in the persona's own memory.db.

Append-only: messages, emotions detected, tool calls, memory writes, compression, imports and errors; the
persona's life between conversations: drive changes, dreams, heartbeats, what it wrote first (or did not) and
the events it scheduled (`kind` is free text, so a new kind needs no schema change). There is no API to
edit or delete an entry. The one exception is privacy: when a message or a memory item is deleted (the
person forgot it), triggers in the schema (migration m006_activity) blank the entries that point at it
(by message_id, or by data.item_id), so its words leave the timeline too; the entry's time and kind stay.

Entries are short: summaries are one line of at most SUMMARY_CHARS, strings in `data` are clipped, so a
1 MB message never lands in the timeline twice.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.db import sqlite

log = logging.getLogger(__name__)

# Every kind this version writes (a test reads the writers and checks that this list names them all, and
# readers such as the activity window label each). Any lowercase identifier is accepted, so a later version's
# kinds need no schema change; readers show a kind they do not know as it is stored.
KINDS = (
    # a turn, the memory, imports
    "message",
    "emotion",
    "tool_call",
    "memory_write",
    "compression",
    "import",
    "error",
    # the persona's life between conversations
    "drives",
    "dream",
    "heartbeat",
    "autonomy",
    "event",
)
SUMMARY_CHARS = 160
DATA_TEXT_CHARS = 300
DATA_ITEMS = 20
REDACTED = "(forgotten)"
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class ActivityEntry(BaseModel):
    id: int
    time: str  # ISO-8601, UTC
    kind: str
    summary: str
    message_id: int | None = None
    data: dict[str, Any] | None = None


def clip(text: str, limit: int = SUMMARY_CHARS) -> str:
    """One readable line of at most `limit` characters: whitespace and control characters collapse to
    single spaces (a timeline line never breaks a terminal), and a cut ends in an ellipsis."""
    text = str(text)
    if len(text) > limit * 4:  # never scan a megabyte to keep a hundred characters
        text = text[: limit * 4]
        cut = True
    else:
        cut = False
    flat = " ".join(
        "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text).split()
    )
    if cut or len(flat) > limit:
        return flat[: limit - 1].rstrip() + "…"
    return flat


def _clip_data(value: Any, depth: int = 0) -> Any:
    """JSON-safe and bounded: long strings clipped, long lists and objects cut, deep nesting flattened."""
    if isinstance(value, str):
        return clip(value, DATA_TEXT_CHARS) if len(value) > DATA_TEXT_CHARS else value
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= 3:
        return clip(json.dumps(value, ensure_ascii=False, default=str), DATA_TEXT_CHARS)
    if isinstance(value, Mapping):
        items = list(value.items())[:DATA_ITEMS]
        return {str(k): _clip_data(v, depth + 1) for k, v in items}
    if isinstance(value, Iterable):
        return [_clip_data(v, depth + 1) for _, v in zip(range(DATA_ITEMS), value, strict=False)]
    return clip(str(value), DATA_TEXT_CHARS)


def to_utc_iso(value: str | datetime) -> str:
    """A time to compare with stored ones: ISO-8601 in UTC. A time without a zone is the person's local
    time (what they see on their clock). Raises ValueError for text that is not ISO-8601."""
    dt = datetime.fromisoformat(value) if isinstance(value, str) else value
    if dt.tzinfo is None:
        dt = dt.astimezone()
    return iso(dt.astimezone(UTC))


_COLUMNS = "id, time, kind, summary, message_id, data"


def _entry(row: tuple) -> ActivityEntry:
    i, t, k, s, m, d = row
    return ActivityEntry(id=i, time=t, kind=k, summary=s, message_id=m, data=json.loads(d) if d else None)


def _where(
    since: str | datetime | None,
    until: str | datetime | None,
    kinds: Iterable[str] | None,
    text: str = "",
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if since is not None:
        clauses.append("time >= ?")
        params.append(to_utc_iso(since))
    if until is not None:
        clauses.append("time <= ?")
        params.append(to_utc_iso(until))
    kinds = list(kinds or [])
    if kinds:
        clauses.append(f"kind in ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    if text:
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("summary like ? escape '\\'")
        params.append(f"%{escaped}%")
    return (f" where {' and '.join(clauses)}" if clauses else ""), params


class ActivityLog:
    """The timeline of one persona. Writes go through the caller's connection, so an entry lands in the
    caller's open transaction (a memory write and its entry commit or vanish together)."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()

    def append(
        self, kind: str, summary: str, *, message_id: int | None = None, data: Mapping[str, Any] | None = None
    ) -> int | None:
        """Record one entry; returns its id, or None when it could not be written. Never raises for a
        failed write: the timeline must not cost anyone a turn or a memory (the failure is logged)."""
        if not _KIND.match(kind):
            log.error("activity entry with a bad kind %r not recorded", kind)
            return None
        try:
            payload = json.dumps(_clip_data(dict(data)), ensure_ascii=False) if data else None
        except (TypeError, ValueError) as exc:
            log.error("activity data for %s not recorded: %s", kind, exc)
            payload = None
        conn = self.db.conn
        in_transaction = conn.in_transaction
        try:
            cur = conn.execute(
                "insert into activity (time, kind, summary, message_id, data) values (?,?,?,?,?)",
                [iso(self.clock.now().astimezone(UTC)), kind, clip(summary), message_id, payload],
            )
        except sqlite.Error as exc:
            if in_transaction and not conn.in_transaction:
                raise  # SQLite rolled the caller's whole transaction back (disk full): the caller must know
            log.warning("activity entry %s not recorded: %s", kind, exc)
            return None
        return int(cur.lastrowid)

    def query(
        self,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        kinds: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> list[ActivityEntry]:
        """Entries between since and until (inclusive), of these kinds, oldest first; with a limit, the
        newest `limit` of them (still oldest first, as a timeline reads)."""
        where, params = _where(since, until, kinds)
        sql = f"select {_COLUMNS} from activity{where} order by time desc, id desc"
        if limit is not None:
            sql += " limit ?"
            params.append(max(0, int(limit)))
        return [_entry(row) for row in reversed(self.db.execute(sql, params).fetchall())]

    def page(
        self,
        since: str | datetime | None = None,
        kinds: Iterable[str] | None = None,
        text: str = "",
        *,
        before: tuple[str, int] | None = None,
        after: tuple[str, int] | None = None,
        limit: int = 200,
    ) -> list[ActivityEntry]:
        """One page for a view that scrolls back in time: newest first, entries older than `before` (the
        (time, id) of the last entry shown) or newer than `after` (of the first), at or after since, of
        these kinds, whose summary contains `text`. Pages go by key, not by offset, so a page is an index
        range however long the timeline is, and entries appended meanwhile never shift one."""
        where, params = _where(since, None, kinds, text)
        keys = []
        if before is not None:
            keys.append("(time < ? or (time = ? and id < ?))")
            params.extend([before[0], before[0], before[1]])
        if after is not None:
            keys.append("(time > ? or (time = ? and id > ?))")
            params.extend([after[0], after[0], after[1]])
        if keys:
            where = f"{where} and {' and '.join(keys)}" if where else f" where {' and '.join(keys)}"
        sql = f"select {_COLUMNS} from activity{where} order by time desc, id desc limit ?"
        rows = self.db.execute(sql, [*params, max(0, int(limit))]).fetchall()
        return [_entry(row) for row in rows]

    def count(
        self, since: str | datetime | None = None, kinds: Iterable[str] | None = None, text: str = ""
    ) -> int:
        """How many entries `page` would go through with these filters."""
        where, params = _where(since, None, kinds, text)
        return int(self.db.execute(f"select count(*) from activity{where}", params).fetchone()[0])

    def kinds(self) -> list[str]:
        """The kinds present in this timeline."""
        return [r[0] for r in self.db.execute("select distinct kind from activity order by kind")]

    # -- helpers for the writers: one call each, the summary made here so every entry reads alike ---------
    def message(self, message_id: int, speaker: str, text: str, *, role: str = "") -> int | None:
        """A message said by the user or the persona (summary: speaker and a snippet)."""
        return self.append(
            "message",
            f"{speaker}: {text}",
            message_id=message_id,
            data={"speaker": speaker, "role": role, "chars": len(text)},
        )

    def emotion(
        self, label: str, value: float, confidence: float, *, message_id: int | None = None, snippet: str = ""
    ) -> int | None:
        """The emotion detected in a user message: data {label, value, confidence}."""
        head = f"{label} ({value:+.2f}, confidence {confidence:.2f})"
        return self.append(
            "emotion",
            f"{head}: {snippet}" if snippet else head,
            message_id=message_id,
            data={"label": label, "value": value, "confidence": confidence},
        )

    def tool_call(
        self, name: str, arguments: Mapping[str, Any] | str, result: str, *, message_id: int | None = None
    ) -> int | None:
        """A tool the persona called, with its arguments and (a snippet of) its result."""
        args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        return self.append(
            "tool_call",
            f"{name}({clip(args_text, 60)}) → {result}",
            message_id=message_id,
            data={"name": name, "arguments": arguments, "result": result},
        )

    def memory_write(
        self,
        component: str,
        what: str,
        *,
        item_id: int | None = None,
        message_id: int | None = None,
        **extra: Any,
    ) -> int | None:
        """A change to a memory component. With item_id, forgetting that item blanks this entry."""
        data: dict[str, Any] = {"component": component, **extra}
        if item_id is not None:
            data["item_id"] = item_id
        return self.append("memory_write", f"{component}: {what}", message_id=message_id, data=data)

    def compression(self, summary: str, covered_ids: list[int]) -> int | None:
        """Older turns summarised into the running summary (the ids it covers)."""
        span = f"messages {min(covered_ids)}–{max(covered_ids)}" if covered_ids else "no messages"
        return self.append(
            "compression",
            f"{span} summarised: {summary}",
            data={
                "covered": len(covered_ids),
                "first_id": min(covered_ids, default=None),
                "last_id": max(covered_ids, default=None),
            },
        )

    def imported(self, what: str, **data: Any) -> int | None:
        """An import: conversations from a file, a knowledge-base document."""
        return self.append("import", what, data=data or None)

    def error(self, what: str, *, message_id: int | None = None, **data: Any) -> int | None:
        """Something that failed (a turn's model error, a document that could not be read)."""
        return self.append("error", what, message_id=message_id, data=data or None)
