"""A model server that streams seeded garbage (bytes flipped, lines cut, binary noise, wrong types, huge
numbers, deep nesting, no end marker, a stall) on 127.0.0.1, in Ollama's NDJSON and OpenAI's server-sent
events: every reply ends complete or with a ProviderError that names the server, never another exception,
never a hang, and a stream without its end marker is never taken for a complete reply."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from nexus_ark.errors import ProviderError
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.litellm_backend import LiteLLMBackend
from nexus_ark.providers.ollama_backend import OllamaBackend
from nexus_ark.providers.stream_guard import RetryPolicy, Timeouts
from tests.integration.loopback import LoopbackServer

pytestmark = pytest.mark.integration

# The stalled seeds stall after the first token, so only between_tokens_s sets how long they take; the wait
# for the first token is generous because a whole stream through LiteLLM on a loaded machine once sent
# nothing for 5 s (a fresh-clone run) and once paused 2 s between tokens.
FAST = Timeouts(connect_s=3, first_token_s=15, between_tokens_s=2)
WORDS = ["Hello", " there", ",", " how", " are", " you", "?"]
SEEDS = 120


def _ollama_lines() -> list[bytes]:
    lines = [
        {"model": "m", "created_at": "2026-11-25T00:00:00Z", "message": {"role": "assistant", "content": w}}
        | {"done": False}
        for w in WORDS
    ]
    lines.append(
        {
            "model": "m",
            "created_at": "2026-11-25T00:00:00Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
        }
    )
    return [json.dumps(line).encode() + b"\n" for line in lines]


def _sse_events() -> list[bytes]:
    def event(delta: dict, finish: str | None = None) -> bytes:
        chunk = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()

    events = [event({"role": "assistant", "content": WORDS[0]})]
    events += [event({"content": w}) for w in WORDS[1:]]
    events += [event({}, "stop"), b"data: [DONE]\n\n"]
    return events


def _mutate(rng: random.Random, parts: list[bytes]) -> tuple[list[bytes], str]:
    """One fault, named; "" keeps the stream whole (a control)."""
    kind = rng.choice(
        [
            "whole",
            "cut",
            "cut-at-line",
            "flip",
            "noise",
            "types",
            "huge",
            "deep",
            "utf8",
            "long",
            "stall",
            "dup",
        ]
    )
    parts = list(parts)
    i = rng.randrange(len(parts))
    # The parts that say the reply is whole: Ollama's last line; OpenAI's finish_reason event and [DONE].
    # A cut keeps at least one byte and loses the first of them (a stream cut after the finish_reason,
    # before [DONE], holds the whole reply).
    ending = 2 if parts[-1].startswith(b"data: [DONE]") else 1
    if kind == "cut":
        data = b"".join(parts)
        parts = [data[: rng.randrange(1, len(b"".join(parts[:-ending])) + 1)]]
    elif kind == "cut-at-line":
        parts = parts[: rng.randrange(1, len(parts) - ending + 1)]  # clean line boundaries, no end marker
    elif kind == "flip":
        data = bytearray(b"".join(parts))
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        parts = [bytes(data)]
    elif kind == "noise":
        parts.insert(i, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))) + b"\n")
    elif kind == "types":
        text = parts[i].decode()
        for old, new in [('"content": "', '"content": 12, "x": "'), ('"done": false', '"done": "no"')]:
            text = text.replace(old, new, 1)
        text = text.replace('"message": {', '"message": null, "m2": {', 1) if rng.random() < 0.5 else text
        text = text.replace('"choices": [', '"choices": 7, "c2": [', 1) if rng.random() < 0.5 else text
        parts[i] = text.encode()
    elif kind == "huge":
        parts[i] = parts[i].replace(b'"created": 0', b'"created": ' + b"9" * 5000)
        parts[i] = parts[i].replace(b'"model": "m"', b'"model": ' + b"9" * 5000)
    elif kind == "deep":
        depth = rng.choice([200, 1000, 5000])
        parts.insert(i, b"data: " * (b"data:" in parts[0]) + b"[" * depth + b"]" * depth + b"\n\n")
    elif kind == "utf8":
        parts.insert(i, parts[i][:20] + b"\xff\xfe\xc3" + parts[i][20:])
        del parts[i + 1]
    elif kind == "long":
        parts.insert(i, b"x" * rng.choice([70_000, 1_000_000]) + b"\n")
    elif kind == "dup":
        parts = parts + parts
    return parts, kind


class _Chaos(LoopbackServer):
    def __init__(self) -> None:
        chaos = self
        self.seed = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/api/show":  # Ollama's facts about the model: sane, so the chat is reached
                    body = json.dumps(
                        {"capabilities": ["completion"], "details": {}, "model_info": {}}
                    ).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                sse = self.path.endswith("/chat/completions")
                rng = random.Random(chaos.seed)
                parts, kind = _mutate(rng, _sse_events() if sse else _ollama_lines())
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream" if sse else "application/x-ndjson")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for n, part in enumerate(parts):
                        if kind == "stall" and n == len(parts) // 2:
                            time.sleep(3)  # longer than between_tokens_s
                        self.wfile.write(part)
                        self.wfile.flush()
                except OSError:
                    pass

        super().__init__(Handler)


@pytest.fixture(scope="module")
def chaos() -> Iterator[_Chaos]:
    server = _Chaos()
    yield server
    server.stop()


def _run(backend, chaos: _Chaos, seed: int) -> tuple[str, str]:
    chaos.seed = seed
    kind = _mutate(random.Random(seed), [b"{}"] * 3)[1]
    started = time.monotonic()
    text = ""
    try:
        for chunk in backend.stream_chat(
            [ChatMessage(role="user", content="hi")], GenerationParams(max_tokens=16)
        ):
            text += chunk.text
        outcome = "complete"
    except ProviderError as exc:
        outcome = f"error: {exc}"
        assert str(exc).strip(), "an error with no words"
    took = time.monotonic() - started
    assert took < 20, f"seed {seed} ({kind}) took {took:.1f} s"
    return outcome, text


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["ollama", "openai"])
def test_garbage_streams_end_complete_or_in_words_never_an_unfinished_reply_taken_as_whole(
    chaos: _Chaos, protocol: str
) -> None:
    if protocol == "ollama":
        backend = OllamaBackend("m", chaos.url, timeouts=FAST, retry=RetryPolicy(attempts=1))
    else:
        backend = LiteLLMBackend(
            "openai/m", api_base=f"{chaos.url}/v1", timeouts=FAST, retry=RetryPolicy(attempts=1)
        )
    _run(backend, chaos, 2)  # a whole stream first: the client library's import is not a seed's time
    results = {}
    kinds = {seed: _mutate(random.Random(seed), [b"{}"] * 3)[1] for seed in range(SEEDS)}
    for seed in range(SEEDS):
        results[seed] = _run(backend, chaos, seed)
        if kinds[seed] == "whole" and "sent nothing for" in results[seed][0]:
            # A whole stream timed out: the machine paused, not the server (it sent every byte at once).
            # The control runs once more; a real fault repeats, a pause of a loaded machine does not.
            results[seed] = _run(backend, chaos, seed)
    for seed, (outcome, text) in results.items():
        if kinds[seed] == "whole":
            assert outcome == "complete" and text == "".join(WORDS), (seed, outcome, text)
        assert "HTTP 500" not in outcome, f"seed {seed} ({kinds[seed]}): the server said 200: {outcome}"
        if kinds[seed] in ("cut", "cut-at-line", "stall"):
            assert outcome.startswith("error"), (
                f"seed {seed} ({kinds[seed]}): an unfinished reply was complete: {text!r}"
            )
    assert any(kind == "whole" for kind in kinds.values()) and len(set(kinds.values())) >= 10
