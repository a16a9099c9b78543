"""Three download faults (issue 33, item 10), each against a loopback server that behaves that way: a server
that ignores Range sends the whole file again, and nothing may say "resumed at 3.1 MB"; a server that sends
more bytes than the file has leaves no part to resume (every retry failed the same way, and the part
stayed); a redirect loop leaves no stray NAME.part.json."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nexus_ark.providers.download_progress import Progress
from nexus_ark.providers.model_download import DownloadError, HubFile, download_hub_file

pytestmark = pytest.mark.integration

BODY = bytes(range(256)) * 16_000  # 4,096,000 bytes
SHA = hashlib.sha256(BODY).hexdigest()
ENTRY = HubFile(repo="o/r", file="m.gguf", revision="abc", sha256=SHA, size=len(BODY))


def _serve(body: bytes, *, loop: bool = False, head_size: bool = True) -> Iterator[str]:
    """A server that answers every GET with 200 and `body` whole, whatever Range asks (or, `loop`, a
    redirect to itself); HEAD says nothing of the hash, and of the size only with `head_size`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self._answer(head=True)

        def do_GET(self) -> None:
            self._answer(head=False)

        def _answer(self, *, head: bool) -> None:
            if loop:
                self.send_response(302)
                self.send_header("Location", "/again")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            if head_size or not head:
                self.send_header("Content-Length", str(len(body)))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if not head:
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _left_part(folder: Path, size: int) -> None:
    """What a cancelled earlier attempt leaves: the first bytes, and the note of which file they belong to."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "m.gguf.part").write_bytes(BODY[:size])
    note = {"url": "", "etag": "", "sha256": SHA, "size": len(BODY)}
    (folder / "m.gguf.part.json").write_text(json.dumps(note), encoding="utf-8")


def test_a_server_that_ignores_range_starts_over_and_nothing_says_resumed(tmp_path: Path) -> None:
    _left_part(tmp_path, 3_100_000)
    seen: list[Progress] = []
    for url in _serve(BODY):
        report = download_hub_file(ENTRY, tmp_path, endpoint=url, progress=seen.append, retry_pause_s=0.0)
    assert report.path.read_bytes() == BODY
    assert report.resumed_from == 0 and report.fetched == len(BODY)
    assert seen and all(p.resumed_from == 0 for p in seen), {p.resumed_from for p in seen}


def test_a_server_sending_more_than_the_file_leaves_no_part_to_fail_on_again(tmp_path: Path) -> None:
    for url in _serve(BODY + b"and more", head_size=False):
        for _ in range(2):
            with pytest.raises(DownloadError) as failed:
                download_hub_file(ENTRY, tmp_path, endpoint=url, retry_pause_s=0.0)
            assert "sent more of m.gguf than its size" in failed.value.message
            assert "removed" in failed.value.hint and "kept" not in failed.value.hint
            assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_redirect_loop_leaves_no_stray_part_note(tmp_path: Path) -> None:
    for url in _serve(b"", loop=True):
        with pytest.raises(DownloadError):
            download_hub_file(ENTRY, tmp_path, endpoint=url, retry_pause_s=0.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
