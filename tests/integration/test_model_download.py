"""Getting a model: `nexus-ark model get|list|remove` and the downloader against a loopback stand-in for the
Hugging Face file endpoint (tests/integration/hub_server.py), serving the real bundled GGUF under a catalogue
entry. Nothing here reaches beyond 127.0.0.1: HF_ENDPOINT points the product at the stand-in."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.providers.model_download import (
    DownloadCancelled,
    DownloadError,
    Progress,
    download_hub_file,
    part_path,
)
from tests.conftest import cli_command, subprocess_env
from tests.integration.hub_server import GATED_REPO, HubStandIn
from tests.integration.loopback import LoopbackServer

pytestmark = pytest.mark.integration

NAME = "smollm2-mirror"


@pytest.fixture
def hub(served: Path) -> Iterator[HubStandIn]:
    stand_in = HubStandIn(served).start()
    yield stand_in
    stand_in.stop()


def write_catalogue(
    folder: Path, hub: HubStandIn, *, accept_license: bool = False, repo: str = "", languages: str = '["en"]'
) -> Path:
    """A catalogue of the stand-in's file (and the bundled model, which the language notice compares to)."""
    e = hub.entry
    path = folder / "catalogue.toml"
    path.write_text(
        f"""
[[model]]
id = "{NAME}"
spec = "gguf:{e.file}"
name = "SmolLM2 from a mirror"
size_gb = 0.1
ram_gb = 1
license = "Apache-2.0"
license_url = "https://example.invalid/licence"
accept_license = {"true" if accept_license else "false"}
languages = {languages}

[model.download]
repo = "{repo or e.repo}"
file = "{e.file}"
revision = "{e.revision}"
sha256 = "{e.sha256}"
size = {e.size}

[[model]]
spec = "bundled"
name = "SmolLM2-135M-Instruct (Q4_1)"
ram_gb = 1
languages = ["en"]
""",
        encoding="utf-8",
    )
    return path


def model_cli(
    data: Path, catalogue: Path, hub: HubStandIn, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command("--data-dir", str(data), "model", *args),
        capture_output=True,
        text=True,
        timeout=timeout,
        encoding="utf-8",
        env=subprocess_env(HF_ENDPOINT=hub.hub_url, NEXUS_ARK_CATALOGUE=str(catalogue)),
    )


@pytest.mark.slow
def test_model_get_downloads_through_the_redirect_verifies_and_the_persona_chats_on_it(
    tmp_path: Path, hub: HubStandIn, served: Path
) -> None:
    catalogue = write_catalogue(tmp_path, hub)
    data = tmp_path / "data"
    got = model_cli(data, catalogue, hub, "get", NAME)
    assert got.returncode == 0, got.stderr
    dest = data / "models" / served.name
    assert got.stdout.strip() == f"gguf:{dest}"
    assert dest.read_bytes() == served.read_bytes()
    assert not part_path(dest).exists()
    # It went to the hub, was sent on to the storage host, and both saw the Hub's URL scheme.
    assert ("HEAD", "hub", f"/{hub.entry.repo}/resolve/{hub.entry.revision}/{served.name}") in hub.requests
    assert any(host == "storage" and method == "GET" for method, host, _ in hub.requests)
    assert "done" in got.stderr

    listing = model_cli(data, catalogue, hub, "list", "--json").stdout
    listed = [json.loads(line) for line in listing.splitlines()]
    assert listed[0]["id"] == NAME and listed[0]["installed"] is True and listed[0]["path"] == str(dest)

    # Asked again: nothing is fetched.
    before = len(hub.sent)
    again = model_cli(data, catalogue, hub, "get", NAME)
    assert again.returncode == 0 and len(hub.sent) == before

    # The persona talks on the downloaded file.
    chat = subprocess.run(
        cli_command("--data-dir", str(data), "chat", "--model", f"gguf:{dest}"),
        input="Hello! Say hi back.\n",
        capture_output=True,
        text=True,
        timeout=300,
        encoding="utf-8",
        env=subprocess_env(),
    )
    assert chat.returncode == 0, chat.stderr
    assert len(chat.stdout.strip()) > 0

    removed = model_cli(data, catalogue, hub, "remove", NAME)
    assert removed.returncode == 0 and not dest.exists()


