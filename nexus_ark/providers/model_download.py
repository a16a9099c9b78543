"""Fetch a GGUF file from Hugging Face (or a mirror) into the data folder's models/: resumable, verified.

Why plain httpx and not huggingface_hub (docs/model-downloads.md has the comparison): we need to stop
between chunks when the person presses Cancel, report bytes as they arrive to the window, hash while
writing so the sha256 check costs no second read, and keep one ordinary file in models/ (the hub's cache
is a tree of blobs and symlinks, and on Windows without developer mode it copies instead). The URL
scheme, HF_ENDPOINT and the headers are the Hub's own, so a company mirror that serves the Hub's API works.

The file is written as NAME.part next to where it goes (never NAME.gguf before it is verified), with
NAME.part.json saying which file (sha256) it is a part of; a later attempt asks for the rest (Range from the
part's length), so what is on disk is never fetched again; a part of another version starts over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from filelock import FileLock, Timeout

from nexus_ark.notices import joined, notice
from nexus_ark.providers.download_progress import Progress, ProgressFn, TransferRate, human_bytes
from nexus_ark.providers.hub_file import (
    DEFAULT_ENDPOINT,
    DownloadCancelled,
    DownloadError,
    HubFile,
    hub_endpoint,
)
from nexus_ark.providers.hub_transfer import (
    CHUNK,
    Written,
    WrongBytes,
    fetch_rest,
    host_of,
    http_client,
    kept_hint,
    probe,
    transport_problem,
    unreachable,
)

__all__ = [
    "CHUNK",
    "DEFAULT_ENDPOINT",
    "PART_SUFFIX",
    "SPARE_BYTES",
    "STALLED_ATTEMPTS",
    "DownloadCancelled",
    "DownloadError",
    "DownloadReport",
    "HubFile",
    "Progress",
    "ProgressFn",
    "TransferRate",
    "check_free_space",
    "download_hub_file",
    "hub_endpoint",
    "human_bytes",
    "lock_path",
    "part_path",
    "probe",
]

log = logging.getLogger(__name__)

# Room left on the disk after the file is written: a full disk breaks SQLite's journal and the log.
SPARE_BYTES = 256 << 20
# Dropped connections retried while bytes keep arriving; this many in a row with nothing new ends it.
STALLED_ATTEMPTS = 4
PART_SUFFIX = ".part"


@dataclass
class DownloadReport:
    path: Path
    size: int
    fetched: int  # bytes that came over the network in this call (0 when the file was already there)
    resumed_from: int
    seconds: float
    attempts: int


def part_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PART_SUFFIX)


def _meta_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PART_SUFFIX + ".json")


def check_free_space(folder: Path, needed: int) -> None:
    free = shutil.disk_usage(folder).free
    if free < needed + SPARE_BYTES:
        raise DownloadError(
            notice(
                "Not enough free space in {folder}: the model needs {need} and {free} are free.",
                folder=str(folder),
                need=human_bytes(needed + SPARE_BYTES),
                free=human_bytes(free),
            ),
            hint=notice("Free some space, or choose another data folder, and try again."),
        )


def _hash_existing(part: Path, hasher: Any, cancel: threading.Event) -> int:
    """Feed what an earlier attempt wrote into the hash (one sequential read), so the check at the end
    covers the whole file without reading it again."""
    done = 0
    with part.open("rb") as fh:
        while chunk := fh.read(CHUNK * 4):
            if cancel.is_set():
                raise DownloadCancelled(notice("The download was cancelled."))
            hasher.update(chunk)
            done += len(chunk)
    return done


def download_hub_file(
    source: HubFile,
    folder: Path,
    *,
    endpoint: str | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    client: httpx.Client | None = None,
    connect_timeout_s: float = 10.0,
    read_timeout_s: float = 30.0,
    retry_pause_s: float = 1.0,
) -> DownloadReport:
    """Download `source` into `folder` (as source.file) and verify it; resumes a part left by a cancel, a
    crash or a dropped connection. Raises DownloadError (DownloadCancelled) with the part kept, except
    when the finished file hashes wrong: then it is removed, and the error says so."""
    cancel = cancel or threading.Event()
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / source.file
    started = time.monotonic()
    if dest.is_file() and dest.stat().st_size == source.size:
        # Only a verified file is ever renamed to its name (below): it is not fetched again.
        return DownloadReport(dest, source.size, 0, source.size, 0.0, 0)
    url = source.url(endpoint)
    part, meta = part_path(dest), _meta_path(dest)
    with (
        _one_writer(dest, source.file),
        http_client(client, connect_timeout_s, read_timeout_s) as client,
        _no_stray_meta(part, meta),
    ):
        written = _start_part(client, url, source, part, meta, cancel)
        tally = _Tally(resumed_from=written.have)
        _fetch_all(client, url, source, part, written, tally, cancel, progress, retry_pause_s)
        if progress:
            progress(Progress(written.have, source.size, 0.0, tally.resumed_from, "verifying"))
        _verify(source, part, meta, written)
        os.replace(part, dest)
        meta.unlink(missing_ok=True)
        if progress:
            progress(Progress(source.size, source.size, 0.0, tally.resumed_from, "done"))
        seconds = time.monotonic() - started
        return DownloadReport(dest, source.size, tally.fetched, tally.resumed_from, seconds, tally.attempts)


@dataclass
class _Tally:
    """What one download_hub_file call did: where it resumed, what came over the network, how many GETs."""

    resumed_from: int
    fetched: int = 0
    attempts: int = 0


def _start_part(
    client: httpx.Client, url: str, source: HubFile, part: Path, meta: Path, cancel: threading.Event
) -> Written:
    """The part file made ready to append to: one of another version (or longer than the file) goes,
    free space is checked for the rest, and what is kept is hashed."""
    etag = probe(client, url, source, part.stat().st_size if part.is_file() else 0)
    previous = _read_meta(meta)
    if part.exists() and previous.get("sha256") not in ("", source.sha256):
        part.unlink()  # a part of another version of the file: start over
    have = part.stat().st_size if part.exists() else 0
    if have > source.size:
        part.unlink()
        have = 0
    check_free_space(part.parent, source.size - have)
    _write_meta(meta, {"url": url, "etag": etag, "sha256": source.sha256, "size": source.size})
    written = Written(0, hashlib.sha256())
    if have:
        written.have = _hash_existing(part, written.hasher, cancel)
    return written


def _fetch_all(
    client: httpx.Client,
    url: str,
    source: HubFile,
    part: Path,
    written: Written,
    tally: _Tally,
    cancel: threading.Event,
    progress: ProgressFn | None,
    retry_pause_s: float,
) -> None:
    """GETs until the part holds the whole file: a dropped connection is resumed while bytes keep coming."""
    have, stalled, rate = written.have, 0, TransferRate()
    while have < source.size:
        if cancel.is_set():
            raise DownloadCancelled(notice("The download was cancelled."))
        tally.attempts += 1
        before = have
        try:
            fetch_rest(client, url, source, part, written, cancel, progress, rate, tally.resumed_from)
        except WrongBytes:
            part.unlink(missing_ok=True)  # bytes of no use: resuming them would fail this way again
            raise
        except httpx.TransportError as exc:
            have = written.have
            # A dropped connection or a stall: go on from what arrived, while something keeps arriving.
            stalled = 0 if have > before else stalled + 1
            log.info("download of %s interrupted at %d bytes: %r", source.file, have, exc)
            if stalled >= STALLED_ATTEMPTS:
                raise unreachable(url, exc, have, source.size) from exc
            cancel.wait(retry_pause_s * min(stalled + 1, 4))
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a redirect loop, a Location not a URL
            raise DownloadError(
                notice(
                    "{server} sent {file} in a way that cannot be followed: {problem}",
                    server=host_of(url),
                    file=source.file,
                    problem=transport_problem(exc),
                ),
                hint=joined((kept_hint(written.have, source.size), notice("Try again later.")), "\n"),
            ) from exc
        have = written.have
        if written.restarted:  # the server ignored the range: nothing was resumed after all
            tally.resumed_from, written.restarted = 0, False
            tally.fetched += have
        else:
            tally.fetched += max(0, have - before)


def _verify(source: HubFile, part: Path, meta: Path, written: Written) -> None:
    """The whole file's sha256 against the catalogue's; a file that does not match is removed."""
    digest = written.hasher.hexdigest()
    if digest != source.sha256:
        part.unlink(missing_ok=True)
        meta.unlink(missing_ok=True)
        raise DownloadError(
            notice(
                "{file} did not match its checksum (sha256 {got}…, expected {want}…) and was removed.",
                file=source.file,
                got=digest[:12],
                want=source.sha256[:12],
            ),
            hint=notice("The download was damaged or the server sent another file. Try again."),
        )


@contextlib.contextmanager
def _no_stray_meta(part: Path, meta: Path) -> Iterator[None]:
    """NAME.part.json describes a part: when an attempt ends with no part on disk (a redirect loop before
    the first byte, wrong bytes removed), it goes too (a redirect loop left one behind)."""
    try:
        yield
    finally:
        if not part.exists():
            meta.unlink(missing_ok=True)


def lock_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PART_SUFFIX + ".lock")


@contextlib.contextmanager
def _one_writer(dest: Path, name: str) -> Iterator[None]:
    """One writer per part file, across processes (the window and `nexus-ark model get` at once)."""
    lock = FileLock(str(lock_path(dest)), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise DownloadError(
            notice("{file} is already being downloaded by another Nexus Ark.", file=name),
            hint=notice("Wait for that download to finish, or stop it there."),
        ) from None
    try:
        yield
    finally:
        lock.release()
        # The lock file goes with the part (while a part stays, the next attempt locks this same file:
        # removing it then could let two processes lock two files of one name).
        if not part_path(dest).exists():
            lock_path(dest).unlink(missing_ok=True)


def _read_meta(meta: Path) -> dict[str, object]:
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_meta(meta: Path, data: dict[str, object]) -> None:
    with contextlib.suppress(OSError):  # only a hint for the next attempt; losing it restarts nothing
        meta.write_text(json.dumps(data), encoding="utf-8")
