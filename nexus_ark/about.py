"""What this copy of Nexus Ark is: its version, build date and commit, and the licences it ships with.

A built app (build.spec) carries `_build_info.json` beside this module, written at build time with the
version, the build date and the commit. Run from source there is none: the version is the package's,
the commit is asked of git, and the build date is empty (the About dialog says "from source").

Licences: `licenses/` beside this module holds the texts of what the app bundles that pip does not
describe (the two models, Qt) and Nexus Ark's own; a build adds THIRD_PARTY_LICENSES.txt there, collected
from the build environment's installed distributions by `collect_third_party()`. From source that file
does not exist and the same collection runs over the current environment.

    python -m nexus_ark.about                      prints the build info
    python -m nexus_ark.about --third-party FILE   writes the libraries' licences (build.spec does this)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from nexus_ark import __version__

HERE = Path(__file__).resolve().parent
LICENSES_DIR = HERE / "licenses"
BUILD_INFO_FILE = HERE / "_build_info.json"
THIRD_PARTY_FILE = "THIRD_PARTY_LICENSES.txt"
# Tools that build the app but are not shipped in it.
BUILD_ONLY = {
    "pip",
    "setuptools",
    "wheel",
    "pyinstaller",
    "pyinstaller-hooks-contrib",
    "altgraph",
    "nexus-ark",
}
_LICENCE_FILE = re.compile(r"(^|/)(licen[cs]e|copying|notice|authors)[^/]*$", re.IGNORECASE)


@dataclass(frozen=True)
class BuildInfo:
    version: str
    build_date: str  # ISO 8601 in UTC; "" when running from source
    commit: str  # short hash, "+dirty" when built from uncommitted changes; "" when unknown

    @property
    def from_source(self) -> bool:
        return not self.build_date


@dataclass(frozen=True)
class Licence:
    title: str  # what it covers, e.g. "SmolLM2-135M-Instruct (bundled chat model)"
    spdx: str  # e.g. "Apache-2.0"
    file: str  # the file name in LICENSES_DIR


# What the app bundles beyond its Python libraries, shown first in the About dialog.
MODEL_LICENCES = (
    Licence("SmolLM2-135M-Instruct (bundled chat model)", "Apache-2.0", "SmolLM2-135M-Instruct.txt"),
    Licence("multilingual-e5-small (bundled embedding model)", "MIT", "multilingual-e5-small.txt"),
    # The shipped voices (issue 36; docs/voice.md).
    Licence("Mei, the Open JTalk voice (bundled Japanese voice)", "CC-BY-3.0", "HTS-voice-Mei-CC-BY-3.0.txt"),
    Licence("Kokoro-82M (bundled Japanese voices)", "Apache-2.0 AND MIT", "Kokoro-82M-Apache-2.0.txt"),
    Licence("Piper voice en_US-joe-medium (bundled English voice)", "CC0-1.0", "Piper-voice-joe-CC0.txt"),
)
OTHER_LICENCES = (
    Licence("Nexus Ark", "MIT", "nexus-ark.txt"),
    Licence("Qt 6 and PySide6", "LGPL-3.0-only", "Qt-PySide6-LGPL-3.0.txt"),
    Licence("Open JTalk and its dictionary (NAIST, UniDic)", "BSD-3-Clause", "Open-JTalk-dictionary-BSD.txt"),
    Licence("Piper and espeak-ng (English speech engine)", "GPL-3.0-or-later", "Piper-espeak-ng-GPL-3.0.txt"),
)


def build_info() -> BuildInfo:
    """The baked-in build info of a built app; else the source checkout's version and git commit."""
    try:
        raw = json.loads(BUILD_INFO_FILE.read_text(encoding="utf-8"))
        return BuildInfo(str(raw["version"]), str(raw["build_date"]), str(raw.get("commit", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return BuildInfo(_source_version(), "", git_commit(HERE.parent))


def _source_version() -> str:
    try:
        return metadata.version("nexus-ark")
    except metadata.PackageNotFoundError:
        return __version__


def git_commit(repo: Path, mark_dirty: bool = False) -> str:
    """The short commit of a checkout ("" outside one or without git); "+dirty" with uncommitted changes."""
    if not (repo / ".git").exists():
        return ""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return ""
        dirty = ""
        if mark_dirty:
            status = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=repo,
                capture_output=True,
                text=True,
                timeout=30,
            )
            dirty = "+dirty" if status.stdout.strip() else ""
        return commit.stdout.strip() + dirty
    except (OSError, subprocess.SubprocessError):
        return ""


def make_build_info(version: str, repo: Path, when: datetime | None = None) -> dict[str, str]:
    """What build.spec writes into _build_info.json."""
    when = when or datetime.now(UTC)
    return {
        "version": version,
        "build_date": when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(repo, mark_dirty=True),
    }


def licence_text(licence: Licence) -> str:
    try:
        return (LICENSES_DIR / licence.file).read_text(encoding="utf-8")
    except OSError as exc:
        return (
            f"{licence.title}: {licence.spdx}. The licence file {licence.file} is missing ({exc.strerror})."
        )


def third_party_text() -> str:
    """The libraries' licences: the file a build collected, else collected now from this environment."""
    try:
        return (LICENSES_DIR / THIRD_PARTY_FILE).read_text(encoding="utf-8")
    except OSError:
        return collect_third_party()


def _first(meta: metadata.PackageMetadata, field: str) -> str | None:
    """A metadata field's first value, as the email.message.Message underneath gives it with .get() (which
    the PackageMetadata protocol does not declare)."""
    values = meta.get_all(field)
    return values[0] if values else None


def _licence_name(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    expression = _first(meta, "License-Expression")
    if expression:
        return expression
    licence = (_first(meta, "License") or "").strip()
    if licence and "\n" not in licence and len(licence) < 120:
        return licence
    classifiers = [
        c.rsplit(" :: ", 1)[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")
    ]
    return ", ".join(classifiers) or (licence.splitlines()[0] if licence else "not stated")


def collect_third_party() -> str:
    """Every installed distribution except the build tools: name, version, licence, and the licence files
    its wheel carries (LICENSE, COPYING, NOTICE, AUTHORS, in its .dist-info or licenses/ folder)."""
    seen: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        name = (_first(dist.metadata, "Name") or "").strip()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if name and key not in BUILD_ONLY and key not in seen:
            seen[key] = dist
    parts = [
        "Third-party libraries shipped with Nexus Ark, with their licences.",
        "Collected from the installed Python distributions the app was built with.",
        "",
    ]
    for key in sorted(seen):
        dist = seen[key]
        name, version = dist.metadata["Name"], dist.version
        parts.append("=" * 78)
        parts.append(f"{name} {version} — {_licence_name(dist)}")
        home = _first(dist.metadata, "Home-page") or next(
            (u.split(",", 1)[1].strip() for u in dist.metadata.get_all("Project-URL") or [] if "," in u), ""
        )
        if home:
            parts.append(home)
        parts.append("=" * 78)
        texts = []
        for file in sorted(dist.files or [], key=str):
            if ".dist-info/" in str(file).replace("\\", "/") and _LICENCE_FILE.search(str(file)):
                try:
                    texts.append(Path(file.locate()).read_text(encoding="utf-8", errors="replace").strip())
                except OSError:
                    continue
        parts.append("\n\n".join(texts) if texts else "(no licence file in the distribution; see above)")
        parts.append("")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--third-party":
        Path(args[1]).write_text(collect_third_party(), encoding="utf-8")
        return 0
    info = build_info()
    print(f"Nexus Ark {info.version}")
    print(f"built: {info.build_date or 'from source'}")
    print(f"commit: {info.commit or 'unknown'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