def test_a_download_killed_half_way_resumes_and_fetches_only_what_was_missing(
    tmp_path: Path, hub: HubStandIn, served: Path
) -> None:
    catalogue = write_catalogue(tmp_path, hub)
    data = tmp_path / "data"
    dest = data / "models" / served.name
    part = part_path(dest)
    hub.rate = 8 * 2**20  # 8 MB/s: ~12 s for the whole file, time to kill it half-way
    child = subprocess.Popen(
        cli_command("--data-dir", str(data), "model", "get", NAME),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(HF_ENDPOINT=hub.hub_url, NEXUS_ARK_CATALOGUE=str(catalogue)),
    )
    deadline = time.monotonic() + 120
    while not (part.exists() and part.stat().st_size > 30 * 2**20):
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        assert time.monotonic() < deadline, "the download never got 30 MB in"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()  # type: ignore[union-attr]
    child.stderr.close()  # type: ignore[union-attr]
    assert not dest.exists(), "a partial file must never carry the model's name"
    kept = part.stat().st_size
    size = served.stat().st_size
    assert 30 * 2**20 <= kept < size

    hub.rate = 0.0
    first_run_requests = len(hub.sent)
    resumed = model_cli(data, catalogue, hub, "get", NAME)
    assert resumed.returncode == 0, resumed.stderr
    assert dest.read_bytes() == served.read_bytes()
    fetched_again = sum(hub.sent[first_run_requests:])
    assert fetched_again == size - kept, (fetched_again, size - kept)
    assert hub.ranges[-1] == f"bytes={kept}-"
    assert "resumed at" in resumed.stderr


def test_dropped_connections_mid_file_are_resumed_in_the_same_call(
    tmp_path: Path, hub: HubStandIn, served: Path
) -> None:
    hub.drop_after, hub.drops = 20 * 2**20, 2  # cut twice, 20 MB into each response
    seen: list[Progress] = []
    report = download_hub_file(
        hub.entry, tmp_path, endpoint=hub.hub_url, progress=seen.append, retry_pause_s=0.05
    )
    assert report.path.read_bytes() == served.read_bytes()
    assert report.attempts == 3
    size = served.stat().st_size
    # What a cut response delivered was kept: beyond the file, only what was in flight at each cut came twice.
    assert size <= sum(hub.sent) <= size + 2 * 4 * 2**20
    assert seen[-1].stage == "done" and seen[-1].done == size
    assert any(p.bytes_per_s > 0 for p in seen)


def test_a_corrupted_download_is_refused_removed_and_says_so(tmp_path: Path, hub: HubStandIn) -> None:
    catalogue = write_catalogue(tmp_path, hub)
    data = tmp_path / "data"
    hub.corrupt = True
    got = model_cli(data, catalogue, hub, "get", NAME)
    assert got.returncode == 2
    assert "did not match its checksum" in got.stderr and "was removed" in got.stderr
    models = data / "models"
    assert list(models.iterdir()) == [], "neither the bad file nor its part may stay"


def test_a_server_offering_another_file_is_refused_before_the_first_byte(
    tmp_path: Path, hub: HubStandIn
) -> None:
    hub.advertise_sha = "f" * 64
    with pytest.raises(DownloadError) as refused:
        download_hub_file(hub.entry, tmp_path, endpoint=hub.hub_url)
    assert "different" in refused.value.message and "ffffffffffff" in refused.value.message
    assert hub.sent == [] and list(tmp_path.iterdir()) == []


