"""The timeline of one persona: ActivityLog writes entries (one helper per kind of writer, so every entry
reads alike) and reads them back a page or a period at a time."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import sqlite_utils

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.memory.activity.entries import (
    KIND_PATTERN,
    NOTICE_KEY,
    REASON_BY_REFERENCE,
    REASON_KEY,
    ActivityEntry,
    clip,
    clip_data,
    compact_json,
    kept_notice,
)
from nexus_ark.memory.activity.queries import (
    ENGLISH_FUNCTION,
    entry_of,
    notice_english,
    timeline_query,
    where_clause,
)
from nexus_ark.memory.db import sqlite
from nexus_ark.notices import joined, notice

log = logging.getLogger(__name__)


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
    if not shared or any(clip_data(reason[k], 1) != fields[k] for k in shared):
        return payload
    for key in shared:
        del fields[key]
    fields[REASON_KEY] = True
    return compact_json(fields)


class ActivityLog:
    """The timeline of one persona. Writes go through the caller's connection, so an entry lands in the
    caller's open transaction (a memory write and its entry commit or vanish together)."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or SystemClock()
        # A summary kept as its notice only is searched as the English it says (queries.where_clause).
        db.conn.create_function(ENGLISH_FUNCTION, 1, notice_english, deterministic=True)

    def append(
        self, kind: str, summary: str, *, message_id: int | None = None, data: Mapping[str, Any] | None = None
    ) -> int | None:
        """Record one entry; returns its id, or None when it could not be written. Never raises for a
        failed write: the timeline must not cost anyone a turn or a memory (the failure is logged).

        summary: English; a notice (nexus_ark.notices) keeps its template and values in `data` instead, so a
        window can show it translated (the English is made from it when read: the `summary` column stays
        empty rather than hold the same words twice)."""
        if not KIND_PATTERN.match(kind):
            log.error("activity entry with a bad kind %r not recorded", kind)
            return None
        kept = kept_notice(summary)
        try:
            fields = clip_data(dict(data)) if data else {}
            if kept is not None:  # after the clipping: it is bounded already, and must stay whole to be read
                fields[NOTICE_KEY] = json.loads(kept)  # a JSON value, not a string of JSON escaped again
            payload = compact_json(fields) if fields else None
        except (TypeError, ValueError) as exc:
            log.error("activity data for %s not recorded: %s", kind, exc)
            payload = compact_json({NOTICE_KEY: json.loads(kept)}) if kept is not None else None
        if kind == "autonomy" and payload is not None:
            payload = reason_by_reference(self.db, payload)
        conn = self.db.conn
        in_transaction = conn.in_transaction
        try:
            cur = conn.execute(
                "insert into activity (time, kind, summary, message_id, data) values (?,?,?,?,?)",
                [
                    iso(self.clock.now().astimezone(UTC)),
                    kind,
                    "" if kept else clip(summary),
                    message_id,
                    payload,
                ],
            )
        except sqlite.Error as exc:
            if in_transaction and not conn.in_transaction:
                raise  # SQLite rolled the caller's whole transaction back (disk full): the caller must know
            log.warning("activity entry %s not recorded: %s", kind, exc)
            return None
        return int(cur.lastrowid or 0)

    def query(
        self,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        kinds: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> list[ActivityEntry]:
        """Entries between since and until (inclusive), of these kinds, oldest first; with a limit, the
        newest `limit` of them (still oldest first, as a timeline reads)."""
        sql, params = timeline_query(*where_clause(since, until, kinds))
        sql += " order by time desc, id desc"
        if limit is not None:
            sql += " limit ?"
            params.append(max(0, int(limit)))
        return self._with_reasons(
            [entry_of(row) for row in reversed(self.db.execute(sql, params).fetchall())]
        )

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
        where, params = where_clause(since, None, kinds, text, templates)
        keys = []
        if before is not None:
            keys.append("(time < ? or (time = ? and id < ?))")
            params.extend([before[0], before[0], before[1]])
        if after is not None:
            keys.append("(time > ? or (time = ? and id > ?))")
            params.extend([after[0], after[0], after[1]])
        if keys:
            where = f"{where} and {' and '.join(keys)}" if where else f" where {' and '.join(keys)}"
        sql, params = timeline_query(where, params)
        sql += " order by time desc, id desc limit ?"
        rows = self.db.execute(sql, [*params, max(0, int(limit))]).fetchall()
        return self._with_reasons([entry_of(row) for row in rows])

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
                    shared = {k: clip_data(kept[k], 1) for k in REASON_BY_REFERENCE if k in kept}
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
        where, params = where_clause(since, None, kinds, text, templates)
        sql, params = timeline_query(where, params)
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
        self,
        name: str,
        arguments: Mapping[str, Any] | str,
        result: str,
        *,
        message_id: int | None = None,
        why: str = "",
    ) -> int | None:
        """A tool the persona called, with its arguments, (a snippet of) its result, and why it ran or did
        not (an MCP tool: "always", "once", "denied", "never", "not asked")."""
        args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        data: dict[str, Any] = {"name": name, "arguments": arguments, "result": result}
        if why:
            data["why"] = why
        return self.append(
            "tool_call",
            f"{name}({clip(args_text, 60)}) → {result}" + (f" [{why}]" if why else ""),
            message_id=message_id,
            data=data,
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
