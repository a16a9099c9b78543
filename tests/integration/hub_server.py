"""A loopback stand-in for Hugging Face's file endpoint, acting as the Hub does where downloads rely on it.

- `HEAD|GET /{repo}/resolve/{revision}/{file}` on the hub answers 302 to a second server (its storage, on
  "localhost" instead of 127.0.0.1: another host name, as the Hub's CDN is), with `X-Linked-Size`,
  `X-Linked-Etag` (the file's sha256), `X-Repo-Commit` and `ETag`, as the Hub does for large (LFS) files;
  an unknown repo, revision or file is a 404 with `X-Error-Code: EntryNotFound`; a gated repo is a 401.
- The storage serves `Range: bytes=N-` with 206 and `Content-Range`, a range past the end with 416.
- Faults, set on the server: `drop_after` (the connection is cut after that many body bytes, `drops`
  times), `rate` (bytes a second, so a test can kill a download half-way), `corrupt` (one byte of the body
  is changed: the sha256 check must catch it), `advertise_sha` (the HEAD reports another file).
- `sent` counts the body bytes the storage wrote, per request, so a test can tell what a resume fetched.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from nexus_ark.providers.model_download import HubFile

REPO = "nexus-ark-tests/SmolLM2-135M-Instruct-GGUF"
REVISION = "0123456789abcdef0123456789abcdef01234567"
GATED_REPO = "nexus-ark-tests/gated-model"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class HubStandIn:
    served: Path  # the file the hub serves under REPO/REVISION/<its name>
    sha256: str = ""
    drop_after: int = 0
    drops: int = 0
    rate: float = 0.0
    corrupt: bool = False
    advertise_sha: str = ""
    sent: list[int] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # (method, host, path)
    ranges: list[str] = field(default_factory=list)
    others: tuple[Path, ...] = ()  # more files of the same repo and revision (a model that is a folder)

    def __post_init__(self) -> None:
        self.sha256 = self.sha256 or sha256_of(self.served)
        self.blobs = {self.sha256: self.served} | {sha256_of(p): p for p in self.others}
        self._servers: list[ThreadingHTTPServer] = []
        self.hub_url = ""
        self.storage_url = ""

    @property
    def entry(self) -> HubFile:
        return HubFile(
            repo=REPO,
            file=self.served.name,
            revision=REVISION,
            sha256=self.sha256,
            size=self.served.stat().st_size,
        )

    def start(self) -> HubStandIn:
        storage = self._serve(self._storage_handler())
        self.storage_url = f"http://localhost:{storage.server_address[1]}"
        hub = self._serve(self._hub_handler())
        self.hub_url = f"http://127.0.0.1:{hub.server_address[1]}"
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._servers.append(server)
        return server

    # -- the hub: resolve URLs redirect to storage -----------------------------------------------
    def _hub_handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._resolve()

            def do_GET(self) -> None:
                self._resolve()

            def _resolve(self) -> None:
                hub.requests.append((self.command, "hub", self.path))
                m = re.fullmatch(r"/(.+?/.+?)/resolve/([^/]+)/(.+)", self.path)
                if m and m.group(1) == GATED_REPO:
                    self._reply(401, {"X-Error-Code": "GatedRepo"})
                    return
                named = {p.name: sha for sha, p in hub.blobs.items()}
                if not m or m.group(1) != REPO or m.group(2) != REVISION or m.group(3) not in named:
                    self._reply(404, {"X-Error-Code": "EntryNotFound"})
                    return
                sha = named[m.group(3)]
                self._reply(
                    302,
                    {
                        "Location": f"{hub.storage_url}/blobs/{sha}",
                        "X-Linked-Size": str(hub.blobs[sha].stat().st_size),
                        "X-Linked-Etag": f'"{hub.advertise_sha or sha}"',
                        "X-Repo-Commit": REVISION,
                        "ETag": '"w-0123"',
                    },
                )

            def _reply(self, status: int, headers: dict[str, str]) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler

    # -- storage: the bytes, with ranges and faults ------------------------------------------------
    def _storage_handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._send(body=False)

            def do_GET(self) -> None:
                self._send(body=True)

            def _send(self, *, body: bool) -> None:
                hub.requests.append((self.command, "storage", self.path))
                served = hub.blobs.get(self.path.rsplit("/", 1)[-1], hub.served)
                size = served.stat().st_size
                start = 0
                wanted = self.headers.get("Range", "")
                hub.ranges.append(wanted)
                m = re.fullmatch(r"bytes=(\d+)-", wanted)
                if m:
                    start = int(m.group(1))
                    if start >= size:
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{size}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(size - start))
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("ETag", '"storage-etag-not-the-sha"')
                self.end_headers()
                if not body:
                    return
                index = len(hub.sent)
                hub.sent.append(0)
                drop = hub.drop_after if hub.drops > 0 else 0
                if drop:
                    hub.drops -= 1
                with served.open("rb") as fh:
                    fh.seek(start)
                    position = start
                    began = time.monotonic()
                    while chunk := fh.read(64 * 1024):
                        if hub.corrupt and position <= size // 2 < position + len(chunk):
                            i = size // 2 - position
                            chunk = chunk[:i] + bytes([chunk[i] ^ 0xFF]) + chunk[i + 1 :]
                        if drop and hub.sent[index] + len(chunk) >= drop:
                            chunk = chunk[: drop - hub.sent[index]]
                            self.wfile.write(chunk)
                            hub.sent[index] += len(chunk)
                            self.wfile.flush()
                            self.close_connection = True
                            self.connection.shutdown(2)  # cut mid-file, as a dropped connection is
                            return
                        try:
                            self.wfile.write(chunk)
                        except (BrokenPipeError, ConnectionResetError):
                            return  # the client went away (cancelled, killed)
                        hub.sent[index] += len(chunk)
                        position += len(chunk)
                        if hub.rate:
                            ahead = hub.sent[index] / hub.rate - (time.monotonic() - began)
                            if ahead > 0:
                                time.sleep(ahead)

        return Handler