def test_not_enough_disk_is_refused_before_downloading(tmp_path: Path, hub: HubStandIn) -> None:
    """A real small filesystem (tmpfs of 64 MB) where this machine lets a test mount one (root, as CI)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root: the check is the same code as on a full disk")
    small = tmp_path / "small"
    small.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(small)]
    mounted = subprocess.run(mount, capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"this machine does not let tests mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        with pytest.raises(DownloadError) as refused:
            download_hub_file(hub.entry, small / "models", endpoint=hub.hub_url)
        assert "Not enough free space" in refused.value.message and str(small) in refused.value.message
        assert hub.sent == []
    finally:
        subprocess.run(["umount", str(small)], check=False)


def test_cancel_keeps_the_part_and_the_next_attempt_goes_on_from_it(
    tmp_path: Path, hub: HubStandIn, served: Path
) -> None:
    hub.rate = 16 * 2**20
    cancel = threading.Event()

    def progress(p: Progress) -> None:
        if p.done > 20 * 2**20:
            cancel.set()

    with pytest.raises(DownloadCancelled):
        download_hub_file(hub.entry, tmp_path, endpoint=hub.hub_url, progress=progress, cancel=cancel)
    part = part_path(tmp_path / served.name)
    kept = part.stat().st_size
    assert kept > 20 * 2**20
    hub.rate = 0.0
    report = download_hub_file(hub.entry, tmp_path, endpoint=hub.hub_url)
    assert report.resumed_from == kept and report.fetched == served.stat().st_size - kept
    assert report.path.read_bytes() == served.read_bytes()


def test_bad_names_licences_and_unreachable_servers_exit_2_with_the_reason(
    tmp_path: Path, hub: HubStandIn
) -> None:
    data = tmp_path / "data"
    catalogue = write_catalogue(tmp_path, hub)
    bad = model_cli(data, catalogue, hub, "get", "no-such-model")
    assert bad.returncode == 2 and "no model 'no-such-model'" in bad.stderr and NAME in bad.stderr

    licensed = write_catalogue(tmp_path, hub, accept_license=True)
    refused = model_cli(data, licensed, hub, "get", NAME)
    assert refused.returncode == 2 and "--accept-license" in refused.stderr and hub.sent == []
    accepted = model_cli(data, licensed, hub, "get", NAME, "--accept-license")
    assert accepted.returncode == 0, accepted.stderr

    gated = write_catalogue(tmp_path, hub, repo=GATED_REPO)
    shut = model_cli(tmp_path / "other", gated, hub, "get", NAME)
    assert shut.returncode == 2 and "HTTP 401" in shut.stderr and "accept its terms" in shut.stderr

    hub.stop()  # the network is down
    down = model_cli(tmp_path / "third", catalogue, hub, "get", NAME)
    assert down.returncode == 2 and "cannot be reached" in down.stderr
    assert "Traceback" not in down.stderr


def test_model_get_pulls_an_ollama_model_with_progress_and_lists_it(ollama_wire, tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    env = subprocess_env()
    env.pop("NEXUS_ARK_CATALOGUE", None)  # the shipped catalogue

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = cli_command("--data-dir", data, "model", *args, "--ollama-host", ollama_wire.url)
        return subprocess.run(command, capture_output=True, text=True, timeout=120, encoding="utf-8", env=env)

    ollama_wire.pulled.pop("qwen2.5:1.5b", None)
    got = cli("get", "qwen2.5:1.5b")
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "ollama:qwen2.5:1.5b"
    assert "verifying 986.0 MB" in got.stderr and "done: 986.0 MB" in got.stderr  # layers summed
    listed = {json.loads(line)["id"]: json.loads(line) for line in cli("list", "--json").stdout.splitlines()}
    assert listed["qwen2.5:1.5b"]["installed"] is True
    assert listed["qwen2.5:7b"]["installed"] is False  # Ollama answered: not there

    missing = cli("get", "qwen2.5:7b")  # not in the stand-in's registry, as a name Ollama cannot find
    assert missing.returncode == 2 and "file does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr

    removed = cli("remove", "qwen2.5:1.5b")
    assert removed.returncode == 0, removed.stderr
    assert "qwen2.5:1.5b" not in ollama_wire.installed_pulls()


def test_an_ollama_pull_cancelled_half_way_closes_the_stream_and_ollama_stops(ollama_wire) -> None:
    from nexus_ark.providers.model_store import pull_ollama

    ollama_wire.pulled.pop("qwen2.5:1.5b", None)
    seen: list[Progress] = []
    cancel = threading.Event()

    def progress(p: Progress) -> None:
        seen.append(p)
        if p.done >= 300_000_000:
            cancel.set()

    ollama_wire.pull_pause_s = 0.01
    try:
        with pytest.raises(DownloadCancelled):
            pull_ollama("qwen2.5:1.5b", ollama_wire.url, progress=progress, cancel=cancel)
    finally:
        ollama_wire.pull_pause_s = 0.0
    assert seen and 0 < seen[-1].done < seen[-1].total
    # The server notices the closed stream at its next line: wait until what it holds stops changing.
    deadline, held = time.monotonic() + 10, -1
    while held != ollama_wire.pulled.get("qwen2.5:1.5b", 0):
        assert time.monotonic() < deadline, "the stand-in kept pulling after the client left"
        held = ollama_wire.pulled.get("qwen2.5:1.5b", 0)
        time.sleep(0.1)
    assert "qwen2.5:1.5b" not in ollama_wire.installed_pulls()
    ollama_wire.pulled.pop("qwen2.5:1.5b", None)


class _ForwardProxy(LoopbackServer):
    """A plain HTTP forward proxy on loopback (absolute-form requests), counting what passes through it."""

    def __init__(self) -> None:
        import http.client
        from http.server import BaseHTTPRequestHandler
        from urllib.parse import urlsplit

        self.seen: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                proxy.seen.append(f"{self.command} {self.path}")
                target = urlsplit(self.path)
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection",)}
                upstream.request(self.command, target.path, headers=headers)
                answer = upstream.getresponse()
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    while chunk := answer.read(1 << 16):
                        self.wfile.write(chunk)
                upstream.close()

            do_GET = _forward
            do_HEAD = _forward

        super().__init__(Handler)


def test_downloads_go_through_the_proxy_the_environment_names(
    tmp_path: Path, hub: HubStandIn, served: Path
) -> None:
    proxy = _ForwardProxy()
    try:
        catalogue = write_catalogue(tmp_path, hub)
        data = tmp_path / "data"
        env = subprocess_env(
            HF_ENDPOINT=hub.hub_url, NEXUS_ARK_CATALOGUE=str(catalogue), HTTP_PROXY=proxy.url, NO_PROXY=""
        )
        env.pop("no_proxy", None)
        got = subprocess.run(
            cli_command("--data-dir", str(data), "model", "get", NAME),
            capture_output=True,
            text=True,
            timeout=300,
            encoding="utf-8",
            env=env,
        )
        assert got.returncode == 0, got.stderr
        assert (data / "models" / served.name).read_bytes() == served.read_bytes()
        # Both hosts were reached through the proxy: the hub's HEAD and the storage's GET after the redirect.
        assert any(line.startswith(f"HEAD {hub.hub_url}/") for line in proxy.seen), proxy.seen
        assert any(line.startswith(f"GET {hub.storage_url}/blobs/") for line in proxy.seen), proxy.seen
    finally:
        proxy.stop()


def test_two_downloads_of_one_file_never_write_the_same_part(tmp_path: Path, hub: HubStandIn) -> None:
    hub.rate = 16 * 2**20
    cancel = threading.Event()
    started = threading.Event()
    outcome: list[BaseException] = []

    def first() -> None:
        try:
            download_hub_file(
                hub.entry, tmp_path, endpoint=hub.hub_url, cancel=cancel, progress=lambda p: started.set()
            )
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=first)
    worker.start()
    assert started.wait(30)
    with pytest.raises(DownloadError) as refused:
        download_hub_file(hub.entry, tmp_path, endpoint=hub.hub_url)
    assert "already being downloaded by another Nexus Ark" in refused.value.message
    cancel.set()
    worker.join(30)
    assert isinstance(outcome[0], DownloadCancelled)
