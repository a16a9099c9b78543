"""`nexus-ark model list | get` as a newcomer reads them: a list with a header whose source column tells
apart two entries a character apart, and a pull with Ollama down that says so and what to do. Real processes,
the shipped catalogue; "Ollama down" is a loopback port nobody listens on (connections refused, as there);
Ctrl-C during a download, against the loopback Hub stand-in (tests/integration/hub_server.py)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import cli_command, run_cli, subprocess_env
from tests.integration.conftest import free_port
from tests.integration.hub_server import HubStandIn

pytestmark = pytest.mark.integration


def test_model_get_with_ollama_down_says_ollama_is_not_running_and_what_to_do(data_dir: Path) -> None:
    host = f"http://127.0.0.1:{free_port()}"
    proc = run_cli("--data-dir", str(data_dir), "model", "get", "qwen2.5:1.5b", "--ollama-host", host)
    assert proc.returncode != 0 and proc.stdout == ""
    assert f"Ollama is not running at {host}." in proc.stderr
    assert "ollama serve" in proc.stderr and "https://ollama.com" in proc.stderr
    assert "Hugging Face" in proc.stderr  # the way that needs no Ollama
    assert "persona's model settings" not in proc.stderr  # no persona is involved in a download


def test_model_list_has_a_header_and_tells_the_two_qwen_entries_apart_by_source(data_dir: Path) -> None:
    host = f"http://127.0.0.1:{free_port()}"  # Ollama down: the list still comes, its installed state "?"
    proc = run_cli("--data-dir", str(data_dir), "model", "list", "--ollama-host", host)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    header, entries = rows[0], {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    assert header == ["ID", "NAME", "SOURCE", "SIZE", "THIS COMPUTER", "INSTALLED"]
    assert entries["qwen2.5-1.5b"]["SOURCE"] == "Hugging Face"
    assert entries["qwen2.5:1.5b"]["SOURCE"] == "Ollama"
    assert entries["qwen2.5:1.5b"]["INSTALLED"] == "?"
    assert entries["bundled"]["SOURCE"] == "built in" and entries["bundled"]["INSTALLED"] == "installed"


def _interrupted_get(tmp_path: Path, hub, until) -> str:
    """`model get` against the loopback Hub stand-in, Ctrl-C (SIGINT) once `until()` holds: its stderr."""
    from tests.integration.test_model_download import NAME, write_catalogue

    catalogue = write_catalogue(tmp_path, hub)
    child = subprocess.Popen(
        cli_command("--data-dir", str(tmp_path / "data"), "model", "get", NAME),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(HF_ENDPOINT=hub.hub_url, NEXUS_ARK_CATALOGUE=str(catalogue)),
        # Ctrl-C as a terminal delivers it, even when the tests run in a background job (which starts
        # with SIGINT ignored, and Python then never turns it into KeyboardInterrupt).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not until():
        assert child.poll() is None, child.communicate()[1]
        assert time.monotonic() < deadline, "the download never got that far"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 1, stderr
    return stderr


@pytest.fixture
def hub(served: Path) -> Iterator[HubStandIn]:
    stand_in = HubStandIn(served).start()
    yield stand_in
    stand_in.stop()


def test_ctrl_c_before_the_first_byte_says_nothing_was_downloaded(tmp_path: Path, hub: HubStandIn) -> None:
    hub.rate = 20_000  # the first megabyte would take most of a minute
    stderr = _interrupted_get(tmp_path, hub, lambda: any(m == "GET" for m, _, _ in hub.requests))
    assert "stopped: nothing was downloaded." in stderr
    assert "is kept" not in stderr


def test_ctrl_c_half_way_says_what_was_downloaded_is_kept(tmp_path: Path, hub: HubStandIn) -> None:
    from nexus_ark.providers.model_download import part_path

    hub.rate = 8 * 2**20
    part = part_path(tmp_path / "data" / "models" / hub.entry.file)
    stderr = _interrupted_get(tmp_path, hub, lambda: part.exists() and part.stat().st_size > 4 * 2**20)
    assert "stopped: what was downloaded is kept" in stderr
    assert part.stat().st_size > 4 * 2**20
