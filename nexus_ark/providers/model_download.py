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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from filelock import FileLock, Timeout
from pydantic import BaseModel, Field, field_validator

from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"
CHUNK = 1 << 20
# Room left on the disk after the file is written: a full disk breaks SQLite's journal and the log.
SPARE_BYTES = 256 << 20
# Dropped connections retried while bytes keep arriving; this many in a row with nothing new ends it.
STALLED_ATTEMPTS = 4
PART_SUFFIX = ".part"


class DownloadError(NexusArkError):
    """A model download that could not finish; what is on disk is kept unless it is known to be wrong."""


class DownloadCancelled(DownloadError):
    """The person stopped it; the part file stays, so the next attempt goes on from there."""


class HubFile(BaseModel):
    """One file of a Hugging Face repository at a pinned revision, with what it must hash to."""

    repo: str = Field(min_length=3, pattern=r"^[\w.-]+/[\w.-]+$")
    file: str = Field(min_length=1)
    revision: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(gt=0)

    @field_validator("file")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        # The file lands in models/ under this name: no folders, no way out of it.
        if "/" in value or "\\" in value or value.startswith(".") or not value.endswith(".gguf"):
            raise ValueError(f"{value!r} is not a plain .gguf file name")
        return value

    def url(self, endpoint: str | None = None) -> str:
        base = (endpoint or hub_endpoint()).rstrip("/")
        return f"{base}/{self.repo}/resolve/{self.revision}/{self.file}"


