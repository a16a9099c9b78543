"""`--model` and `--api-base` in a room (issue 33, item 3): they were ignored, each member answered on its own
model, so `--model bundled` did not keep a cloud-configured member local. Now every member talks on the
model asked for: here the Ollama stand-in (tests/integration/wire_server.py, the bundled model behind
Ollama's wire format on 127.0.0.1) gets each member's request, while both members' own model is the
built-in one; and a member configured for a server that is down answers on `--model bundled`."""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path

import pytest
import tomli_w

from tests.conftest import run_cli
from tests.integration.wire_server import SERVED_MODEL, WireServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOTH = ("--persona", "aria", "--persona", "hikari", "--strategy", "list")


def test_model_and_api_base_reach_every_member_of_a_room(data_dir: Path, ollama_wire: WireServer) -> None:
    data = str(data_dir)
    before = len(ollama_wire.requests)
    proc = run_cli(
        "--data-dir",
        data,
        "chat",
        *BOTH,
        "--model",
        f"ollama:{SERVED_MODEL}",
        "--api-base",
        ollama_wire.url,
        stdin="Hello, both of you!\n",
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr[-2000:]
    chats = [r for r in ollama_wire.requests[before:] if r["path"] == "/api/chat"]
    systems = [r["messages"][0]["content"] for r in chats if r.get("messages")]
    assert any(s.startswith("# Aria") for s in systems), "aria answered through the stand-in"
    assert any("ひかり" in s.split("\n", 1)[0] for s in systems), "hikari answered through the stand-in"
    lines = proc.stdout.splitlines()  # piped: one line a reply, behind its author's name
    # Each answered once at most (an empty answer prints no line), on the stand-in's model.
    assert sum(ln.startswith("Aria: ") for ln in lines) <= 1, proc.stdout
    assert sum(ln.startswith("ひかり: ") for ln in lines) <= 1, proc.stdout
    assert lines, "the room answered"


def test_model_bundled_keeps_a_member_configured_for_a_server_local(data_dir: Path) -> None:
    data = str(data_dir)
    assert run_cli("--data-dir", data, "persona", "list").returncode == 0
    with socket.socket() as s:  # a port nothing listens on: the member's own server is down
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    toml = data_dir / "personas" / "hikari" / "persona.toml"
    settings = tomllib.loads(toml.read_text("utf-8"))
    settings["model"] = {**settings.get("model", {}), "spec": "litellm:openai/gpt-4o-mini", "api_base": down}
    toml.write_text(tomli_w.dumps(settings), "utf-8")
    proc = run_cli("--data-dir", data, "chat", *BOTH, "--model", "bundled", stdin="Hello, both of you!\n")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Cannot connect" not in proc.stderr and "error:" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout.count("ひかり: ") == 1
