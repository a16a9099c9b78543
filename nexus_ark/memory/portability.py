"""A persona's whole memory out and back in: readable Markdown for people, JSON for the round trip;
and rotating backups of memory.db taken with SQLite's online backup API (consistent while the app runs)."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from nexus_ark.clock import Clock, SystemClock, time_problem
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.db import connect, sqlite
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import clipped, notice
from nexus_ark.paths import WINDOWS_RESERVED

log = logging.getLogger(__name__)

# Tables in an order that respects their references. Vectors are not exported: they are derived from
# the text and rebuilt by embedding after an import.
TABLES = (
    "messages",
    "items",
    "core_memory",
    "notepad",
    "episodes",
    "entities",
    "insights",
    "goals",
    "reflection_meta",
    "drives",
    "open_questions",
    "emotion_log",
    "drive_history",
    "drive_daily",  # the days retention rolled drive_history up into: the plot before the last 14 days
    "dream_jobs",
    "kb_documents",
    "kb_chunks",
    "soul_versions",
    "soul_proposals",
    "activity",  # the timeline: what the persona did and why, and its older days in one line each
    "activity_daily",
)
FORMAT = "nexus-ark-memory"
VERSION = 1


def export_folder(folder: Path, persona_name: str, now: datetime) -> Path:
    """Where an export into `folder` goes: `folder` itself when it is new or empty, else a new subfolder
    in it named for the persona and the time ("Aria-memory-20261127-0930"), so no file already there is
    overwritten (an export once replaced the memory.md of another persona's export in the same folder)."""
    try:
        empty = not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))
    except OSError:
        empty = False  # unreadable: mkdir below says why
    if empty:
        return folder
    base = re.sub(r"[^\w]+", "-", persona_name).strip("-")[:40]
    stem = "-".join(p for p in (base, "memory", now.strftime("%Y%m%d-%H%M%S")) if p)
    target, n = folder / stem, 2
    while target.exists():
        target, n = folder / f"{stem}-{n}", n + 1
    return target


def export_memory(store: MemoryStore, folder: Path, persona_name: str = "") -> Path:
    """Write the memory as Markdown and memory.json into `folder`, or into a new subfolder of it when it
    holds files already (export_folder). Returns the memory.json written: its parent says where."""
    folder = export_folder(folder, persona_name, store.messages.clock.now().astimezone())
    folder.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"format": FORMAT, "version": VERSION, "persona": persona_name, "tables": {}}
    for table in TABLES:
        data["tables"][table] = list(store.db.query(f"select * from {table} order by rowid"))
    (folder / "memory.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    _write_markdown(store, folder, persona_name)
    return folder / "memory.json"


def import_memory(store: MemoryStore, folder: Path) -> int:
    """Load an export into an empty memory. Returns the number of rows written."""
    path = folder / "memory.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NexusArkError(
            notice("{path} is not a Nexus Ark memory export: {problem}", path=str(path), problem=str(exc))
        ) from exc
    if data.get("format") != FORMAT:
        raise NexusArkError(
            notice(
                "{path} is not a Nexus Ark memory export (format {format!r}).",
                path=str(path),
                format=data.get("format"),
            )
        )
    if data.get("version", 0) > VERSION:
        raise NexusArkError(
            notice(
                "{path} was exported by a newer Nexus Ark (version {version}).",
                path=str(path),
                version=data["version"],
            )
        )
    if store.db.execute("select count(*) from items").fetchone()[0] or store.messages.count():
        raise NexusArkError(
            notice(
                "{path} already holds memories; import into a new persona so nothing is mixed or lost.",
                path=str(store.path),
            )
        )
    _check_times(path, data["tables"])
    written = 0
    with store.db.atomic():
        # The soul's history comes with the memory; what the new persona recorded of its own soul so far
        # gives way (its persona.md now becomes a version again at the next open, if it differs).
        store.db.execute("delete from soul_proposals")
        store.db.execute("delete from soul_versions")
        # So does its timeline so far (its first entries): the imported one is the persona's life.
        store.db.execute("delete from activity")
        store.db.execute("delete from activity_daily")
        for table in TABLES:
            rows = data["tables"].get(table, [])
            for row in rows:
                cols = list(row)
                store.db.execute(
                    f"insert into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
                    [row[c] for c in cols],
                )
            written += len(rows)
    return written


_TIME_COLUMNS = ("created_at", "updated_at", "time", "timestamp", "read_at", "last_run")


