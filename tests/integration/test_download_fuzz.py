"""A server that answers a model download with seeded garbage (any status, broken ranges and lengths, redirect
loops, bodies cut short or too long) on 127.0.0.1: every attempt ends verified or with a DownloadError that
says what went wrong, never another exception, never a hang, and never a file under the model's name that
is not the right one."""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nexus_ark.providers.model_download import DownloadError, HubFile, download_hub_file
from tests.integration.loopback import LoopbackServer

pytestmark = pytest.mark.integration

BODY = bytes(range(256)) * 400  # 102,400 bytes
SHA = hashlib.sha256(BODY).hexdigest()


class _Chaos(LoopbackServer):
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        chaos = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._answer(head=True)

            def do_GET(self) -> None:
                self._answer(head=False)

            def _answer(self, *, head: bool) -> None:
                rng = chaos.rng
                # The probe mostly gets a sane answer, so most seeds reach the body's faults.
                sane = head and rng.random() < 0.6
                status = 302 if sane else rng.choice([200, 206, 206, 206, 302, 404, 416, 500, 401])
                self.send_response(status)
                if status == 302:
                    where = (
                        "/blob"
                        if sane
                        else rng.choice(["/again", "http://127.0.0.1:1/x", "::not a url::", self.path])
                    )
                    self.send_header("Location", where)
                headers = {
                    "X-Linked-Etag": f'"{SHA}"'
                    if sane
                    else rng.choice([f'"{SHA}"', '"' + "0" * 64 + '"', "x", ""]),
                    "X-Linked-Size": str(len(BODY))
                    if sane
                    else rng.choice([str(len(BODY)), "12", "9" * 40, ""]),
                    "Content-Range": rng.choice(
                        [f"bytes 0-{len(BODY) - 1}/{len(BODY)}", "bytes 5-10/20", "bytes */0", "nonsense", ""]
                    ),
                }
                for k, v in headers.items():
                    if v:
                        self.send_header(k, v)
                start = 0
                wanted = self.headers.get("Range", "")
                if wanted.startswith("bytes=") and wanted.endswith("-") and rng.random() < 0.7:
                    start = min(int(wanted[6:-1] or 0), len(BODY))
                body = BODY[start:]
                if rng.random() < 0.3:
                    body = body[: rng.randrange(0, len(body) + 1)]  # cut short
                elif rng.random() < 0.1:
                    body = body + b"extra" * 100  # more than the file
                if rng.random() < 0.2 and body:
                    i = rng.randrange(len(body))
                    body = body[:i] + bytes([body[i] ^ 1]) + body[i + 1 :]
                declared = len(body) if rng.random() < 0.8 else len(body) + rng.randrange(1, 1000)
                self.send_header("Content-Length", str(declared))
                self.end_headers()
                if head:
                    return
                try:
                    self.wfile.write(body)
                    if declared != len(body):
                        self.close_connection = True
                except OSError:
                    pass

        super().__init__(Handler)


@pytest.fixture(scope="module")
def chaos() -> Iterator[_Chaos]:
    server = _Chaos(0)
    yield server
    server.stop()


@pytest.mark.parametrize("seed", range(80))
def test_garbage_from_the_server_ends_in_a_clear_error_or_the_verified_file(
    tmp_path: Path, chaos, seed
) -> None:
    chaos.rng = random.Random(seed)
    entry = HubFile(repo="o/r", file="m.gguf", revision="abc", sha256=SHA, size=len(BODY))
    try:
        report = download_hub_file(
            entry, tmp_path, endpoint=chaos.url, connect_timeout_s=1, read_timeout_s=0.3, retry_pause_s=0.0
        )
    except DownloadError as exc:
        assert exc.message.strip()
        assert not (tmp_path / "m.gguf").exists()
    else:
        assert report.path.read_bytes() == BODY


def test_a_redirect_loop_is_a_download_error_that_says_so(tmp_path: Path) -> None:
    class Loop(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(302)
            self.send_header("Location", "/again")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_HEAD

    server = ThreadingHTTPServer(("127.0.0.1", 0), Loop)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    entry = HubFile(repo="o/r", file="m.gguf", revision="abc", sha256=SHA, size=len(BODY))
    try:
        with pytest.raises(DownloadError) as refused:
            download_hub_file(entry, tmp_path, endpoint=f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert "cannot be followed: it redirected too many times" in refused.value.message
