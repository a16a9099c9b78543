"""The HTTP side of a model download: a HEAD that checks the file is the one the catalogue names, and
GETs that append to the part file from where it ends, each error said in words a person can act on."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from nexus_ark.notices import Notice, joined, notice
from nexus_ark.providers.download_progress import Progress, ProgressFn, TransferRate, human_bytes
from nexus_ark.providers.hub_file import DownloadCancelled, DownloadError, HubFile

log = logging.getLogger(__name__)

CHUNK = 1 << 20


@dataclass
class Written:
    """How much of the part file is written, and the hash of those bytes."""

    have: int
    hasher: Any
    restarted: bool = False  # the server ignored the range: the file came again from its first byte


class WrongBytes(DownloadError):
    """The server sent bytes that cannot be the catalogue's file (more than its size): the part holding
    them is worth nothing, and resuming it would fail the same way every time."""


def _http_problem(status: int, url: str, source: HubFile) -> DownloadError:
    if status in (401, 403):
        return DownloadError(
            notice(
                "{server} refused {file} (HTTP {status}).",
                server=host_of(url),
                file=source.file,
                status=status,
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
                server=host_of(url),
                file=source.file,
                repo=source.repo,
                revision=source.revision[:12],
            ),
            hint=notice("The catalogue entry may be out of date, or the mirror does not carry this model."),
        )
    return DownloadError(
        notice(
            "{server} answered HTTP {status} for {file}.",
            server=host_of(url),
            status=status,
            file=source.file,
        ),
        hint=notice("Try again later."),
    )


def host_of(url: str) -> str:
    return httpx.URL(url).host or url


def unreachable(url: str, exc: Exception, kept: int, total: int) -> DownloadError:
    """The server could not be reached (or stopped answering): what happened in words, what of the file is
    kept, and what works offline instead."""
    return DownloadError(
        notice("{server} cannot be reached: {problem}.", server=host_of(url), problem=transport_problem(exc)),
        hint=joined(
            (
                kept_hint(kept, total),
                notice(
                    "Check the internet connection (or HTTPS_PROXY, or HF_ENDPOINT for a mirror) and try "
                    "again."
                ),
                OFFLINE_HINT,
            ),
            "\n",  # a sentence a line: Japanese sets no space between sentences
        ),
    )


OFFLINE_HINT = notice(
    "Offline, choose a GGUF file already on this computer instead, or a model server such as Ollama or "
    "LM Studio."
)


def kept_hint(kept: int, total: int) -> Notice:
    """What a failed download leaves: nothing, or the bytes the next try goes on from."""
    if kept <= 0:
        return notice("Nothing was downloaded.")
    return notice(
        "{done} of {total} were downloaded and are kept: the next try goes on from there.",
        done=human_bytes(kept),
        total=human_bytes(total),
    )


def transport_problem(exc: BaseException) -> Notice:
    """A transport failure in words (httpx names it by class: ConnectError, ReadTimeout, ...)."""
    text = " ".join(str(e) for e in (exc, exc.__cause__, exc.__context__) if e is not None).lower()
    if isinstance(exc, httpx.ProxyError):
        return notice("the proxy did not let the connection through")
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return notice("it did not answer in time")
    if isinstance(exc, httpx.TimeoutException):
        return notice("it stopped sending")
    if isinstance(exc, httpx.ConnectError):
        looked_up = ("name or service not known", "nodename nor servname", "getaddrinfo", "name resolution")
        if any(words in text for words in looked_up):
            return notice("its address could not be looked up (is this computer offline?)")
        if "refused" in text:
            return notice("the connection was refused")
        return notice("no connection could be made")
    if isinstance(exc, httpx.TooManyRedirects):
        return notice("it redirected too many times")
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return notice("the address cannot be used")
    if isinstance(exc, httpx.TransportError):
        return notice("the connection broke off")
    return notice("its answer could not be read")


def probe(client: httpx.Client, url: str, source: HubFile, kept: int = 0) -> str:
    """HEAD the file as the Hub serves it (a redirect to its storage for large files, with the size and the
    sha256 in X-Linked-Size / X-Linked-Etag): a file that is not the one the catalogue names is refused
    before the first byte. Returns the ETag to resume under. `kept`: the bytes an earlier try left."""
    try:
        head = client.head(url, follow_redirects=False)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise unreachable(url, exc, kept, source.size) from exc
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
                server=host_of(url),
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
                server=host_of(url),
                file=source.file,
                theirs=linked_size,
                ours=source.size,
            ),
            hint=notice("Nothing was downloaded. Update Nexus Ark, or check the mirror (HF_ENDPOINT)."),
        )
    return linked_sha or head.headers.get("etag", "")


@contextlib.contextmanager
def http_client(client: httpx.Client | None, connect_s: float, read_s: float) -> Iterator[httpx.Client]:
    """The caller's client, or one of our own for this download."""
    if client is not None:
        yield client
        return
    # trust_env (the default) honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY and the system's CA bundle.
    with httpx.Client(
        timeout=httpx.Timeout(read_s, connect=connect_s), headers={"user-agent": "nexus-ark"}
    ) as own:
        yield own


def fetch_rest(
    client: httpx.Client,
    url: str,
    source: HubFile,
    part: Path,
    written: Written,
    cancel: threading.Event,
    progress: ProgressFn | None,
    rate: TransferRate,
    resumed_from: int,
) -> None:
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
            log.info("%s sent the whole file instead of bytes %d-: starting over", host_of(url), have)
            written.have, written.hasher, written.restarted = 0, hashlib.sha256(), True
            have = resumed_from = 0  # progress must not say "resumed at" what was thrown away
            part.unlink(missing_ok=True)
        elif have and not response.headers.get("content-range", "").startswith(f"bytes {have}-"):
            raise DownloadError(
                notice(
                    "{server} answered a resume of {file} with the wrong bytes ({range}).",
                    server=host_of(url),
                    file=source.file,
                    range=response.headers.get("content-range", "no Content-Range"),
                ),
                hint=joined((kept_hint(have, source.size), notice("Try again later.")), "\n"),
            )
        last_report = 0.0
        try:
            with part.open("ab") as fh:
                for chunk in response.iter_bytes(CHUNK):
                    if cancel.is_set():
                        raise DownloadCancelled(notice("The download was cancelled."))
                    if have + len(chunk) > source.size:
                        raise WrongBytes(
                            notice(
                                "{server} sent more of {file} than its size.",
                                server=host_of(url),
                                file=source.file,
                            ),
                            hint=notice(
                                "What was downloaded was removed: the next try starts over. "
                                "If it fails the same way, the server offers another file; try again later."
                            ),
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
                hint=joined((kept_hint(have, source.size), notice("Free some space and try again.")), "\n"),
            ) from exc
