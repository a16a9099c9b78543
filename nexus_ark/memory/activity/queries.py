"""The SQL that reads a timeline: its entries and the daily lines older routine entries were rolled up
into, filtered by time, kind and words."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from nexus_ark.clock import iso
from nexus_ark.memory.activity.entries import NOTICE_KEY, ActivityEntry, clip
from nexus_ark.notices import from_stored


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


def timeline_query(where: str, params: list[Any]) -> tuple[str, list[Any]]:
    """The entries and the daily lines that match `where`, as one compound select (each half keeps its
    index; ORDER BY and LIMIT go after it)."""
    return (
        f"select {_COLUMNS} from activity{where} union all select {_COLUMNS} from {_DAILY}{where}",
        [*params, *params],
    )


# The SQL function (registered on the timeline's connection by ActivityLog) that gives a stored notice's
# English, as its summary read: a text filter matches the sentence a person saw, template and values alike.
ENGLISH_FUNCTION = "nexus_notice_english"


def notice_english(raw: str | None) -> str | None:
    """The English summary a stored notice says (None for none)."""
    return clip(str(from_stored(raw))) if isinstance(raw, str) and raw else None


def entry_of(row: tuple) -> ActivityEntry:
    i, t, k, s, m, d = row
    data = json.loads(d) if d else None
    kept = data.pop(NOTICE_KEY, None) if isinstance(data, dict) else None
    if isinstance(kept, dict):  # kept as a JSON value (entries written before: a string of JSON)
        kept = json.dumps(kept, ensure_ascii=False)
    if not s and isinstance(kept, str):  # a summary kept as its notice only: its English made again
        s = notice_english(kept) or ""
    return ActivityEntry(
        id=i,
        time=t,
        kind=k,
        summary=s,
        message_id=m,
        data=data or None,  # only a notice was stored: the writer gave no data
        summary_notice=kept if isinstance(kept, str) else None,
    )


def _as_stored(template: str) -> tuple[str, str]:
    """How a notice's template reads in the data column: a JSON value inside the data's compact JSON, and
    (entries written before) JSON as a string inside it."""
    inner = json.dumps({"template": template}, ensure_ascii=False)[1:-1]
    compact = json.dumps({"template": template}, ensure_ascii=False, separators=(",", ":"))[1:-1]
    return compact, json.dumps(inner, ensure_ascii=False)[1:-1]


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def where_clause(
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
        # The words in the English summary (or in its notice's template and values, when only the notice
        # is kept), or a sentence of ours that says them in the person's language (its template is kept in
        # data: see NOTICE_KEY).
        templates = list(templates)
        said = [
            "summary like ? escape '\\'",
            f"(summary = '' and {ENGLISH_FUNCTION}(json_extract(data, '$.{NOTICE_KEY}')) like ? escape '\\')",
        ] + ["data like ? escape '\\'"] * (2 * len(templates))
        clauses.append(f"({' or '.join(said)})")
        params.extend([_like(text), _like(text), *(_like(form) for t in templates for form in _as_stored(t))])
    return (f" where {' and '.join(clauses)}" if clauses else ""), params