def hub_endpoint() -> str:
    """The Hub, or the mirror HF_ENDPOINT names (huggingface_hub's variable: one setting serves both)."""
    return os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a download stands: bytes on disk of `total`, the rate over the last seconds, time left."""

    done: int
    total: int
    bytes_per_s: float = 0.0
    resumed_from: int = 0
    stage: str = "downloading"  # downloading | verifying | done

    @property
    def seconds_left(self) -> float | None:
        if self.bytes_per_s <= 0 or self.done >= self.total:
            return None
        return (self.total - self.done) / self.bytes_per_s


ProgressFn = Callable[[Progress], None]


@dataclass
class DownloadReport:
    path: Path
    size: int
    fetched: int  # bytes that came over the network in this call (0 when the file was already there)
    resumed_from: int
    seconds: float
    attempts: int


@dataclass
class _Written:
    """How much of the part file is written, and the hash of those bytes."""

    have: int
    hasher: Any


def part_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PART_SUFFIX)


def _meta_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PART_SUFFIX + ".json")


class TransferRate:
    """Bytes per second over a sliding window of a few seconds (a mean since the start hides a stall)."""

    def __init__(self, window_s: float = 4.0) -> None:
        self.window_s = window_s
        self.samples: list[tuple[float, int]] = []

    def add(self, now: float, done: int) -> float:
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[0][0] > self.window_s:
            self.samples.pop(0)
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0


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


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit in ("B", "KB") else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


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


def _http_problem(status: int, url: str, source: HubFile) -> DownloadError:
    if status in (401, 403):
        return DownloadError(
            notice(
                "{server} refused {file} (HTTP {status}).", server=_host(url), file=source.file, status=status
            ),
            hint=notice(
                "The model's page may ask you to accept its terms or sign in first: {page}",
                page=f"https://huggingface.co/{source.repo}",
            ),
        )
    if status == 404:
        return DownloadError(
            notice(
                "{server} has no {file} in {repo} at revision {revision} (HTTP 404).",
                server=_host(url),
                file=source.file,
                repo=source.repo,
                revision=source.revision[:12],
            ),
            hint=notice("The catalogue entry may be out of date, or the mirror does not carry this model."),
        )
    return DownloadError(
        notice(
            "{server} answered HTTP {status} for {file}.", server=_host(url), status=status, file=source.file
        ),
        hint=notice("Try again later."),
    )


def _host(url: str) -> str:
    return httpx.URL(url).host or url


def _unreachable(url: str, exc: Exception) -> DownloadError:
    return DownloadError(
        notice("{server} cannot be reached: {problem}", server=_host(url), problem=type(exc).__name__),
        hint=notice(
            "Check the internet connection (or HTTPS_PROXY, or HF_ENDPOINT for a mirror) and try again: "
            "what was downloaded is kept."
        ),
    )


def probe(client: httpx.Client, url: str, source: HubFile) -> str:
    """HEAD the file as the Hub serves it (a redirect to its storage for large files, with the size and the
    sha256 in X-Linked-Size / X-Linked-Etag): a file that is not the one the catalogue names is refused
    before the first byte. Returns the ETag to resume under."""
    try:
        head = client.head(url, follow_redirects=False)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise _unreachable(url, exc) from exc
    if head.status_code >= 400:
        raise _http_problem(head.status_code, url, source)
    linked_sha = head.headers.get("x-linked-etag", "").strip('"').removeprefix("W/").strip('"')
    linked_size = head.headers.get("x-linked-size") or (
        head.headers.get("content-length") if head.status_code == 200 else None
    )
    if linked_sha and len(linked_sha) == 64 and linked_sha != source.sha256:
        raise DownloadError(
            notice(
                "{server} offers a different {file} than the catalogue names "
                "(sha256 {theirs}…, expected {ours}…).",
                server=_host(url),
                file=source.file,
                theirs=linked_sha[:12],
                ours=source.sha256[:12],
            ),
            hint=notice("Nothing was downloaded. Update Nexus Ark, or check the mirror (HF_ENDPOINT)."),
        )
    if linked_size and linked_size.isdigit() and int(linked_size) != source.size:
        raise DownloadError(
            notice(
                "{server} offers {file} with {theirs} bytes; the catalogue expects {ours}.",
                server=_host(url),
                file=source.file,
                theirs=linked_size,
                ours=source.size,
            ),
            hint=notice("Nothing was downloaded. Update Nexus Ark, or check the mirror (HF_ENDPOINT)."),
        )
    return linked_sha or head.headers.get("etag", "")


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
    with _one_writer(dest, source.file), _http(client, connect_timeout_s, read_timeout_s) as client:
        etag = probe(client, url, source)
        previous = _read_meta(meta)
        if part.exists() and previous.get("sha256") not in ("", source.sha256):
            part.unlink()  # a part of another version of the file: start over
        have = part.stat().st_size if part.exists() else 0
        if have > source.size:
            part.unlink()
            have = 0
        check_free_space(dest.parent, source.size - have)
        _write_meta(meta, {"url": url, "etag": etag, "sha256": source.sha256, "size": source.size})
        written = _Written(0, hashlib.sha256())
        if have:
            written.have = _hash_existing(part, written.hasher, cancel)
        resumed_from = have = written.have
        fetched, attempts, stalled = 0, 0, 0
        rate = TransferRate()
        while have < source.size:
            if cancel.is_set():
                raise DownloadCancelled(notice("The download was cancelled."))
            attempts += 1
            before = have
            try:
                _fetch_from(client, url, source, part, written, cancel, progress, rate, resumed_from)
            except httpx.TransportError as exc:
                have = written.have
                # A dropped connection or a stall: go on from what arrived, while something keeps arriving.
                stalled = 0 if have > before else stalled + 1
                log.info("download of %s interrupted at %d bytes: %r", source.file, have, exc)
                if stalled >= STALLED_ATTEMPTS:
                    raise _unreachable(url, exc) from exc
                cancel.wait(retry_pause_s * min(stalled + 1, 4))
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a redirect loop, a Location not a URL
                raise DownloadError(
                    notice(
                        "{server} sent {file} in a way that cannot be followed: {problem}",
                        server=_host(url),
                        file=source.file,
                        problem=type(exc).__name__,
                    ),
                    hint=notice("Try again later; what was downloaded is kept."),
                ) from exc
            have = written.have
            fetched += max(0, have - before)
        if progress:
            progress(Progress(have, source.size, 0.0, resumed_from, "verifying"))
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
        os.replace(part, dest)
        meta.unlink(missing_ok=True)
        if progress:
            progress(Progress(source.size, source.size, 0.0, resumed_from, "done"))
        return DownloadReport(dest, source.size, fetched, resumed_from, time.monotonic() - started, attempts)


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


@contextlib.contextmanager
def _http(client: httpx.Client | None, connect_s: float, read_s: float) -> Iterator[httpx.Client]:
    """The caller's client, or one of our own for this download."""
    if client is not None:
        yield client
        return
    # trust_env (the default) honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY and the system's CA bundle.
    with httpx.Client(
        timeout=httpx.Timeout(read_s, connect=connect_s), headers={"user-agent": "nexus-ark"}
    ) as own:
        yield own


