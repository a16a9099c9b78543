"""Packaging hook (all metadata is in pyproject.toml).

The repository keeps the shipped personas/, models/ and assets/ at its top level; a wheel carries them
inside the package as nexus_ark/_shipped/<name>/, where nexus_ark.paths finds them through
importlib.resources. An editable install needs no copy: paths.py reads the checkout's folders.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED_FOLDERS = ("personas", "models", "assets")  # keep in step with nexus_ark.paths.SHIPPED_FOLDERS
# A persona's memory, editor droppings and caches are never shipped.
EXCLUDE = ("memory.db*", "*.pyc", "__pycache__", ".DS_Store", "*~", "*.tmp")


def _shipped_files() -> list[Path]:
    files = []
    for folder in SHIPPED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.is_file() and not any(fnmatch.fnmatch(p, pat) for p in parts for pat in EXCLUDE):
                files.append(path)
    return files


class BuildPyWithShippedData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "nexus_ark" / "_shipped"
        for path in _shipped_files():
            dest = target / path.relative_to(ROOT)
            self.mkpath(str(dest.parent))
            self.copy_file(str(path), str(dest))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        if getattr(self, "editable_mode", False):
            return super().get_outputs(include_bytecode)
        target = Path(self.build_lib) / "nexus_ark" / "_shipped"
        extra = [str(target / p.relative_to(ROOT)) for p in _shipped_files()]
        return [*super().get_outputs(include_bytecode), *extra]


setup(cmdclass={"build_py": BuildPyWithShippedData})
