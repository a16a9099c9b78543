"""Smoke-test a built app folder on any OS (stdlib only, so it runs with any Python 3.11+):

    python packaging/smoke_bundle.py dist/nexus-ark            (the folder PyInstaller made)

doctor; one chat turn with the bundled model; a memory import and a search with the bundled embedder
(where this platform's build has it: --no-embedder says it does not); the build info and licences
baked in at build time; the window started offscreen until it quits by itself (NEXUS_ARK_QUIT_AFTER_MS).
Each step in a fresh data folder, with a deadline. Used by scripts/build_app.sh, scripts/build_linux.sh and
.github/workflows/release.yml.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def executables(app_dir: Path) -> tuple[Path, Path]:
    """(the command-line executable, the windowed one). On Windows the window is a GUI-subsystem .exe
    with no console (its prints go nowhere), so build.spec adds a console twin for the command line."""
    if sys.platform == "win32":
        return app_dir / "nexus-ark-cli.exe", app_dir / "nexus-ark.exe"
    return app_dir / "nexus-ark", app_dir / "nexus-ark"


def run(cmd: list[str], env: dict[str, str], stdin: str = "", timeout: float = 300) -> str:
    started = time.monotonic()
    proc = subprocess.run(
        cmd, env=env, input=stdin, capture_output=True, text=True, encoding="utf-8", timeout=timeout
    )
    took = time.monotonic() - started
    print(f"$ {' '.join(cmd[1:]) or cmd[0]}  ({took:.1f} s, exit {proc.returncode})", flush=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {cmd}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("app_dir", type=Path)
    parser.add_argument("--no-embedder", action="store_true", help="this build has no bundled embedder")
    parser.add_argument("--expect-version", default="", help="the version the build info must carry")
    args = parser.parse_args()
    cli, window = executables(args.app_dir)
    for exe in (cli, window):
        if not exe.is_file():
            raise SystemExit(f"{exe} is missing: build first (pyinstaller build.spec)")
    with tempfile.TemporaryDirectory(prefix="nexus-ark-smoke-") as home:
        env = {**os.environ, "NEXUS_ARK_HOME": home, "PYTHONIOENCODING": "utf-8"}
        base = [str(cli)]
        doctor = run([*base, "doctor"], env)
        print(doctor, end="")
        if "desktop-notifier is not installed" in doctor:  # a library left out of the bundle
            raise SystemExit("the bundle lacks desktop-notifier (build.spec's hiddenimports)")
        reply = run([*base, "chat", "--persona", "aria"], env, stdin="Say hello in five words.\n")
        print(f"reply: {reply.strip()!r}")
        if not reply.strip():
            raise SystemExit("the bundled model gave an empty reply")
        if not (Path(home) / "personas" / "aria" / "memory.db").is_file():
            raise SystemExit("the chat turn left no memory.db in the data folder")
        turns = Path(home) / "turns.jsonl"
        turn = {
            "id": "s1",
            "speaker": "Mika",
            "text": "My cat Luna is twelve.",
            "timestamp": "2026-01-01T10:00:00",
        }
        turns.write_text(json.dumps(turn) + "\n", encoding="utf-8")
        run([*base, "memory", "import", "--persona", "aria", str(turns)], env)
        mode = ["--mode", "fts"] if args.no_embedder else []
        hits = run(
            [*base, "memory", "search", "--persona", "aria", "--json", *mode, "How old is the cat?"], env
        )
        if '"s1"' not in hits:
            raise SystemExit(f"memory search did not find the imported turn: {hits}")
        check_build_info(args.app_dir, args.expect_version)
        started = time.monotonic()
        run(
            [str(window)],
            {**env, "QT_QPA_PLATFORM": "offscreen", "NEXUS_ARK_QUIT_AFTER_MS": "4000"},
            timeout=120,
        )
        print(f"window opened offscreen and quit by itself after {time.monotonic() - started:.1f} s")
    print("smoke test passed")
    return 0


def check_build_info(app_dir: Path, expect_version: str) -> None:
    """The About dialog's facts and licences, baked in by build.spec, are in the bundle."""
    found = sorted(app_dir.rglob("nexus_ark/_build_info.json"))
    if not found:
        raise SystemExit(
            f"no nexus_ark/_build_info.json in {app_dir}: build.spec did not bake the build info"
        )
    info = json.loads(found[0].read_text(encoding="utf-8"))
    print(f"build info: {info}")
    if expect_version and info.get("version") != expect_version:
        raise SystemExit(f"the build says version {info.get('version')!r}, expected {expect_version!r}")
    licences = found[0].parent / "licenses"
    wanted = ("SmolLM2-135M-Instruct.txt", "multilingual-e5-small.txt", "THIRD_PARTY_LICENSES.txt")
    missing = [name for name in wanted if not (licences / name).is_file()]
    if missing:
        raise SystemExit(f"licence files missing from {licences}: {missing}")


if __name__ == "__main__":
    raise SystemExit(main())
