"""A key inside a server's URL (issue 33, item 2): `http://user:KEY@host/v1` in any URL setting was printed
on stderr and written to nexus-ark.log, to memory.db's activity and so to the backups. It is masked as an
API key is: nowhere but in the settings file the person typed it into. And with -v, whole prompts (the soul,
memories) reach stderr, which the person watches, but not the log file, unless NEXUS_ARK_LOG_CONTENT=1."""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path

import pytest
import tomli_w

from tests.conftest import cli_command, run_cli, subprocess_env

pytestmark = pytest.mark.integration

KEY = "SECRETKEY-4c7Zq8v3KXb9"
SOUL_LINE = "lives on this person's own computer"  # from aria's persona.md


def _closed_port() -> int:
    """A loopback port nothing listens on: the server is down and refuses, as a real one that is off."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _set(path: Path, table: str, values: dict) -> None:
    settings = tomllib.loads(path.read_text("utf-8")) if path.exists() else {}
    settings[table] = {**settings.get(table, {}), **values}
    path.write_text(tomli_w.dumps(settings), "utf-8")


def _leaks(data: Path, outputs: list[str]) -> list[str]:
    """Where the key shows: any output, or any file of the data folder but the settings typed into."""
    found = [f"output {i}" for i, text in enumerate(outputs) if KEY in text]
    for path in data.rglob("*"):
        if path.is_file() and path.suffix != ".toml" and KEY.encode() in path.read_bytes():
            found.append(str(path.relative_to(data)))
    return found


@pytest.mark.parametrize("where", ["persona model", "persona internal model", "app embedder", "--api-base"])
def test_a_key_inside_a_url_is_never_shown_logged_or_stored(data_dir: Path, where: str) -> None:
    data = str(data_dir)
    assert run_cli("--data-dir", data, "persona", "list").returncode == 0  # seeds the personas
    url = f"http://mika:{KEY}@127.0.0.1:{_closed_port()}/v1"
    toml = data_dir / "personas" / "aria" / "persona.toml"
    extra: list[str] = []
    if where == "persona model":
        _set(toml, "model", {"spec": "litellm:openai/gpt-4o-mini", "api_base": url})
    elif where == "persona internal model":
        _set(toml, "internal_model", {"spec": "ollama:qwen2.5:1.5b", "api_base": url.removesuffix("/v1")})
    elif where == "app embedder":
        _set(
            data_dir / "config.toml",
            "embedder",
            {"spec": "litellm:openai/text-embedding-3-small", "api_base": url},
        )
    else:
        extra = ["--model", "litellm:openai/gpt-4o-mini", "--api-base", url]
    runs = [
        run_cli("--data-dir", data, "persona", "list"),
        run_cli("--data-dir", data, "chat", "--persona", "aria", *extra, stdin="Hello there!\n"),
        run_cli("-v", "--data-dir", data, "chat", "--persona", "aria", *extra, stdin="Hello again!\n"),
        run_cli("--data-dir", data, "memory", "backup", "--persona", "aria"),
        run_cli("--data-dir", data, "activity", "--persona", "aria", "--json"),
    ]
    for proc in runs[:2] + runs[3:]:  # (with -v, libraries log the refused connection's traceback)
        assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    outputs = [text for proc in runs for text in (proc.stdout, proc.stderr)]
    assert any("http://***@127.0.0.1" in text for text in outputs), "the server is still named, masked"
    assert _leaks(data_dir, outputs) == []


def test_with_verbose_whole_prompts_reach_stderr_but_not_the_log_file_unless_asked(data_dir: Path) -> None:
    import subprocess

    data = str(data_dir)
    assert run_cli("--data-dir", data, "persona", "list").returncode == 0
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    _set(
        data_dir / "personas" / "aria" / "persona.toml",
        "model",
        {"spec": "litellm:openai/gpt-4o-mini", "api_base": url},
    )
    log = data_dir / "logs" / "nexus-ark.log"
    quiet = run_cli("-v", "--data-dir", data, "chat", "--persona", "aria", stdin="Hello!\n")
    assert SOUL_LINE in quiet.stderr, "with -v the request is on stderr"
    assert SOUL_LINE not in log.read_text("utf-8"), "but not in the log file"
    asked = subprocess.run(
        cli_command("-v", "--data-dir", data, "chat", "--persona", "aria"),
        input="Hello!\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        env=subprocess_env(NEXUS_ARK_LOG_CONTENT="1"),
    )
    assert "uncaught" not in asked.stderr
    assert SOUL_LINE in log.read_text("utf-8"), "asked for, the log file keeps it"
