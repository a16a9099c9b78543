"""Bounded growth: what a persona records because time passes keeps its detail for DETAIL_DAYS, then becomes
one line a day (issue 23, defect 13).

Left alone, memory.db grew by ~73 KB a simulated day, most of it not what anyone said: a heartbeat entry every
hour ("nothing to do"), a drive_history row every quarter hour, and a timeline entry for every message and
emotion (copies of the conversation and of emotion_log, which stay). Once a day, at a quiet time, the
persona's runtime (runtime/life.py, the "retention" job) calls apply():

- the timeline entries of ROLLED_UP_KINDS older than the window (heartbeats: SHORTER_DETAIL) become one
  activity_daily row per day and kind (how many, and for some a tally: who spoke, which drive led); the rest
  of the timeline (dreams, what it wrote first, events, tool calls, memory writes, imports, errors) is kept
  whole;
- drive_history rows older than the window become one drive_daily row per day: each drive's mean, min and
  max, the day's most frequent dominant drive and its last narrative (a row kept that read a drive's inputs
  from one of them stores them first: memory/drive_history.py);
- finished dreams older than the window keep what the CLI and the window read (their result, each stage's
  state) and drop each stage's own output (only a dream cut off part-way resumes from it, and the result
  holds what was written);
- the timeline entries of messages written first that still hold the reason their message's meta holds
  (written before memory/activity.REASON_KEY) refer to it instead;
- replies older than the window drop the diagnostics of how they were made (DIAGNOSTICS: timings, tokens,
  speed; the model that wrote them stays), and messages written first the drives' inputs behind their
  reason (the drive points those came from are daily lines by then; the trigger, the levels and the words
  of why stay, which is what the window shows beside the message);
- the vector log (archive/mirror.py: how in-memory mirrors of the vector index follow other connections)
  keeps its newest VECTOR_LOG_KEEP rows; mirrors behind that reload once;
- a vector kept for a text no archive item is made of any more (the item forgotten or deleted, its text
  or embedded text changed: archive.vectors caches vectors by the text's hash and never removed one) goes,
  so the words of what the person forgot leave the vectors too;
- free pages go back to the file system (incremental vacuum; a database made before this is converted by
  one VACUUM, the first time it runs); when deletes have left FRAGMENTED_SHARE of the file unused inside
  pages (rows are appended at the end of the table, so the holes older rows left are never filled), a
  small database is rewritten by one VACUUM.

Readers see both: the timeline reads the activity_timeline view, the drive plot reads the daily points
before the detailed ones (mind/state.history). A day is the persona's local date. Nothing said by the person
or the persona is removed here.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

import sqlite_utils

from nexus_ark.clock import iso
from nexus_ark.memory import drive_history
from nexus_ark.memory.activity import NOTICE_KEY, clip, compact_json, reason_by_reference
from nexus_ark.memory.archive import prune_vector_log
from nexus_ark.memory.db import sqlite
from nexus_ark.memory.dream_jobs import DreamJobs
from nexus_ark.notices import notice, stored

log = logging.getLogger(__name__)

DETAIL_DAYS = 14
# Routine or copied entries: heartbeats that did nothing, drive changes (drive_daily keeps the levels), and
# the copies of messages and emotions. A kind not named here (a later version's) is kept whole.
ROLLED_UP_KINDS = ("heartbeat", "drives", "message", "emotion")
# What a day's line counts for each kind (from the entry's data). Heartbeats keep only their number (their
# reasons carry levels, "curiosity 0.48 is below…", all different); emotions keep none, so a forgotten
# message leaves no feeling behind in a daily line.
TALLY_KEYS = {"drives": "dominant", "message": "speaker"}
# Kinds whose detail is worth less than the window's: a heartbeat that did nothing says why it did not write
# ("quiet hours", "curiosity 0.48 is below its threshold"), which answers "why has it not written?" for the
# day or two before, not a fortnight later (238 of them were 81 KB of a 90-day timeline).
SHORTER_DETAIL = {"heartbeat": 3}
TALLY_ITEMS = 10
DRIVE_COLUMNS = drive_history.DRIVES  # drive_history's level columns
BATCH = 5_000  # rows per transaction: a person's turn never waits behind one long write
VACUUM_MIN_FREE = 64  # pages: below this, free pages are left for the next writes to reuse
# Space unused inside pages (dbstat) at which a whole VACUUM rewrites the file, at least FRAGMENTED_MIN
# bytes, and only while the file is at most VACUUM_MAX_BYTES (a rewrite of 64 MB takes about a second;
# a turn waits behind it).
FRAGMENTED_SHARE = 0.2
FRAGMENTED_MIN = 256 * 1024
VACUUM_MAX_BYTES = 64 * 1024 * 1024
VECTOR_LOG_KEEP = 256  # vector_log rows kept (a mirror that is further behind reloads)
# What a reply's meta says about how it was made (agent/turn.py): read for the last reply (the status bar's
# speed, the prompt's timings), kept for the window. `cut_by_limit` goes only where it is false (a reply cut
# off keeps it: the window offers to continue it); `autonomous.inputs` is the drives' inputs of a message
# written first.
DIAGNOSTICS = ("$.timings", "$.tokens", "$.first_token_s", "$.tokens_per_s", "$.autonomous.inputs")


@dataclass
class RetentionReport:
    activity_rolled: int = 0  # timeline entries folded into daily lines
    drive_rolled: int = 0  # drive_history rows folded into daily points
    bytes_freed: int = 0  # returned to the file system
    vacuumed: bool = False  # the one-time VACUUM that turns incremental vacuum on
    dreams_slimmed: int = 0  # finished dreams whose stage outputs were dropped
    messages_slimmed: int = 0  # messages whose diagnostics were dropped
    reasons_referred: int = 0  # entries of messages written first that now refer to the message's reason
    vector_log_pruned: int = 0
    vectors_pruned: int = 0  # cached vectors of texts no item is made of any more
    stopped: bool = False  # gave way to the person: the rest is done next time


def cutoff(now: datetime, detail_days: int = DETAIL_DAYS) -> datetime:
    """The start of the oldest local day kept in detail (`now`: the persona's local time, aware)."""
    first_kept = now.date() - timedelta(days=detail_days - 1)
    return datetime.combine(first_kept, time(0), now.tzinfo)


def apply(
    db: sqlite_utils.Database,
    now: datetime,
    *,
    detail_days: int = DETAIL_DAYS,
    give_way: threading.Event | None = None,
) -> RetentionReport:
    """Roll up what is older than the window and give free pages back. On the memory's owner connection
    (the runtime's queue thread); between batches it stops when `give_way` is set."""
    tz = now.tzinfo or UTC
    before = iso(cutoff(now, detail_days).astimezone(UTC))
    report = RetentionReport()
    while not _stop(give_way, report):
        rolled = _roll_up_drives(db, before, tz)
        report.drive_rolled += rolled
        if rolled < BATCH:
            break
    while not _stop(give_way, report):
        rolled = _roll_up_activity(db, now, tz, detail_days)
        report.activity_rolled += rolled
        if rolled < BATCH:
            break
    while not _stop(give_way, report):
        slimmed = _slim_dreams(db, before)
        report.dreams_slimmed += slimmed
        if slimmed < BATCH:
            break
    after: int | None = 0
    while after is not None and not _stop(give_way, report):
        referred, after = _refer_reasons(db, after)
        report.reasons_referred += referred
    while not _stop(give_way, report):
        slimmed = _slim_messages(db, before)
        report.messages_slimmed += slimmed
        if slimmed < BATCH:
            break
    if not _stop(give_way, report):
        with db.atomic():
            report.vector_log_pruned = prune_vector_log(db, VECTOR_LOG_KEEP)
    while not _stop(give_way, report):
        pruned = _prune_vectors(db)
        report.vectors_pruned += pruned
        if pruned < BATCH:
            break
    if not report.stopped:
        _reclaim(db, report)
    if report.activity_rolled or report.drive_rolled or report.bytes_freed:
        log.info(
            "retention: %d timeline entries and %d drive points older than %s rolled up into days, "
            "%d bytes freed%s",
            report.activity_rolled,
            report.drive_rolled,
            before,
            report.bytes_freed,
            " (vacuumed)" if report.vacuumed else "",
        )
    return report


def _stop(give_way: threading.Event | None, report: RetentionReport) -> bool:
    if give_way is not None and give_way.is_set():
        report.stopped = True
    return report.stopped


def _local_day(stamp: str, tz: Any) -> str:
    dt = datetime.fromisoformat(stamp)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(tz).date().isoformat()


def _delete(db: sqlite_utils.Database, table: str, ids: list[int]) -> None:
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        db.execute(f"delete from {table} where id in ({','.join('?' * len(chunk))})", chunk)


# -- drive_history → drive_daily ----------------------------------------------------------------------
def _roll_up_drives(db: sqlite_utils.Database, before: str, tz: Any) -> int:
    history = drive_history.DriveHistory(db)
    with db.atomic():
        # The newest row always stays: recompute() compares the drives with it.
        rows = history.older_than(before, BATCH)
        days: dict[str, list[tuple]] = {}
        for row in rows:
            days.setdefault(_local_day(row[1], tz), []).append(row)
        for day, day_rows in days.items():
            _merge_drive_day(history, day, day_rows)
        gone = [r[0] for r in rows]
        drive_history.keep_readable(db, gone)  # rows kept may read inputs from these
        history.delete(gone)
    return len(rows)


def _merge_drive_day(history: drive_history.DriveHistory, day: str, rows: list[tuple]) -> None:
    n = len(rows)
    seconds = sum(datetime.fromisoformat(r[1]).timestamp() for r in rows)
    stats: dict[str, list[float]] = {}
    for i, name in enumerate(DRIVE_COLUMNS):
        values = [r[2 + i] for r in rows]
        stats[name] = [sum(values) / n, min(values), max(values)]
    dominants = Counter(r[6] for r in rows if r[6])
    narrative = rows[-1][7] or ""
    old = history.day(day)
    if old is not None:  # a day already rolled up (rows written late, or a batch cut a day in two)
        m = old[1]
        seconds += datetime.fromisoformat(old[0]).timestamp() * m
        for i, name in enumerate(DRIVE_COLUMNS):
            mean, low, high = old[4 + 3 * i : 7 + 3 * i]
            stats[name] = [
                (stats[name][0] * n + mean * m) / (n + m),
                min(stats[name][1], low),
                max(stats[name][2], high),
            ]
        narrative = narrative or old[3]
        n += m
    when = iso(datetime.fromtimestamp(seconds / n, UTC))
    dominant = dominants.most_common(1)[0][0] if dominants else (old[2] if old is not None else None)
    values = [v for name in DRIVE_COLUMNS for v in stats[name]]
    history.put_day(day, when, n, dominant, narrative, values)


# -- activity → activity_daily ------------------------------------------------------------------------
def _roll_up_activity(db: sqlite_utils.Database, now: datetime, tz: Any, detail_days: int) -> int:
    days = {kind: min(SHORTER_DETAIL.get(kind, detail_days), detail_days) for kind in ROLLED_UP_KINDS}
    befores = {kind: iso(cutoff(now, n).astimezone(UTC)) for kind, n in days.items()}
    with db.atomic():
        rows = db.execute(
            "select id, time, kind, data from activity where "
            + " or ".join(["(kind = ? and time < ?)"] * len(befores))
            + " order by time, id limit ?",
            [*(v for pair in befores.items() for v in pair), BATCH],
        ).fetchall()
        groups: dict[tuple[str, str], list[tuple]] = {}
        for row in rows:
            groups.setdefault((_local_day(row[1], tz), row[2]), []).append(row)
        for (day, kind), group in groups.items():
            _merge_activity_day(db, day, kind, group, days[kind])
        _delete(db, "activity", [r[0] for r in rows])
    return len(rows)


def _tally(kind: str, data: str | None) -> str | None:
    key = TALLY_KEYS.get(kind)
    if key is None or not data:
        return None
    try:
        value = json.loads(data).get(key)
    except (ValueError, AttributeError):
        return None
    return clip(str(value), 80) if value not in (None, "") else None


def _merge_activity_day(
    db: sqlite_utils.Database, day: str, kind: str, rows: list[tuple], detail_days: int
) -> None:
    count = len(rows)
    newest = max(r[1] for r in rows)
    tally = Counter(t for r in rows if (t := _tally(kind, r[3])) is not None)
    old = db.execute("select time, count, data from activity_daily where day = ? and kind = ?", [day, kind])
    previous = old.fetchone()
    if previous is not None:
        newest = max(newest, previous[0])
        count += previous[1]
        kept = json.loads(previous[2] or "{}").get("tally") or {}
        tally.update({str(k): int(v) for k, v in kept.items()})
    summary = notice(
        "{count} that day, in one line (the detail is kept for {days} days)",
        count=count,
        days=detail_days,
    )
    data: dict[str, Any] = {"day": day, "count": count, "summarised": True}
    if tally:
        data["tally"] = dict(tally.most_common(TALLY_ITEMS))
    data[NOTICE_KEY] = json.loads(stored(summary) or "null")
    db.execute(
        "insert into activity_daily (day, kind, time, count, summary, data) values (?, ?, ?, ?, ?, ?) "
        "on conflict(day, kind) do update set time = excluded.time, count = excluded.count, "
        "summary = excluded.summary, data = excluded.data",
        [day, kind, newest, count, "", compact_json(data)],  # the English: from the notice
    )


# -- dreams and the reasons of messages written first ----------------------------------------------
def _slim_dreams(db: sqlite_utils.Database, before: str) -> int:
    """Finished dreams older than the window: each stage keeps its state, not its output."""
    jobs = DreamJobs(db)
    with db.atomic():
        rows = jobs.detailed_before(before, BATCH)
        for job_id, stages in rows:
            kept = {
                name: {"state": record.get("state", "done")} if isinstance(record, dict) else record
                for name, record in stages.items()
            }
            jobs.replace_stages(job_id, kept)
    return len(rows)


def _slim_messages(db: sqlite_utils.Database, before: str) -> int:
    """Messages older than the window without the DIAGNOSTICS of how they were made. The entries of
    messages written first that refer to their reason (memory/activity.REASON_KEY) are referred to first,
    so an entry that still held the inputs is not left with a reason it can no longer match."""
    held = " or ".join(f"json_type(meta, '{path}') is not null" for path in DIAGNOSTICS)
    paths = ", ".join(f"'{path}'" for path in DIAGNOSTICS)
    with db.atomic():
        return db.execute(
            f"update messages set meta = json_remove(meta, {paths}, "
            "case when json_type(meta, '$.cut_by_limit') = 'false' then '$.cut_by_limit' else '$.-' end) "
            "where id in (select id from messages where created_at < ? and status != 'streaming' "
            f"and json_valid(meta) and ({held} or json_type(meta, '$.cut_by_limit') = 'false') limit ?)",
            [before, BATCH],
        ).rowcount


def _refer_reasons(db: sqlite_utils.Database, after: int) -> tuple[int, int | None]:
    """Entries of messages written first stored before REASON_KEY, after entry `after`: (how many now refer
    to their message's reason, the last entry read; None when none was left)."""
    with db.atomic():
        rows = db.execute(
            "select id, data from activity where kind = 'autonomy' and id > ? and json_valid(data) "
            "and json_type(data, '$.message_id') = 'integer' "
            "and json_type(data, '$.reason_in_message') is null "
            "and json_type(data, '$.inputs') is not null order by id limit ?",
            [after, BATCH],
        ).fetchall()
        referred = 0
        for entry_id, data in rows:
            slim = reason_by_reference(db, data)
            if slim != data:
                db.execute("update activity set data = ? where id = ?", [slim, entry_id])
                referred += 1
    return referred, (rows[-1][0] if len(rows) == BATCH else None)


def _prune_vectors(db: sqlite_utils.Database) -> int:
    """Cached vectors (embeddings, by the hash of the text embedded) that no archive item's text is."""
    with db.atomic():
        return db.execute(
            "delete from embeddings where id in (select id from embeddings where hash not in "
            "(select embed_hash from items where embed_hash is not null) limit ?)",
            [BATCH],
        ).rowcount


# -- space --------------------------------------------------------------------------------------------
def _reclaim(db: sqlite_utils.Database, report: RetentionReport) -> None:
    """Free pages back to the file system. A database created without auto_vacuum (every one before this)
    is converted by one VACUUM, which rewrites the file; after that, incremental vacuum is cheap."""
    page_size = db.execute("pragma page_size").fetchone()[0]
    pages = db.execute("pragma page_count").fetchone()[0]
    free = db.execute("pragma freelist_count").fetchone()[0]
    try:
        if db.execute("pragma auto_vacuum").fetchone()[0] != 2:
            db.execute("pragma auto_vacuum = incremental")
            db.execute("vacuum")
            report.vacuumed = True
        elif _fragmented(db, page_size * pages):
            db.execute("vacuum")
            report.vacuumed = True
        elif free >= VACUUM_MIN_FREE:
            db.execute("pragma incremental_vacuum").fetchall()  # one page per row: read them all
        else:
            return
        db.execute("pragma wal_checkpoint(truncate)").fetchall()  # the WAL held the rewritten pages
    except sqlite.Error as exc:  # another connection was writing, or the disk is full: next time
        log.warning("retention: free pages not reclaimed: %s", exc)
        return
    report.bytes_freed = max(0, (pages - db.execute("pragma page_count").fetchone()[0]) * page_size)


def _fragmented(db: sqlite_utils.Database, size: int) -> bool:
    """Whether FRAGMENTED_SHARE of a small file is unused space inside its pages (free pages included)."""
    if size > VACUUM_MAX_BYTES:
        return False
    try:
        unused = db.execute("select coalesce(sum(unused), 0) from dbstat").fetchone()[0]
    except sqlite.Error:  # an SQLite built without dbstat
        return False
    free = db.execute("pragma freelist_count").fetchone()[0] * db.execute("pragma page_size").fetchone()[0]
    waste = unused + free
    return waste >= FRAGMENTED_MIN and waste >= FRAGMENTED_SHARE * size
