"""The import contracts on ui/ (pyproject.toml) break when someone brings back a circle or makes one window
package import another: each test copies ui/ aside, adds one import, and runs lint-imports on the copy."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def _lint(tree: Path) -> tuple[int, str]:
    proc = subprocess.run(
        [str(LINT), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=600
    )  # the copy is found first: lint-imports puts its working directory at the head of sys.path
    found = re.search(r"Contracts: (\d+) kept, (\d+) broken", proc.stdout)
    assert found, proc.stdout + proc.stderr
    return int(found.group(2)), proc.stdout


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "ui", tmp_path / "ui", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "nexus_ark").symlink_to(REPO / "nexus_ark")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _add_import(tree: Path, module: str, line: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")


def test_the_copy_as_it_is_keeps_every_contract(tree: Path) -> None:
    broken, out = _lint(tree)
    assert broken == 0, out


def test_a_controller_importing_the_main_window_again_breaks_the_layers(tree: Path) -> None:
    """The circle this package layout broke: life_controller read the window's private attributes."""
    _add_import(tree, "ui.life.life_controller", "from ui.main.main_window import MainWindow")
    broken, out = _lint(tree)
    assert broken >= 1
    assert "ui: arrows point down: app -> main -> the windows -> soul -> models -> util\n" in out
    assert "ui.life.life_controller -> ui.main.main_window" in out


def test_a_circle_inside_one_package_breaks_the_acyclic_contract(tree: Path) -> None:
    _add_import(tree, "ui.main.menus", "from ui.main.main_window import MainWindow")
    broken, out = _lint(tree)
    assert broken == 1
    assert re.search(r"no import circle inside any package of ui BROKEN", out)
    assert ".menus -> .main_window" in out


def test_one_window_package_importing_another_breaks_independence(tree: Path) -> None:
    _add_import(tree, "ui.settings.settings_dialog", "from ui.life.tray import Tray")
    broken, out = _lint(tree)
    assert broken == 1
    assert "ui.settings is not allowed to import ui.life" in out


def test_util_importing_a_window_breaks_the_layers(tree: Path) -> None:
    _add_import(tree, "ui.util.i18n", "from ui.chat import chat_view")
    broken, out = _lint(tree)
    assert broken >= 1
    assert "ui.util.i18n -> ui.chat.chat_view" in out
