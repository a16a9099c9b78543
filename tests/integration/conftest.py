"""Loopback servers for the provider tests: nothing here reaches beyond 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from tests.integration.wire_server import WireServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def shared_llama(bundled_model: Path) -> Iterator[LlamaCppBackend]:
    backend = LlamaCppBackend(bundled_model, n_ctx=2048)
    backend.ensure_ready()
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def ollama_wire(shared_llama: LlamaCppBackend) -> Iterator[WireServer]:
    with WireServer(shared_llama) as server:
        yield server


@pytest.fixture(scope="session")
def llama_server(bundled_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server serving the bundled model on 127.0.0.1."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(bundled_model),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--model_alias",
                "local",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"llama_cpp.server did not start: {log.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
