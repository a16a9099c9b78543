#!/usr/bin/env bash
# What scripts/build_linux.sh needs on a Debian or Ubuntu machine, installed with apt-get where missing:
#   sudo bash scripts/linux_build_deps.sh            install what is missing (nothing when all is there)
#   bash scripts/linux_build_deps.sh --check         list what is missing; exit 1 if anything is
# build_linux.sh runs it first (as root or with passwordless sudo it installs, otherwise it stops with the
# command above).
#
# The tools build the virtual environment (llama-cpp-python compiles from source) and the .deb. The
# libraries are the ones Qt's platform plugins (xcb, wayland, EGL/GLX) link: present at build time,
# PyInstaller bundles those it may bundle and the smoke test can load Qt, so the bundle is the same on a
# fresh machine as on a developer's. The .deb's Depends is not taken from this list: scripts/deb_depends.py
# reads what the bundle links and asks dpkg, or apt-file for a library that is still absent, and
# build_linux.sh rebuilds once with what it had to install, so a library missing here costs time, not the
# build.
set -euo pipefail

TOOLS=(python3 python3-venv python3-dev build-essential cmake git binutils apt-file ca-certificates)
QT_LIBRARIES=(
    libgl1 libegl1 libopengl0 libglib2.0-0 libdbus-1-3 libfontconfig1 libfreetype6 fonts-dejavu-core
    libx11-6 libx11-xcb1 libxkbcommon0 libxkbcommon-x11-0 libxcb1 libxcb-cursor0 libxcb-glx0 libxcb-icccm4
    libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0
    libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libdrm2 libwayland-client0 libwayland-cursor0
    libwayland-egl1
)

missing=()
for pkg in "${TOOLS[@]}" "${QT_LIBRARIES[@]}"; do
    # "install ok installed" only: a removed package leaves a config-files entry behind
    status=$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "${1:-}" = --check ]; then
    echo "${missing[*]}"
    exit 1
fi
SUDO=()
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)  # passwordless sudo, as on CI runners
    else
        echo "error: the build needs these Debian packages: ${missing[*]}" >&2
        echo "  install them with: sudo bash scripts/linux_build_deps.sh" >&2
        exit 1
    fi
fi
echo "installing: ${missing[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
