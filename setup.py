"""Packaging hook (all metadata is in pyproject.toml).

The repository keeps the shipped personas/, models/ and assets/ at its top level; a wheel carries them
inside the package as nexus_ark/_shipped/<name>/, where nexus_ark.paths finds them through
importlib.resources. An editable install needs no copy: paths.py reads the checkout's folders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))
from shipped_data import shipped_files  # noqa: E402  (shared with build.spec)


class BuildPyWithShippedData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for src, rel in shipped_files(ROOT):
            dest = Path(self.build_lib) / rel
            self.mkpath(str(dest.parent))
            self.copy_file(str(src), str(dest))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return [*outputs, *(str(Path(self.build_lib) / rel) for _, rel in shipped_files(ROOT))]


setup(cmdclass={"build_py": BuildPyWithShippedData})
