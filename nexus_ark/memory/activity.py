"""One activity timeline per persona: what happened, in order, in the persona's own memory.db.

Append-only: messages, emotions detected, tool calls, memory writes, compression, imports and errors; the
persona's life between conversations: drive changes, dreams, heartbeats, what it wrote first (or did not) and
the events it scheduled (`kind` is free text, so a new kind needs no schema change). There is no API to
edit or delete an entry. Two exceptions: privacy, when a message or a memory item is deleted (the
person forgot it), triggers in the schema (migration m006_activity) blank the entries that point at it
(by message_id, or by data.item_id), so its words leave the timeline too; the entry's time and kind stay.
And bounded growth: routine entries (heartbeats, drive changes, the copies of messages and emotions) older
than memory/retention.DETAIL_DAYS become one line per day and kind (activity_daily). The readers here read
both: a daily line reads as an entry with a negative id (never an entry's) and no message_id.

Entries are short: summaries are one line of at most SUMMARY_CHARS, strings in `data` are clipped, so a
1 MB message never lands in the timeline twice.

A summary is stored in English (the CLI prints it, searches match it). When a writer gives it as a notice
(nexus_ark.notices), its template and values are kept too, in `data` under NOTICE_KEY, so a window shows the
entry in the person's language (ActivityEntry.translatable_summary). Kept in `data`, they are blanked with it
when the words are forgotten.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.db import sqlite
from nexus_ark.notices import Joined, Notice, from_stored, joined, notice, stored

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
NOTICE_KEY = "summary_notice"  # in the stored `data`: the summary's template and values (notices.stored)
# A message written first keeps its reason (drive levels, their inputs, the narrative: ~1.1 KB) in its own
# meta["autonomous"]; its "autonomy" entry stores the parts it shares with it once, there, and says so under
# this key (issue 23, defect 13). Readers get the entry's data whole again (ActivityLog._with_reasons).
REASON_KEY = "reason_in_message"
REASON_BY_REFERENCE = ("narrative", "levels", "inputs", "time")
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class ActivityEntry(BaseModel):
    id: int
    time: str  # ISO-8601, UTC
    kind: str
    summary: str
    message_id: int | None = None
    data: dict[str, Any] | None = None  # what the writer gave (the stored notice is read out of it)
    summary_notice: str | None = None  # the summary's template and values (notices.stored), when kept

    @cached_property
    def translatable_summary(self) -> str:
        """The summary to show a person: a notice, so a window shows it in the person's language
        (ui.i18n.tr_notice), when its writer gave one; else the stored English (entries written before
        notices were kept, or by a writer with none)."""
        if self.summary_notice:
            made = from_stored(self.summary_notice)
            if isinstance(made, Notice | Joined):
                return made
        return self.summary


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


def _translatable(text: str) -> bool:
    """Whether a summary holds words of ours a window can translate (a Joined of plain text holds none)."""
    if isinstance(text, Notice):
        return True
    return isinstance(text, Joined) and any(_translatable(part) for part in text.parts)


def _bounded(text: str) -> str:
    """A notice as it is kept beside its summary: every plain string in it (a person's or a model's words,
    a library's error) clipped to one line of at most SUMMARY_CHARS, so the entry stays small."""
    if isinstance(text, Notice):
        values = {k: _bounded_value(v) for k, v in text.values.items()}
        return Notice(text.template, **values)
    if isinstance(text, Joined):
        return Joined([_bounded(part) for part in text.parts], text.sep)
    return clip(text)


def _bounded_value(value: object) -> object:
    if isinstance(value, str):
        return _bounded(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return clip(str(value))


def _kept_notice(summary: str) -> str | None:
    """The summary's template and values to store (notices.stored), or None when it has none to keep."""
    if not _translatable(summary):
        return None
    try:
        return stored(_bounded(summary))
    except (TypeError, ValueError, KeyError, IndexError) as exc:  # a value the template cannot format
        log.error("the template of an activity summary not kept: %s", exc)
        return None


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
# The daily lines older routine entries were rolled up into (memory/retention.py), read as entries.
_DAILY = "(select -id as id, time, kind, summary, null as message_id, data from activity_daily)"


def _timeline(where: str, params: list[Any]) -> tuple[str, list[Any]]:
    """The entries and the daily lines that match `where`, as one compound select (each half keeps its
    index; ORDER BY and LIMIT go after it)."""
    return (
        f"select {_COLUMNS} from activity{where} union all select {_COLUMNS} from {_DAILY}{where}",
        [*params, *params],
    )


def _entry(row: tuple) -> ActivityEntry:
    i, t, k, s, m, d = row
    data = json.loads(d) if d else None
    kept = data.pop(NOTICE_KEY, None) if isinstance(data, dict) else None
    return ActivityEntry(
        id=i,
        time=t,
        kind=k,
        summary=s,
        message_id=m,
        data=data or None,  # only a notice was stored: the writer gave no data
        summary_notice=kept if isinstance(kept, str) else None,
    )


def _as_stored(template: str) -> str:
    """How a notice's template reads in the data column: JSON (notices.stored) inside the data's JSON."""
    inner = json.dumps({"template": template}, ensure_ascii=False)[1:-1]
    return json.dumps(inner, ensure_ascii=False)[1:-1]


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _where(
    since: str | datetime | None,
    until: str | datetime | None,
    kinds: Iterable[str] | None,
    text: str = "",
    templates: Iterable[str] = (),
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
        # The words in the English summary, or a sentence of ours that says them in the person's language
        # (its template is kept in data: see NOTICE_KEY).
        templates = list(templates)
        said = ["summary like ? escape '\\'"] + ["data like ? escape '\\'"] * len(templates)
        clauses.append(f"({' or '.join(said)})")
        params.extend([_like(text), *(_like(_as_stored(t)) for t in templates)])
    return (f" where {' and '.join(clauses)}" if clauses else ""), params


def reason_by_reference(db: sqlite_utils.Database, payload: str) -> str:
    """An "autonomy" entry's stored data without the parts its message's meta["autonomous"] holds as well
    (REASON_BY_REFERENCE): those are read from the message (ActivityLog._with_reasons). Unchanged when the
    entry names no message, the message has no reason, or a part differs from it."""
    try:
        fields = json.loads(payload)
    except ValueError:
        return payload
    message_id = fields.get("message_id") if isinstance(fields, dict) else None
    if not isinstance(message_id, int) or fields.get(REASON_KEY):
        return payload
    row = db.execute(
        "select json_extract(meta, '$.autonomous') from messages where id = ? and json_valid(meta)",
        [message_id],
    ).fetchone()
    try:
        reason = json.loads(row[0]) if row and row[0] else None
    except ValueError:
        return payload
    if not isinstance(reason, dict):
        return payload
    shared = [k for k in REASON_BY_REFERENCE if k in fields and k in reason]
    if not shared or any(_clip_data(reason[k], 1) != fields[k] for k in shared):
        return payload
    for key in shared:
        del fields[key]
    fields[REASON_KEY] = True
    return json.dumps(fields, ensure_ascii=False)


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
        failed write: the timeline must not cost anyone a turn or a memory (the failure is logged).

        summary: English; a notice (nexus_ark.notices) keeps its template and values in `data` too, so a
        window can show it translated."""
        if not _KIND.match(kind):
            log.error("activity entry with a bad kind %r not recorded", kind)
            return None
        kept = _kept_notice(summary)
        try:
            fields = _clip_data(dict(data)) if data else {}
            if kept is not None:  # after the clipping: it is bounded already, and must stay whole to be read
                fields[NOTICE_KEY] = kept
            payload = json.dumps(fields, ensure_ascii=False) if fields else None
        except (TypeError, ValueError) as exc:
            log.error("activity data for %s not recorded: %s", kind, exc)
            payload = json.dumps({NOTICE_KEY: kept}, ensure_ascii=False) if kept is not None else None
        if kind == "autonomy" and payload is not None:
            payload = reason_by_reference(self.db, payload)
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
        sql, params = _timeline(*_where(since, until, kinds))
        sql += " order by time desc, id desc"
        if limit is not None:
            sql += " limit ?"
            params.append(max(0, int(limit)))
        return self._with_reasons([_entry(row) for row in reversed(self.db.execute(sql, params).fetchall())])

    def page(
        self,
        since: str | datetime | None = None,
        kinds: Iterable[str] | None = None,
        text: str = "",
        *,
        templates: Iterable[str] = (),
        before: tuple[str, int] | None = None,
        after: tuple[str, int] | None = None,
        limit: int = 200,
    ) -> list[ActivityEntry]:
        """One page for a view that scrolls back in time: newest first, entries older than `before` (the
        (time, id) of the last entry shown) or newer than `after` (of the first), at or after since, of
        these kinds, whose summary contains `text` (or whose kept notice uses one of `templates`: the
        sentences that say `text` in the person's language). Pages go by key, not by offset, so a page is an
        index range however long the timeline is, and entries appended meanwhile never shift one."""
        where, params = _where(since, None, kinds, text, templates)
        keys = []
        if before is not None:
            keys.append("(time < ? or (time = ? and id < ?))")
            params.extend([before[0], before[0], before[1]])
        if after is not None:
            keys.append("(time > ? or (time = ? and id > ?))")
            params.extend([after[0], after[0], after[1]])
        if keys:
            where = f"{where} and {' and '.join(keys)}" if where else f" where {' and '.join(keys)}"
        sql, params = _timeline(where, params)
        sql += " order by time desc, id desc limit ?"
        rows = self.db.execute(sql, [*params, max(0, int(limit))]).fetchall()
        return self._with_reasons([_entry(row) for row in rows])

    def _with_reasons(self, entries: list[ActivityEntry]) -> list[ActivityEntry]:
        """Entries whose reason is kept in their message's meta (REASON_KEY), with it again in `data`. A
        message forgotten since takes its reason with it."""
        wanted: dict[int, list[ActivityEntry]] = {}
        for entry in entries:
            data = entry.data or {}
            if data.get(REASON_KEY) and isinstance(data.get("message_id"), int):
                wanted.setdefault(data["message_id"], []).append(entry)
        ids = list(wanted)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.db.execute(
                "select id, json_extract(meta, '$.autonomous') from messages "
                f"where id in ({','.join('?' * len(chunk))}) and json_valid(meta)",
                chunk,
            ).fetchall()
            for message_id, reason in rows:
                try:
                    kept = json.loads(reason) if reason else None
                except ValueError:
                    kept = None
                if not isinstance(kept, dict):
                    continue
                for entry in wanted[message_id]:
                    shared = {k: _clip_data(kept[k], 1) for k in REASON_BY_REFERENCE if k in kept}
                    entry.data = {**shared, **(entry.data or {})}
        for group in wanted.values():
            for entry in group:
                entry.data.pop(REASON_KEY, None)  # type: ignore[union-attr]
        return entries

    def count(
        self,
        since: str | datetime | None = None,
        kinds: Iterable[str] | None = None,
        text: str = "",
        *,
        templates: Iterable[str] = (),
    ) -> int:
        """How many entries `page` would go through with these filters."""
        where, params = _where(since, None, kinds, text, templates)
        sql, params = _timeline(where, params)
        return int(self.db.execute(f"select count(*) from ({sql})", params).fetchone()[0])

    def kinds(self) -> list[str]:
        """The kinds present in this timeline."""
        sql = "select kind from activity union select kind from activity_daily order by kind"
        return [r[0] for r in self.db.execute(sql)]

    # -- helpers for the writers: one call each, the summary made here so every entry reads alike ---------
    def message(self, message_id: int, speaker: str, text: str, *, role: str = "") -> int | None:
        """A message said by the user or the persona (summary: speaker and a snippet; a speaker given as
        a notice, such as the person's own "user", is translated where the entry is shown)."""
        return self.append(
            "message",
            joined((speaker, text), ": "),
            message_id=message_id,
            data={"speaker": speaker, "role": role, "chars": len(text)},
        )

    def emotion(
        self, label: str, value: float, confidence: float, *, message_id: int | None = None, snippet: str = ""
    ) -> int | None:
        """The emotion detected in a user message: data {label, value, confidence}. The label may be a
        notice (mind.labels.label_word), so the window names the feeling in the person's language."""
        head = notice(
            "{label} ({value:+.2f}, confidence {confidence:.2f})",
            label=label,
            value=value,
            confidence=confidence,
        )
        return self.append(
            "emotion",
            joined((head, snippet), ": ") if snippet else head,
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
        """A change to a memory component. With item_id, forgetting that item blanks this entry. The
        component's name (and what happened) may be notices: the window shows them translated."""
        data: dict[str, Any] = {"component": component, **extra}
        if item_id is not None:
            data["item_id"] = item_id
        return self.append("memory_write", joined((component, what), ": "), message_id=message_id, data=data)

    def compression(self, summary: str, covered_ids: list[int]) -> int | None:
        """Older turns summarised into the running summary (the ids it covers)."""
        said = (
            notice(
                "messages {first}–{last} summarised: {summary}",
                first=min(covered_ids),
                last=max(covered_ids),
                summary=summary,
            )
            if covered_ids
            else notice("no messages summarised: {summary}", summary=summary)
        )
        return self.append(
            "compression",
            said,
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
