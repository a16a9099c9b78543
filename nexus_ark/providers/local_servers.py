"""Model servers already running on this computer: probed on loopback only, in parallel, with short timeouts.

The first start (window and `nexus-ark setup`) offers what it finds here: Ollama, LM Studio, llama.cpp's
server and other OpenAI-compatible servers on their usual ports, each with its models and the model setting
that uses one. Nothing here ever leaves 127.0.0.1: an address that is not loopback is skipped, HTTP proxies
from the environment are ignored (a proxy would carry the probe off this machine), and "localhost" is asked
as 127.0.0.1 so a strange hosts file cannot send it elsewhere.
"""

from __future__ import annotations

import ipaddress
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, Field

from nexus_ark.model_config import ModelConfig

ServerKind = Literal[
    "ollama", "lmstudio", "llamacpp", "vllm", "textgen", "koboldcpp", "jan", "gpt4all", "openai"
]
Protocol = Literal["ollama", "openai"]

# What each kind is called where a person reads it.
KIND_NAMES: dict[str, str] = {
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    "llamacpp": "llama.cpp server",
    "vllm": "vLLM",
    "textgen": "text-generation-webui",
    "koboldcpp": "KoboldCpp",
    "jan": "Jan",
    "gpt4all": "GPT4All",
    "openai": "OpenAI-compatible server",
}

CONNECT_S = 0.5  # a server on this machine accepts at once; a closed port refuses at once
READ_S = 1.5  # time for the whole answer: a server that accepts and then says nothing is given up on
MAX_BODY = 2_000_000  # a model list is a few KB; a runaway answer is not read to its end


class Candidate(BaseModel):
    """Where a server may be listening, and how it lists its models."""

    kind: ServerKind
    url: str  # scheme, host and port: "http://127.0.0.1:11434"
    protocol: Protocol


# The usual ports, each as its project documents it: Ollama 11434 (/api/tags), LM Studio 1234, llama.cpp's
# llama-server 8080, vLLM 8000, text-generation-webui's OpenAI API 5000, KoboldCpp 5001, Jan 1337 and
# GPT4All's API server 4891 (all /v1/models).
USUAL_SERVERS: tuple[Candidate, ...] = (
    Candidate(kind="ollama", url="http://127.0.0.1:11434", protocol="ollama"),
    Candidate(kind="lmstudio", url="http://127.0.0.1:1234", protocol="openai"),
    Candidate(kind="llamacpp", url="http://127.0.0.1:8080", protocol="openai"),
    Candidate(kind="vllm", url="http://127.0.0.1:8000", protocol="openai"),
    Candidate(kind="textgen", url="http://127.0.0.1:5000", protocol="openai"),
    Candidate(kind="koboldcpp", url="http://127.0.0.1:5001", protocol="openai"),
    Candidate(kind="jan", url="http://127.0.0.1:1337", protocol="openai"),
    Candidate(kind="gpt4all", url="http://127.0.0.1:4891", protocol="openai"),
)

# /v1/models' "owned_by" where it names the server better than its port does (LM Studio on another port).
OWNED_BY_KIND: dict[str, ServerKind] = {
    "organization_owner": "lmstudio",
    "llamacpp": "llamacpp",
    "vllm": "vllm",
    "koboldcpp": "koboldcpp",
}


class FoundModel(BaseModel):
    name: str
    spec: str  # what a model setting takes: "ollama:qwen2.5:1.5b", "litellm:openai/qwen2.5-7b-instruct"
    api_base: str  # where it is served, as a model setting's api_base

    def config(self) -> ModelConfig:
        return ModelConfig(spec=self.spec, api_base=self.api_base)


class FoundServer(BaseModel):
    kind: ServerKind
    name: str  # "Ollama", "LM Studio", ...
    url: str  # the server's address: "http://127.0.0.1:1234"
    models: list[FoundModel] = Field(default_factory=list)


def is_loopback(url: str) -> bool:
    """Whether a server address names this computer only (127.0.0.0/8, ::1 or "localhost")."""
    try:
        host = urlsplit(url if "://" in url else f"http://{url}").hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _loopback_address(url: str) -> str | None:
    """The address to ask, with "localhost" as 127.0.0.1; None when it is not loopback or not an address."""
    if not is_loopback(url):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    host = "127.0.0.1" if host == "localhost" else host
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme or 'http'}://{shown}:{port or 80}"