def _fetch_from(
    client: httpx.Client,
    url: str,
    source: HubFile,
    part: Path,
    written: _Written,
    cancel: threading.Event,
    progress: ProgressFn | None,
    rate: TransferRate,
    resumed_from: int,
) -> tuple[int, Any]:
    """One GET from what is written to the end, appended to the part file. `written` follows every chunk,
    so a connection dropped half-way leaves it true to the file for the next attempt."""
    have = written.have
    headers = {"accept-encoding": "identity"}  # byte offsets must be the file's, not a compressed stream's
    if have:
        # No If-Range: the Hub's storage answers with its own ETag, not the sha256 we probed, so the
        # condition would never hold there. The pinned revision and the sha256 check at the end cover it.
        headers["range"] = f"bytes={have}-"
    with client.stream("GET", url, headers=headers, follow_redirects=True) as response:
        if response.status_code == 416 and have == source.size:
            return
        if response.status_code >= 400:
            raise _http_problem(response.status_code, url, source)
        if have and response.status_code == 200:
            # The server ignored the range (or the file changed under If-Range): the whole file comes.
            log.info("%s sent the whole file instead of bytes %d-: starting over", _host(url), have)
            written.have, written.hasher = 0, hashlib.sha256()
            have = 0
            part.unlink(missing_ok=True)
        elif have and not response.headers.get("content-range", "").startswith(f"bytes {have}-"):
            raise DownloadError(
                notice(
                    "{server} answered a resume of {file} with the wrong bytes ({range}).",
                    server=_host(url),
                    file=source.file,
                    range=response.headers.get("content-range", "no Content-Range"),
                ),
                hint=notice("Try again later; what was downloaded is kept."),
            )
        last_report = 0.0
        try:
            with part.open("ab") as fh:
                for chunk in response.iter_bytes(CHUNK):
                    if cancel.is_set():
                        raise DownloadCancelled(notice("The download was cancelled."))
                    if have + len(chunk) > source.size:
                        raise DownloadError(
                            notice(
                                "{server} sent more of {file} than its size.",
                                server=_host(url),
                                file=source.file,
                            ),
                            hint=notice("Try again later; what was downloaded is kept."),
                        )
                    fh.write(chunk)
                    written.hasher.update(chunk)
                    have = written.have = have + len(chunk)
                    now = time.monotonic()
                    speed = rate.add(now, have)
                    if progress and (now - last_report >= 0.1 or have == source.size):
                        last_report = now
                        progress(Progress(have, source.size, speed, resumed_from))
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise DownloadError(
                notice(
                    "{file} could not be written: {problem}", file=str(part), problem=exc.strerror or str(exc)
                ),
                hint=notice("Free some space and try again: what was downloaded is kept."),
            ) from exc


def _read_meta(meta: Path) -> dict[str, object]:
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_meta(meta: Path, data: dict[str, object]) -> None:
    with contextlib.suppress(OSError):  # only a hint for the next attempt; losing it restarts nothing
        meta.write_text(json.dumps(data), encoding="utf-8")
