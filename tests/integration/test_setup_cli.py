"""`nexus-ark setup`: what this computer has, and the first start's choices without questions, as fresh
processes against the Ollama stand-in on loopback (no Ollama installs here: it speaks Ollama's wire
format)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from nexus_ark.providers.scripted import ScriptedBackend
from tests.conftest import REPO, run_cli, subprocess_env
from tests.integration.wire_server import WireServer

pytestmark = pytest.mark.integration


def _setup_json(data_dir: Path, **env: str) -> dict:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "ui", "--data-dir", str(data_dir), "setup", "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env=subprocess_env(**env),
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 1, "stdout is the answer alone: one JSON object"
    return json.loads(proc.stdout)


def test_setup_json_lists_a_server_running_on_loopback_and_the_recommended_download(data_dir: Path) -> None:
    with WireServer(ScriptedBackend(["hi"])) as ollama:
        report = _setup_json(data_dir, OLLAMA_HOST=ollama.url)
    servers = {s["kind"]: s for s in report["servers"]}
    assert servers["ollama"]["url"] == ollama.url
    models = {m["name"]: m for m in servers["ollama"]["models"]}
    assert models["smollm2:135m"]["spec"] == "ollama:smollm2:135m"
    assert models["smollm2:135m"]["api_base"] == ollama.url
    rec = report["recommended"]
    assert rec["size_bytes"] > 0 and rec["seconds"] > 0 and rec["get"].startswith("nexus-ark model get ")
    assert rec["spec"].startswith("gguf:") and str(data_dir / "models") in rec["spec"]
    assert report["built_in"]["spec"] == "bundled" and "tiny" in report["built_in"]["limit"]
    assert report["setup_done"] is False and report["user_name"] == ""


def test_setup_json_with_nothing_running_finds_none(data_dir: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on: Ollama "configured" but not running
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    report = _setup_json(data_dir, OLLAMA_HOST=f"127.0.0.1:{port}")
    assert all(s["url"] != f"http://127.0.0.1:{port}" for s in report["servers"])


def test_setup_name_makes_ken_appear_in_the_prompt_and_the_first_start_done(data_dir: Path) -> None:
    done = run_cli("--data-dir", str(data_dir), "setup", "--name", "Ken", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", "setting is no answer to print: notes go to stderr"
    prompt = run_cli(
        "--data-dir", str(data_dir), "prompt", "--persona", "aria", "--json", "Hello!", timeout=300
    )
    assert prompt.returncode == 0, prompt.stderr
    system = "\n".join(m["content"] for m in json.loads(prompt.stdout)["messages"] if m["role"] == "system")
    assert "Ken" in system
    report = _setup_json(data_dir)
    assert report["user_name"] == "Ken" and report["setup_done"] is True


def test_setup_model_from_a_server_found_here_is_the_default_and_the_personas_on_the_built_in_follow(
    data_dir: Path,
) -> None:
    with WireServer(ScriptedBackend(["hi"])) as ollama:
        import subprocess

        proc = subprocess.run(
            [sys.executable, "-m", "ui", "--data-dir", str(data_dir), "setup", "--name", "Ken", "--model",
             "ollama:gemma3:4b"],
            capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=REPO,
            env=subprocess_env(OLLAMA_HOST=ollama.url),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    config = (data_dir / "config.toml").read_text(encoding="utf-8")
    assert 'spec = "ollama:gemma3:4b"' in config and f'api_base = "{ollama.url}"' in config
    for slug in ("aria", "hikari"):
        persona = (data_dir / "personas" / slug / "persona.toml").read_text(encoding="utf-8")
        assert 'spec = ""' in persona, f"{slug} follows the app's default now"
    assert "aria" in proc.stderr and "hikari" in proc.stderr


def test_setup_refuses_a_gguf_file_that_is_not_there_and_changes_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nothing.gguf"
    proc = run_cli("--data-dir", str(data_dir), "setup", "--model", f"gguf:{missing}", timeout=120)
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "Traceback" not in proc.stderr
    config = data_dir / "config.toml"
    assert "setup_done = true" not in (config.read_text(encoding="utf-8") if config.exists() else "")


def test_setup_reaches_nothing_beyond_loopback_whatever_the_environment_says(
    data_dir: Path, tmp_path: Path
) -> None:
    """Under the audit hook that writes down every connect or name lookup beyond this machine: OLLAMA_HOST
    naming another host and a proxy in the environment are not followed."""
    import subprocess

    audit = tmp_path / "audit.log"
    audit.touch()
    proc = subprocess.run(
        [sys.executable, "-m", "tests.integration.audited_cli", "--data-dir", str(data_dir), "setup",
         "--json"],
        capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=REPO,
        env=subprocess_env(
            NEXUS_ARK_AUDIT_LOG=str(audit), OLLAMA_HOST="http://192.0.2.1:11434",
            HTTP_PROXY="http://192.0.2.2:3128", ALL_PROXY="http://192.0.2.2:3128",
        ),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert audit.read_text(encoding="utf-8") == ""