def _check_times(path: Path, tables: dict[str, list[dict[str, Any]]]) -> None:
    """A memory.json from outside may hold a time a persona must never store (a year-1 date broke every
    later turn): refused whole, naming the table, the row and the value, before anything is written."""
    for table in TABLES:
        for number, row in enumerate(tables.get(table, []), start=1):
            for column in _TIME_COLUMNS:
                value = row.get(column) if isinstance(row, dict) else None
                if not isinstance(value, str):
                    continue
                try:
                    parsed = datetime.fromisoformat(value)
                except ValueError:
                    continue  # not a time this check can read: the database takes it as it did
                if problem := time_problem(parsed):
                    raise NexusArkError(
                        notice(
                            "{path}: table {table}, row {row}: {column} {value!r}: {problem}.",
                            path=str(path),
                            table=table,
                            row=number,
                            column=column,
                            value=clipped(value),
                            problem=problem,
                        ),
                        hint=notice("Nothing was restored."),
                    )


ENTITY_FILE_CHARS = 100  # far within the 255 bytes a file name may take, in UTF-8 too


def _entity_files(names: list[str]) -> list[str]:
    """A file name for each entity that every OS can create and no other entity takes: a lore entry named
    "con" was exported as entities/con.md (Windows refuses it), and "Mika" and "mika" wrote one file."""
    taken: set[str] = set()
    files = []
    for name in names:
        base = re.sub(r"[^\w\-]+", "_", name).strip("_")[:ENTITY_FILE_CHARS] or "entity"
        if base.casefold() in WINDOWS_RESERVED:
            base += "_"
        stem, n = base, 2
        while stem.casefold() in taken:  # Windows and macOS folders ignore case
            stem, n = f"{base}-{n}", n + 1
        taken.add(stem.casefold())
        files.append(f"{stem}.md")
    return files


def _write_markdown(store: MemoryStore, folder: Path, persona: str) -> None:
    c = store.components
    title = f" of {persona}" if persona else ""
    parts = [
        f"# Memory{title}\n",
        "## Core memory\n",
        c.core_memory() or "(empty)",
        "\n## Notepad\n",
        c.notepad() or "(empty)",
        "\n## Goals\n",
    ]
    for goal in c.goals(status=None):
        parts.append(f"- [{goal.status}] ({goal.term}-term, priority {goal.priority}) {goal.goal}")
    parts.append("\n## Episodes\n")
    for e in c.episodes():
        parts.append(f"### {e.date} ({e.emotional_tone})\n{e.summary}\n")
        parts.extend(f"- {k}" for k in e.key_events)
    parts.append("\n## Dream diary\n")
    for i in c.insights(limit=10_000):
        parts.append(
            f"### {i.created_at[:16]}: {i.trigger_topic}\n{i.insight}\n\n*Strategy:* {i.strategy}\n\n"
            f"> {i.log_entry}\n"
        )
    (folder / "memory.md").write_text("\n".join(parts) + "\n", encoding="utf-8")
    entities = folder / "entities"
    entities.mkdir(exist_ok=True)
    found = c.entities()
    for entity, file in zip(found, _entity_files([e.name for e in found]), strict=True):
        (entities / file).write_text(
            f"# {entity.name}\nUpdated: {entity.updated_at}\n\n{entity.text}\n", encoding="utf-8"
        )
    lines = ["# Conversations\n"]
    for m in store.messages.recent(limit=10_000_000):
        lines.append(f"**{m.speaker}** ({m.created_at[:16]}): {m.content}\n")
    (folder / "conversations.md").write_text("\n".join(lines), encoding="utf-8")
    _write_soul_versions(store, folder)


