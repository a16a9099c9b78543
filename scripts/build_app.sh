#!/usr/bin/env bash
# Build the one-folder app with PyInstaller and smoke-start the result.
#   bash scripts/build_app.sh            uses .venv (pip install -e '.[build]' first)
# Not part of every CI run: the build takes about a minute and 300 MB of disk.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
"$VENV/bin/pip" install --progress-bar off -q -e '.[build]'
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN build.spec
APP=dist/nexus-ark/nexus-ark
du -sh dist/nexus-ark
SMOKE_HOME=$(mktemp -d)
trap 'rm -rf "$SMOKE_HOME"' EXIT
echo "== doctor (from the bundle)"
NEXUS_ARK_HOME="$SMOKE_HOME" "$APP" doctor
echo "== one chat turn with the bundled model"
reply=$(echo "Say hello in five words." | NEXUS_ARK_HOME="$SMOKE_HOME" "$APP" chat --persona aria)
echo "$reply"
[ -n "$reply" ]
echo "== memory: import and search with the bundled embedder"
printf '%s\n' '{"id": "s1", "speaker": "Mika", "text": "My cat Luna is twelve.", "timestamp": "2026-01-01T10:00:00"}' \
    > "$SMOKE_HOME/turns.jsonl"
NEXUS_ARK_HOME="$SMOKE_HOME" "$APP" memory import --persona aria "$SMOKE_HOME/turns.jsonl"
NEXUS_ARK_HOME="$SMOKE_HOME" "$APP" memory search --persona aria --json "How old is the cat?" | grep -q '"s1"'
echo "== the window opens offscreen and quits by itself"
QT_QPA_PLATFORM=offscreen NEXUS_ARK_HOME="$SMOKE_HOME" NEXUS_ARK_QUIT_AFTER_MS=4000 "$APP"
echo "smoke test passed"