def ollama_host_candidate(value: str) -> Candidate | None:
    """OLLAMA_HOST ("127.0.0.1:11500", "http://localhost:11500", "0.0.0.0:11500") as a place to look, when
    it is on this computer. 0.0.0.0 is where a server listens on every address: asked on 127.0.0.1."""
    value = value.strip()
    if not value:
        return None
    url = value if "://" in value else f"http://{value}"
    parts = urlsplit(url)
    try:
        port = parts.port or 11434
    except ValueError:
        return None
    host = parts.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    address = _loopback_address(f"{parts.scheme or 'http'}://{host}:{port}")
    return Candidate(kind="ollama", url=address, protocol="ollama") if address else None


def candidates(extra: list[Candidate] | None = None, *, env: dict[str, str] | None = None) -> list[Candidate]:
    """The usual ports, Ollama where OLLAMA_HOST says (on this computer) and `extra`; one per address."""
    env = dict(os.environ) if env is None else env
    found: list[Candidate] = []
    from_env = ollama_host_candidate(env.get("OLLAMA_HOST", ""))
    for candidate in [*(extra or []), *([from_env] if from_env else []), *USUAL_SERVERS]:
        address = _loopback_address(candidate.url)
        if address is None or any(c.url == address for c in found):
            continue
        found.append(candidate.model_copy(update={"url": address}))
    return found


def probe_servers(
    targets: list[Candidate] | None = None, *, connect_s: float = CONNECT_S, read_s: float = READ_S
) -> list[FoundServer]:
    """Ask every target at once; the servers that answered with their models, in the targets' order.
    A closed port, a silent server or an answer that is not a model list is simply not found."""
    targets = candidates() if targets is None else [t for t in targets if _loopback_address(t.url)]
    if not targets:
        return []
    timeout = httpx.Timeout(connect=connect_s, read=read_s, write=connect_s, pool=connect_s)
    # trust_env=False: no proxy from HTTP_PROXY/ALL_PROXY, which would take the probe off this machine.
    with (
        httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False) as client,
        ThreadPoolExecutor(max_workers=len(targets), thread_name_prefix="probe") as pool,
    ):
        answers = list(pool.map(lambda t: _probe_one(client, t, read_s), targets))
    return [server for server in answers if server is not None]


def _probe_one(client: httpx.Client, target: Candidate, read_s: float) -> FoundServer | None:
    address = _loopback_address(target.url)
    if address is None:  # checked again here: this function never asks beyond loopback
        return None
    path = "/api/tags" if target.protocol == "ollama" else "/v1/models"
    body = _get_json(client, address + path, read_s)
    if body is None:
        return None
    if target.protocol == "ollama":
        if not isinstance(body, dict) or "models" not in body:
            return None
        # Embedding models are listed too: by name ("nomic-embed-text") or by a BERT family ("e5-small").
        names = [
            str(m.get("name") or m.get("model") or "")
            for m in _items(body, "models")
            if "bert" not in _family(m).casefold()
        ]
        models = [FoundModel(name=n, spec=f"ollama:{n}", api_base=address) for n in names if _chats(n)]
        return FoundServer(kind="ollama", name=KIND_NAMES["ollama"], url=address, models=models)
    items = _items(body, "data")
    if not isinstance(body, dict) or "data" not in body:
        return None  # answered, but not with an OpenAI model list (some other web server on the port)
    kind = target.kind
    owners = {str(item.get("owned_by", "")) for item in items}
    for owner in owners:
        if owner in OWNED_BY_KIND:
            kind = OWNED_BY_KIND[owner]
    names = [str(item.get("id") or "") for item in items]
    base = f"{address}/v1"
    models = [FoundModel(name=n, spec=f"litellm:openai/{n}", api_base=base) for n in names if _chats(n)]
    return FoundServer(kind=kind, name=KIND_NAMES[kind], url=address, models=models)


def _get_json(client: httpx.Client, url: str, read_s: float) -> Any:
    """The JSON a GET answers with, read within `read_s` in all; None for anything else."""
    deadline = time.monotonic() + read_s
    try:
        with client.stream("GET", url) as response:
            if response.status_code != 200:
                return None
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_BODY or time.monotonic() > deadline:
                    return None
        return json.loads(data)
    except (httpx.HTTPError, ValueError, OSError):
        return None


def _items(body: Any, key: str) -> list[dict[str, Any]]:
    if not isinstance(body, dict) or not isinstance(body.get(key), list):
        return []
    return [item for item in body[key] if isinstance(item, dict)]


def _family(model: dict[str, Any]) -> str:
    details = model.get("details")
    return str(details.get("family", "")) if isinstance(details, dict) else ""


def _chats(name: str) -> bool:
    """A model to converse with: named, and not an embedding model (LM Studio and Ollama list those too)."""
    return bool(name.strip()) and "embed" not in name.casefold()
