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
    state = data_dir / "state.toml"
    assert "setup_done = true" not in (state.read_text(encoding="utf-8") if state.exists() else "")


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


def test_a_real_openai_compatible_server_is_found_and_its_model_setting_answers(
    llama_server: str, data_dir: Path
) -> None:
    """llama-cpp-python's own server (OpenAI-compatible, serving the bundled model on 127.0.0.1): the probe
    finds it with its model, and the model setting it gives reaches a reply."""
    from nexus_ark.app import NexusApp
    from nexus_ark.providers.local_servers import Candidate, probe_servers

    url = llama_server.removesuffix("/v1")
    found = probe_servers([Candidate(kind="llamacpp", url=url, protocol="openai")])
    assert len(found) == 1 and found[0].url == url
    assert [m.name for m in found[0].models] == ["local"]
    config = found[0].models[0].config()
    assert config.spec == "litellm:openai/local" and config.api_base == llama_server
    with NexusApp(data_dir) as app:
        check = app.models.check(config)
    assert check.reply


def _read_until(fd: int, wanted: str, seen: list[str], timeout: float = 60.0) -> str:
    """What the terminal shows, read until `wanted` appears (fails loudly at the deadline)."""
    import os
    import select
    import time

    deadline = time.monotonic() + timeout
    while wanted not in "".join(seen):
        left = deadline - time.monotonic()
        assert left > 0, f"the terminal never showed {wanted!r}; it showed:\n{''.join(seen)}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                assert wanted in "".join(seen), f"the terminal closed before {wanted!r}:\n{''.join(seen)}"
            seen.append(chunk.decode("utf-8", errors="replace"))
    return "".join(seen)


def test_setup_on_a_terminal_asks_the_name_then_offers_the_server_and_the_download(data_dir: Path) -> None:
    """`nexus-ark setup` with a real terminal (a pty): the name, then a numbered list of minds; a wrong
    answer is asked again; the server's model chosen by its number becomes the default."""
    import os
    import pty
    import subprocess

    with WireServer(ScriptedBackend(["hi"])) as ollama:
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui", "--data-dir", str(data_dir), "setup"],
            stdin=follower, stdout=follower, stderr=follower, cwd=REPO, close_fds=True,
            env=subprocess_env(OLLAMA_HOST=ollama.url, TERM="dumb"),
        )  # fmt: skip
        os.close(follower)
        seen: list[str] = []
        try:
            _read_until(leader, "What should the personas call you?", seen)
            os.write(leader, b"Ken\n")
            shown = _read_until(leader, "Choose 1-", seen)
            assert "smollm2:135m  (Ollama" in shown and "Download Qwen3 4B" in shown
            assert "The built-in model. The built-in model answers at once" in shown
            number = next(
                line.split(".")[0].strip() for line in shown.splitlines() if "smollm2:135m  (Ollama" in line
            )
            os.write(leader, b"99\n")
            _read_until(leader, "Type a number from 1 to", seen)
            os.write(leader, f"{number}\n".encode())
            _read_until(leader, "Model: ollama:smollm2:135m", seen)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(leader)
    config = (data_dir / "config.toml").read_text(encoding="utf-8")
    assert 'user_name = "Ken"' in config and "setup_done = true" in (data_dir / "state.toml").read_text()
    assert 'spec = "ollama:smollm2:135m"' in config


def test_the_estimate_uses_the_speed_the_last_download_here_reached(
    served: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before any download the time is at an assumed speed; a download from the Hugging Face stand-in
    (serving the bundled GGUF at a set rate) measures the line, and the next estimate uses that."""
    from nexus_ark.app import NexusApp
    from nexus_ark.app.first_start import setup_report
    from nexus_ark.providers.catalogue import ASSUMED_BYTES_PER_S, find_entry, load_catalogue
    from tests.integration.hub_server import HubStandIn
    from tests.integration.test_model_download import NAME, write_catalogue

    hub = HubStandIn(served).start()
    hub.rate = 24 * 2**20
    try:
        monkeypatch.setenv("HF_ENDPOINT", hub.hub_url)
        monkeypatch.setenv("NEXUS_ARK_CATALOGUE", str(write_catalogue(tmp_path, hub)))
        with NexusApp(data_dir) as app:
            before = setup_report(app, targets=[]).recommended
            assert before is not None and not before.speed_measured
            assert before.bytes_per_s == ASSUMED_BYTES_PER_S
            entry = find_entry(load_catalogue(), NAME)
            assert entry is not None
            app.models.get(entry)
            after = setup_report(app, targets=[]).recommended
    finally:
        hub.stop()
    assert after is not None and after.speed_measured
    assert 0.5 * hub.rate < after.bytes_per_s < 1.5 * hub.rate, after.bytes_per_s


def test_setup_in_the_terminal_downloads_the_recommended_model_and_uses_it(
    served: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The answers a person types (here handed in as they would be read), the download from the Hugging Face
    stand-in with its progress on stderr, and the verified file as the model."""
    import argparse

    from nexus_ark.app import NexusApp
    from nexus_ark.cli.setup import run_setup
    from tests.integration.hub_server import HubStandIn
    from tests.integration.test_model_download import write_catalogue

    hub = HubStandIn(served).start()
    hub.rate = 48 * 2**20
    answers = iter(["Ken"])
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        if prompt.startswith("Choose"):
            shown = capsys.readouterr().err
            return next(line.split(".")[0].strip() for line in shown.splitlines() if "Download " in line)
        return next(answers)

    try:
        monkeypatch.setenv("HF_ENDPOINT", hub.hub_url)
        monkeypatch.setenv("NEXUS_ARK_CATALOGUE", str(write_catalogue(tmp_path, hub)))
        with NexusApp(data_dir) as app:
            args = argparse.Namespace(name=None, model=None, json=False, api_base=None)
            assert run_setup(app, args, ask=ask) == 0
            spec = app.settings.chat_model.spec
    finally:
        hub.stop()
    downloaded = data_dir / "models" / served.name
    assert spec == f"gguf:{downloaded}" and downloaded.stat().st_size == served.stat().st_size
    assert asked[0].startswith("What should the personas call you?")
    assert "done:" in capsys.readouterr().err