def _write_soul_versions(store: MemoryStore, folder: Path) -> None:
    """Every version of persona.md, byte for byte, as soul/NNNN-author.md, with an index of who and why."""
    rows = store.db.execute(
        "select id, created_at, author, reason, text from soul_versions order by id"
    ).fetchall()
    if not rows:
        return
    soul = folder / "soul"
    soul.mkdir(exist_ok=True)
    index = ["# Soul history\n"]
    for vid, created, author, reason, text in rows:
        name = f"{vid:04d}-{author}.md"
        (soul / name).write_bytes(text.encode("utf-8"))
        index.append(f"- [{name}]({name}) {created[:16]} {author}" + (f": {reason}" if reason else ""))
    (soul / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")


PARTIAL_PREFIX = "partial-memory-"  # a copy being written (hidden: a dot in front)


def backup(
    store: MemoryStore,
    folder: Path,
    *,
    keep: int = 7,
    clock: Clock | None = None,
    replaces: Path | None = None,
) -> Path:
    """Copy memory.db with the online backup API (safe while others write), keep the newest `keep`.
    `replaces`: an older copy this one supersedes, removed once the new one is whole."""
    clock = clock or SystemClock()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = clock.now().strftime("%Y%m%d-%H%M%S")
    target = folder / f"memory-{stamp}.db"
    # Copied into a new file, then renamed: a copy cut short (a crash, a full disk) never looks like the
    # newest backup, and a second copy in the same second never writes into the first one, which would
    # go through that file's WAL and end in a checkpoint inside close() (sqlean holds the GIL there).
    for stale in folder.glob(f".{PARTIAL_PREFIX}*"):
        stale.unlink(missing_ok=True)
    partial = folder / f".{PARTIAL_PREFIX}{stamp}.db"
    dest = sqlite.connect(str(partial))
    try:
        store.db.conn.backup(dest)
    except sqlite.Error as exc:
        dest.close()
        partial.unlink(missing_ok=True)
        raise NexusArkError(
            notice(
                "Could not back up {path} to {folder}: {problem}",
                path=str(store.path),
                folder=str(folder),
                problem=str(exc),
            )
        ) from exc
    try:  # a copy is one self-contained file: reading it later leaves no -wal and -shm beside it
        dest.execute("PRAGMA journal_mode = DELETE")
    except sqlite.Error as exc:
        log.warning("backup %s stays in WAL mode: %s", partial, exc)
    dest.close()
    os.replace(partial, target)
    if replaces is not None and replaces != target:
        remove_backup(replaces)
    for old in sorted(folder.glob("memory-*.db"))[:-keep]:
        remove_backup(old)
    tidy_backups(folder)
    return target


SIDECARS = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database file


def remove_backup(path: Path) -> None:
    """Delete a backup whole: the file and whatever SQLite left beside it."""
    for name in (path.name, *(path.name + suffix for suffix in SIDECARS)):
        (path.parent / name).unlink(missing_ok=True)


def tidy_backups(folder: Path) -> None:
    """Remove the -wal/-shm/-journal files of backups that are gone (rotation used to leave them: a copy
    kept the live database's WAL mode, and each read-only look at it made the pair, which a read-only
    connection never removes), and turn older copies still in WAL mode into self-contained files."""
    for sidecar in [p for suffix in SIDECARS for p in folder.glob(f"*{suffix}")]:
        if not (folder / sidecar.name.rsplit("-", 1)[0]).exists():
            sidecar.unlink(missing_ok=True)
    for kept in folder.glob("*.db"):
        if not kept.name.startswith(".") and _in_wal_mode(kept):
            try:
                conn = sqlite.connect(str(kept))
                try:
                    conn.execute("PRAGMA journal_mode = DELETE")  # folds any -wal in, removes the pair
                finally:
                    conn.close()
            except sqlite.Error as exc:
                log.warning("backup %s left in WAL mode: %s", kept, exc)


def _in_wal_mode(path: Path) -> bool:
    """Whether the database header says WAL (file format bytes 18-19 are 2)."""
    try:
        with path.open("rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[:16] == b"SQLite format 3\x00" and header[18] == 2


def backup_if_due(
    store: MemoryStore,
    folder: Path,
    *,
    every: timedelta = timedelta(days=1),
    keep: int = 7,
    clock: Clock | None = None,
    after_writes: bool = False,
) -> Path | None:
    """A rotating backup: a copy when the newest is older than `every`; the newest `keep` are kept.

    The copy taken when memory opens comes before that day's conversation. Call this again after the
    day's writes with after_writes=True (when memory closes, and after the first turn of a new day): if
    the memory changed since the newest copy, a fresh copy is taken, replacing the newest when that one
    is from the same day (so `keep` copies still cover `keep` days). Returns the new copy, or None."""
    clock = clock or SystemClock()
    now = clock.now().replace(tzinfo=None)
    newest, taken = _newest_backup(folder)
    if newest is None or taken is None or now - taken >= every:
        return backup(store, folder, keep=keep, clock=clock)
    if not after_writes or _fingerprint(store.db.conn) == _backup_fingerprint(newest):
        return None
    same_day = taken.date() == now.date()
    return backup(store, folder, keep=keep, clock=clock, replaces=newest if same_day else None)


def _newest_backup(folder: Path) -> tuple[Path | None, datetime | None]:
    latest = sorted(folder.glob("memory-*.db"))
    if not latest:
        return None, None
    try:
        return latest[-1], datetime.strptime(latest[-1].stem.removeprefix("memory-"), "%Y%m%d-%H%M%S")
    except ValueError:
        return latest[-1], None


# What a day's use changes: conversation and every memory item (components write items too).
_FINGERPRINT = (
    "select (select count(*) from messages), (select max(id) from messages), "
    "(select max(updated_at) from messages), (select count(*) from items), (select max(id) from items), "
    "(select max(updated_at) from items)"
)


def _fingerprint(conn: Any) -> tuple[Any, ...]:
    return tuple(conn.execute(_FINGERPRINT).fetchone())


def _backup_fingerprint(path: Path) -> tuple[Any, ...] | None:
    """Read-only and immutable, so no -wal or -shm is made even beside an older copy in WAL mode: a backup
    stays one self-contained file."""
    try:
        conn = sqlite.connect(f"file:{quote(path.resolve().as_posix())}?mode=ro&immutable=1", uri=True)
    except sqlite.Error:
        return None
    try:
        return _fingerprint(conn)
    except sqlite.Error:
        return None
    finally:
        conn.close()


def verify_backup(path: Path) -> int:
    """Open a backup and count its messages (proves it is a whole, readable database). Read-only: a
    writing connection would turn the copy back to WAL mode."""
    db = connect(path, read_only=True)
    try:
        return db.execute("select count(*) from messages").fetchone()[0]
    finally:
        db.close()


SAFETY_PREFIX = "before-restore-"  # the memory as it was before a restore: never rotated away


@dataclass(frozen=True)
class BackupInfo:
    path: Path
    kind: Literal["daily", "before-restore"]
    taken: datetime | None  # UTC (naive), as in the file's name
    size_bytes: int
    messages: int | None  # None: not a readable memory database


def list_backups(folder: Path) -> list[BackupInfo]:
    """A persona's backups, newest first: the rotating daily copies and the copies kept before a restore.
    Each is opened read-only to count its messages (which also proves it is a whole database)."""
    found = []
    for kind, prefix in (("daily", "memory-"), ("before-restore", SAFETY_PREFIX)):
        for path in folder.glob(f"{prefix}*.db"):
            try:
                stamp = path.stem.removeprefix(prefix)[:15]  # "-2" follows when two came in one second
                taken: datetime | None = datetime.strptime(stamp, "%Y%m%d-%H%M%S")
            except ValueError:
                taken = None
            fingerprint = _backup_fingerprint(path)
            found.append(
                BackupInfo(
                    path=path,
                    kind=kind,  # type: ignore[arg-type]
                    taken=taken,
                    size_bytes=path.stat().st_size,
                    messages=fingerprint[0] if fingerprint else None,
                )
            )
    return sorted(found, key=lambda b: (b.taken or datetime.min, b.path.name), reverse=True)


def copy_database(source: Path, target: Path) -> None:
    """Copy a memory database page by page with SQLite's online backup API: consistent while others
    write to the source, and safe into a target that is open elsewhere (its other connections see the
    copied content at their next read; nothing is replaced under them). A database keeps its journal mode
    (the live memory.db stays in WAL mode); a new file is left in rollback-journal mode."""
    try:
        src = sqlite.connect(f"file:{quote(source.resolve().as_posix())}?mode=ro", uri=True)
    except sqlite.Error as exc:
        raise NexusArkError(
            notice("Cannot read the memory database {path}: {problem}", path=str(source), problem=str(exc))
        ) from exc
    fresh = not target.exists()
    try:
        dest = sqlite.connect(str(target))
        try:
            dest.execute("PRAGMA busy_timeout = 10000")
            src.backup(dest)
            if fresh:  # a copy (a safety copy, a backup set aside) is one self-contained file
                dest.execute("PRAGMA journal_mode = DELETE")
        finally:
            dest.close()
    except sqlite.Error as exc:
        raise NexusArkError(
            notice(
                "Could not copy {source} to {target}: {problem}",
                source=str(source),
                target=str(target),
                problem=str(exc),
            )
        ) from exc
    finally:
        src.close()
