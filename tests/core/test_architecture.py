"""The arrows in docs/architecture.md point one way, and the core runs with Qt absent."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_hold() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    expected = len(contracts["contracts"])
    assert expected >= 5  # the core's two and the window's three (ui/: layers, independence, no circle)
    assert f"{expected} kept, 0 broken" in proc.stdout


def test_core_imports_and_runs_with_qt_absent(tmp_path: Path) -> None:
    script = f"""
import sys, pkgutil, importlib
for name in ("PySide6", "pyqtgraph", "ui"):
    sys.modules[name] = None  # any import of these now raises ImportError
import nexus_ark
for mod in pkgutil.walk_packages(nexus_ark.__path__, "nexus_ark."):
    if mod.name != "nexus_ark.__main__":
        importlib.import_module(mod.name)
from nexus_ark.cli import main
raise SystemExit(main(["--data-dir", {str(tmp_path)!r}, "persona", "list"]))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split("\t")[0] == "aria"


def test_headless_entry_point_never_imports_qt(tmp_path: Path) -> None:
    script = f"""
import sys
sys.modules["PySide6"] = None
from ui.launch import main
raise SystemExit(main(["--data-dir", {str(tmp_path)!r}, "persona", "list"]))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "aria" in proc.stdout
