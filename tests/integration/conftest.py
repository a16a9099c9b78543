"""Loopback servers for the provider tests: nothing here reaches beyond 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from tests.integration.wire_server import WireServer, start_llama_server


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
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    proc, base = start_llama_server(bundled_model, log)
    try:
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def served(bundled_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled GGUF under a name of its own, as a catalogue entry's file the Hub stand-in serves."""
    path = tmp_path_factory.mktemp("hub") / "smollm2-135m-instruct-q4_1.gguf"
    shutil.copyfile(bundled_model, path)
    return path
