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

from nexus_ark.memory.activity.entries import (
    DATA_ITEMS,
    DATA_TEXT_CHARS,
    KINDS,
    NOTICE_KEY,
    REASON_BY_REFERENCE,
    REASON_KEY,
    REDACTED,
    SUMMARY_CHARS,
    ActivityEntry,
    clip,
    compact_json,
)
from nexus_ark.memory.activity.queries import to_utc_iso
from nexus_ark.memory.activity.timeline import ActivityLog, reason_by_reference

__all__ = [
    "DATA_ITEMS",
    "DATA_TEXT_CHARS",
    "KINDS",
    "NOTICE_KEY",
    "REASON_BY_REFERENCE",
    "REASON_KEY",
    "REDACTED",
    "SUMMARY_CHARS",
    "ActivityEntry",
    "ActivityLog",
    "clip",
    "compact_json",
    "reason_by_reference",
    "to_utc_iso",
]
