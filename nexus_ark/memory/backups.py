"""Rotating backups of a persona's memory.db, taken with SQLite's online backup API (consistent while the
app runs): taking one, keeping the newest, checking one, listing them, and copying one back in place."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from nexus_ark.clock import Clock, SystemClock
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.db import connect, sqlite
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice

log = logging.getLogger(__name__)

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
