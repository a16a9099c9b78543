#!/usr/bin/env bash
# Build the one-folder app with PyInstaller and smoke-test the result (any OS with bash).
#   bash scripts/build_app.sh            uses .venv (pip install -e '.[build]' first)
# For the Linux installers from a clean venv use scripts/build_linux.sh (docs/installers.md).
# Not part of every CI run: the build takes a few minutes and 500 MB of disk.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
BIN=$VENV/bin
[ -d "$BIN" ] || BIN=$VENV/Scripts  # Windows venvs
"$BIN/pip" install --progress-bar off -q -e '.[build]'
"$BIN/pyinstaller" --noconfirm --clean --log-level WARN build.spec
du -sh dist/nexus-ark
# doctor, one chat turn with the bundled model, memory import and search, the build info and licences,
# and the window started offscreen until it quits by itself.
"$BIN/python" packaging/smoke_bundle.py dist/nexus-ark
