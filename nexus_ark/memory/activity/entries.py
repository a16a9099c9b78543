"""What one timeline entry holds, and how it is kept small: the kinds, the limits, clipping of summaries
and data, and the notice kept beside a summary so a window can translate it."""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from nexus_ark.notices import Joined, Notice, from_stored, stored

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
    "soul",
)
SUMMARY_CHARS = 160
DATA_TEXT_CHARS = 300
DATA_ITEMS = 20
REDACTED = "(forgotten)"
NOTICE_KEY = "summary_notice"  # in the stored `data`: the summary's template and values (notices.stored)
# A message written first keeps its reason (drive levels, their inputs, the narrative: ~1.1 KB) in its own
# meta["autonomous"]; its "autonomy" entry stores the parts it shares with it once, there, and says so under
# this key (issue 23, defect 13). Readers get the entry's data whole again (ActivityLog._with_reasons).
# Entries that refer to it without the last five (stored before they were) keep their own copy of those.
REASON_KEY = "reason_in_message"
REASON_BY_REFERENCE = (
    "narrative",
    "levels",
    "inputs",
    "time",
    "trigger",
    "drive",
    "level",
    "why",
    "event_id",
)
KIND_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


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


def compact_json(value: Any) -> str:
    """Stored data as JSON without the spaces after separators (a timeline holds thousands of entries)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def kept_notice(summary: str) -> str | None:
    """The summary's template and values to store (notices.stored), or None when it has none to keep."""
    if not _translatable(summary):
        return None
    try:
        return stored(_bounded(summary))
    except (TypeError, ValueError, KeyError, IndexError) as exc:  # a value the template cannot format
        log.error("the template of an activity summary not kept: %s", exc)
        return None


def clip_data(value: Any, depth: int = 0) -> Any:
    """JSON-safe and bounded: long strings clipped, long lists and objects cut, deep nesting flattened."""
    if isinstance(value, str):
        return clip(value, DATA_TEXT_CHARS) if len(value) > DATA_TEXT_CHARS else value
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= 3:
        return clip(json.dumps(value, ensure_ascii=False, default=str), DATA_TEXT_CHARS)
    if isinstance(value, Mapping):
        items = list(value.items())[:DATA_ITEMS]
        return {str(k): clip_data(v, depth + 1) for k, v in items}
    if isinstance(value, Iterable):
        return [clip_data(v, depth + 1) for _, v in zip(range(DATA_ITEMS), value, strict=False)]
    return clip(str(value), DATA_TEXT_CHARS)
