"""The first start's probe for model servers already running here: real HTTP servers on 127.0.0.1 (the Ollama
stand-in that speaks Ollama's wire format, and an OpenAI-compatible model list as LM Studio answers it), a
port that refuses, a server that accepts and never answers, and a proxy that must never be used."""

from __future__ import annotations

import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import pytest

from nexus_ark.providers.local_servers import (
    USUAL_SERVERS,
    Candidate,
    candidates,
    is_loopback,
    ollama_host_candidate,
    probe_servers,
)
from nexus_ark.providers.scripted import ScriptedBackend
from tests.integration.loopback import LoopbackServer
from tests.integration.wire_server import WireServer

# What LM Studio's /v1/models answers (its documented OpenAI-compatible list, embedding models included).
LM_STUDIO_MODELS = {
    "object": "list",
    "data": [
        {"id": "qwen2.5-7b-instruct", "object": "model", "owned_by": "organization_owner"},
        {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"},
    ],
}


class _LMStudio(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            body = json.dumps(LM_STUDIO_MODELS).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
        else:  # LM Studio answers an unknown path with an error, not a model list
            body = b'{"error":"Unexpected endpoint or method."}'
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Recorder(BaseHTTPRequestHandler):
    """A proxy stand-in: it writes down every request that reaches it, and answers none usefully."""

    seen: ClassVar[list[str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        _Recorder.seen.append(self.path)
        self.send_response(502)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_probe_lists_the_ollama_stand_ins_chat_models_with_the_spec_that_uses_each() -> None:
    with WireServer(ScriptedBackend(["hi"])) as ollama:
        found = probe_servers([Candidate(kind="ollama", url=ollama.url, protocol="ollama")])
    assert [s.kind for s in found] == ["ollama"]
    server = found[0]
    assert server.name == "Ollama" and server.url == ollama.url
    by_name = {m.name: m for m in server.models}
    assert {"smollm2:135m", "gemma3:4b"} <= set(by_name)
    assert "e5-small" not in by_name, "an embedding model is no mind to talk with"
    assert by_name["smollm2:135m"].spec == "ollama:smollm2:135m"
    assert by_name["smollm2:135m"].config().api_base == ollama.url


def test_an_openai_compatible_server_is_named_by_what_it_answers_and_used_through_its_v1_address() -> None:
    server = LoopbackServer(_LMStudio)
    try:
        # On a port of its own (not LM Studio's 1234): its model list's owner says what it is.
        found = probe_servers([Candidate(kind="openai", url=server.url, protocol="openai")])
    finally:
        server.stop()
    assert len(found) == 1 and found[0].kind == "lmstudio" and found[0].name == "LM Studio"
    assert [m.name for m in found[0].models] == ["qwen2.5-7b-instruct"]
    model = found[0].models[0]
    assert model.spec == "litellm:openai/qwen2.5-7b-instruct" and model.api_base == f"{server.url}/v1"


def test_a_refused_port_is_none_found_at_once() -> None:
    started = time.monotonic()
    found = probe_servers(
        [Candidate(kind="ollama", url=f"http://127.0.0.1:{_closed_port()}", protocol="ollama")]
    )
    assert found == []
    assert time.monotonic() - started < 1.0


def test_a_server_that_accepts_and_never_answers_is_given_up_on_quickly() -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel completes the connection; nobody ever reads or writes
    port = silent.getsockname()[1]
    try:
        started = time.monotonic()
        found = probe_servers(
            [
                Candidate(kind="ollama", url=f"http://127.0.0.1:{port}", protocol="ollama"),
            ],
            read_s=0.5,
        )
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert found == []
    assert elapsed < 2.0, f"a silent server held the probe {elapsed:.1f} s"


def test_all_the_usual_ports_are_asked_at_once_not_one_after_another() -> None:
    """Eight silent servers: asked in parallel, the whole probe takes about one read timeout, not eight."""
    sockets = []
    targets = []
    for candidate in USUAL_SERVERS:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        sockets.append(s)
        targets.append(candidate.model_copy(update={"url": f"http://127.0.0.1:{s.getsockname()[1]}"}))
    try:
        started = time.monotonic()
        assert probe_servers(targets, read_s=0.5) == []
        elapsed = time.monotonic() - started
    finally:
        for s in sockets:
            s.close()
    assert elapsed < 2.0, f"{len(targets)} silent servers took {elapsed:.1f} s"


def test_nothing_beyond_loopback_is_ever_a_place_to_look() -> None:
    assert is_loopback("http://127.0.0.1:11434") and is_loopback("localhost:1234") and is_loopback("[::1]:80")
    assert not is_loopback("http://192.0.2.1:11434") and not is_loopback("http://example.com:11434")
    # OLLAMA_HOST as people write it: another machine is skipped; "listen everywhere" is asked on 127.0.0.1.
    assert ollama_host_candidate("192.0.2.1:11434") is None
    assert ollama_host_candidate("example.com") is None
    assert ollama_host_candidate("0.0.0.0:11500").url == "http://127.0.0.1:11500"
    assert ollama_host_candidate("http://localhost:11600").url == "http://127.0.0.1:11600"
    listed = candidates(
        [Candidate(kind="vllm", url="http://192.0.2.7:8000", protocol="openai")],
        env={"OLLAMA_HOST": "http://192.0.2.1:11434"},
    )
    assert all(c.url.startswith("http://127.0.0.1:") for c in listed)
    assert len(listed) == len(USUAL_SERVERS), "the usual ports, nothing from elsewhere"
    assert probe_servers([Candidate(kind="ollama", url="http://192.0.2.1:11434", protocol="ollama")]) == []


def test_a_proxy_in_the_environment_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY would carry the probe off this computer: it asks the server itself."""
    proxy = LoopbackServer(_Recorder)
    _Recorder.seen = []
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    try:
        with WireServer(ScriptedBackend(["hi"])) as ollama:
            found = probe_servers([Candidate(kind="ollama", url=ollama.url, protocol="ollama")])
    finally:
        proxy.stop()
    assert [s.kind for s in found] == ["ollama"]
    assert _Recorder.seen == []


def test_ollama_where_ollama_host_says_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    with WireServer(ScriptedBackend(["hi"])) as ollama:
        listed = candidates(env={"OLLAMA_HOST": ollama.url.replace("127.0.0.1", "localhost")})
        assert listed[0].url == ollama.url and listed[0].kind == "ollama"
        found = probe_servers([listed[0]])
    assert found and "smollm2:135m" in [m.name for m in found[0].models]
