"""ruff is part of the bar: the tree stays lint-clean and formatted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    ruff = Path(sys.executable).parent / "ruff"
    return subprocess.run([str(ruff), *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_ruff_check_is_clean() -> None:
    proc = _ruff("check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean() -> None:
    proc = _ruff("format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
