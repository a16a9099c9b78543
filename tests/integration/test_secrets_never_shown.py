"""A key typed into persona.toml is refused without being shown: not on stdout, not on stderr, not in the
log people attach to bug reports; its first 4 characters at most, so the person knows which line it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.integration

KEY = "sk-live-Zq8v3KXb9T2mPa7Lw4Yc"


def test_a_plain_key_in_persona_toml_is_refused_and_never_printed_or_logged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_cli("--data-dir", str(data), "persona", "list").returncode == 0  # seeds the personas
    toml = data / "personas" / "aria" / "persona.toml"
    toml.write_text(
        toml.read_text("utf-8").replace("[model]\n", f'[model]\napi_key = "{KEY}"\n', 1), encoding="utf-8"
    )
    listed = run_cli("--data-dir", str(data), "persona", "list")
    chat = run_cli("--data-dir", str(data), "chat", "--persona", "aria", stdin="hi\n")
    verbose = run_cli("-v", "--data-dir", str(data), "chat", "--persona", "aria", stdin="hi\n")
    assert "plain API key" in listed.stdout and "'sk-l'…" in listed.stdout  # which line, not the key
    assert chat.returncode == 2 and "model.api_key" in chat.stderr
    log = (data / "logs" / "nexus-ark.log").read_text("utf-8")
    outputs = (listed.stdout, listed.stderr, chat.stdout, chat.stderr, verbose.stdout, verbose.stderr, log)
    for shown in outputs:
        assert KEY[:5] not in shown
