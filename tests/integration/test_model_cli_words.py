"""`nexus-ark model list | get` as a newcomer reads them: a list with a header whose source column tells
apart two entries a character apart, and a pull with Ollama down that says so and what to do. Real processes,
the shipped catalogue; "Ollama down" is a loopback port nobody listens on (connections refused, as there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.integration.conftest import free_port

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
