"""The files the app ships as data, for both packagers: setup.py (wheel) and build.spec (PyInstaller).

The repository keeps them at its top level (personas/, models/, assets/); installed, they live inside the
package as nexus_ark/_shipped/<folder>/, where nexus_ark.paths.resource_root() finds them.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

SHIPPED_FOLDERS = ("personas", "models", "assets")
PACKAGE_DIR = Path("nexus_ark", "_shipped")
# A persona's memory, editor droppings and caches are never shipped.
EXCLUDE = ("memory.db*", "*.pyc", "__pycache__", ".DS_Store", "*~", "*.tmp")


def shipped_files(root: Path) -> list[tuple[Path, Path]]:
    """(source file, its path relative to the installed package root), e.g.
    (root/personas/aria/persona.md, nexus_ark/_shipped/personas/aria/persona.md)."""
    files = []
    for folder in SHIPPED_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and not any(fnmatch.fnmatch(p, pat) for p in rel.parts for pat in EXCLUDE):
                files.append((path, PACKAGE_DIR / rel))
    return files
