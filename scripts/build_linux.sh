#!/usr/bin/env bash
# Build the Linux artifacts of Nexus Ark from a clean virtual environment into dist/:
#   dist/nexus-ark_<version>_<arch>.deb              installs to /opt/nexus-ark, /usr/bin/nexus-ark, a menu entry
#   dist/nexus-ark-<version>-linux-<machine>.tar.gz  the portable folder: unpack anywhere, run ./nexus-ark
#
#   bash scripts/build_linux.sh                          the version in pyproject.toml
#   NEXUS_ARK_VERSION=0.1.1 bash scripts/build_linux.sh  another version (e.g. to test an upgrade)
#
# Environment: VENV (default build/linux/venv, created afresh each run; KEEP_VENV=1 reuses it),
# SKIP_BUILD=1 (package the folder the last run built, same version), SKIP_SMOKE=1 (skip packaging/smoke_bundle.py on the built folder), DEB_MAINTAINER, DEB_COMPRESSION
# (gzip, the default, or xz: about a tenth smaller and several minutes slower on two cores).
# Needs python3 (3.11+, with venv), dpkg-deb, ldd, tar. The first build of the venv compiles
# llama-cpp-python (~8 min on 2 cores); pip's wheel cache makes later ones take about a minute.
# The installed-app smoke test (root, Xvfb): NEXUS_ARK_INSTALLER_TEST=1 pytest tests/integration/test_installers.py
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build/linux
VENV=${VENV:-$BUILD/venv}
NICE=(nice -n 19)
PY=${PYTHON:-python3}

VERSION=${NEXUS_ARK_VERSION:-$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')}
if ! [[ $VERSION =~ ^[0-9][A-Za-z0-9.+~-]*$ ]]; then
    echo "error: version '$VERSION' must start with a digit and hold only letters, digits and . + ~ -" >&2
    exit 2
fi
export NEXUS_ARK_VERSION=$VERSION
ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
MACHINE=$(uname -m)
MAINTAINER=${DEB_MAINTAINER:-"Nexus Ark maintainers <maintainers@nexus-ark.invalid>"}
step() { printf '\n== %s\n' "$*"; }
quiet_pip() { grep -v -e "is ignored: it is neither a file nor a directory" || true; }

APP=$BUILD/dist/nexus-ark

build_bundle() {
    step "clean virtual environment: $VENV"
    if [ "${KEEP_VENV:-0}" != 1 ] || [ ! -x "$VENV/bin/python" ]; then
        rm -rf "$VENV"
        "$PY" -m venv "$VENV"
    fi
    "${NICE[@]}" "$VENV/bin/pip" install --progress-bar off -q -e "${ROOT}[build]" 2>&1 | quiet_pip
    "$VENV/bin/pip" check

    step "PyInstaller (build.spec), version $VERSION"
    local start
    start=$(date +%s)
    "${NICE[@]}" "$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
        --distpath "$BUILD/dist" --workpath "$BUILD/work" build.spec
    echo "built $APP in $(($(date +%s) - start)) s: $(du -sh "$APP" | cut -f1)"

    if [ "${SKIP_SMOKE:-0}" != 1 ]; then
        step "smoke test of the built folder"
        "${NICE[@]}" "$VENV/bin/python" packaging/smoke_bundle.py "$APP" --expect-version "$VERSION"
    fi
}

if [ "${SKIP_BUILD:-0}" = 1 ]; then  # package the folder the last run built (after a packaging change)
    built=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
        "$APP/_internal/nexus_ark/_build_info.json")
    [ "$built" = "$VERSION" ] || { echo "error: $APP is version $built, not $VERSION" >&2; exit 2; }
else
    build_bundle
fi

step "system libraries the bundle takes from the system (for the .deb's Depends)"
# Every ELF file in the bundle, resolved with the bundle's own folders first (as the bootloader does):
# what still resolves outside the bundle comes from the system; dpkg -S names its package.
# A library not found here (it was missing on the build machine) is mapped by name below.
declare -A SONAME_PACKAGE=(
    [libxcb-cursor.so.0]=libxcb-cursor0 [libxcb-icccm.so.4]=libxcb-icccm4 [libxcb-keysyms.so.1]=libxcb-keysyms1
    [libxkbcommon-x11.so.0]=libxkbcommon-x11-0 [libxkbcommon.so.0]=libxkbcommon0 [libxcb-image.so.0]=libxcb-image0
    [libxcb-render-util.so.0]=libxcb-render-util0 [libxcb-xkb.so.1]=libxcb-xkb1 [libxcb-randr.so.0]=libxcb-randr0
    [libxcb-shape.so.0]=libxcb-shape0 [libxcb-sync.so.1]=libxcb-sync1 [libxcb-xfixes.so.0]=libxcb-xfixes0
    [libxcb-shm.so.0]=libxcb-shm0 [libxcb-render.so.0]=libxcb-render0 [libxcb-util.so.1]=libxcb-util1
    [libxcb.so.1]=libxcb1 [libX11-xcb.so.1]=libx11-xcb1 [libGL.so.1]=libgl1 [libEGL.so.1]=libegl1
    [libfontconfig.so.1]=libfontconfig1 [libfreetype.so.6]=libfreetype6 [libdbus-1.so.3]=libdbus-1-3
)
LIBDIRS=$(find "$APP" -type f -name '*.so*' -printf '%h\n' | sort -u | tr '\n' ':')
# "name => /path (0xaddress)" or "name => not found", one line per library, duplicates dropped.
RESOLVED=$(find "$APP" -type f \( -name '*.so*' -o -name nexus-ark \) -print0 |
    xargs -0 env LD_LIBRARY_PATH="$LIBDIRS" ldd 2>/dev/null | grep '=>' |
    sed -E 's/^[[:space:]]+//; s/ \(0x[0-9a-f]+\)$//' | sort -u)
declare -A PACKAGES=()
# shellcheck disable=SC2013  # sonames and paths hold no spaces
for name in $(awk '$3 == "not" {print $1}' <<<"$RESOLVED" | sort -u); do
    pkg=${SONAME_PACKAGE[$name]:-}
    [ -n "$pkg" ] || { echo "error: $name is needed by the bundle and unknown here" >&2; exit 1; }
    echo "  $name: not on this machine -> $pkg"
    PACKAGES[$pkg]=1
done
# shellcheck disable=SC2013
for path in $(awk '$3 ~ /^\// {print $3}' <<<"$RESOLVED" | grep -v "^$APP" | sort -u); do
    pkg=""
    for candidate in "$path" "$(readlink -f "$path")" "/usr$path" "/usr$(readlink -f "$path")"; do
        pkg=$(dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$pkg" ] && break
    done
    [ -n "$pkg" ] || { echo "error: no Debian package owns $path" >&2; exit 1; }
    echo "  $path -> $pkg"
    PACKAGES[$pkg]=1
done
GLIBC=$(getconf GNU_LIBC_VERSION | awk '{print $2}')  # e.g. "glibc 2.36"
DEPENDS="libc6 (>= $GLIBC)"
for pkg in $(printf '%s\n' "${!PACKAGES[@]}" | sort); do
    [ "$pkg" = libc6 ] || DEPENDS="$DEPENDS, $pkg"
done
echo "Depends: $DEPENDS"

step "the .deb"
STAGE=$BUILD/deb/nexus-ark_${VERSION}_$ARCH
rm -rf "$STAGE"
mkdir -p "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" \
    "$STAGE/usr/share/doc/nexus-ark" "$STAGE/usr/share/metainfo"
cp -a "$APP" "$STAGE/opt/nexus-ark"
install -m 0755 packaging/linux/nexus-ark.sh "$STAGE/usr/bin/nexus-ark"
install -m 0644 packaging/linux/nexus-ark.desktop "$STAGE/usr/share/applications/nexus-ark.desktop"
sed "s/@VERSION@/$VERSION/; s/@DATE@/$(date -u +%Y-%m-%d)/" packaging/linux/org.nexusark.app.metainfo.xml \
    > "$STAGE/usr/share/metainfo/org.nexusark.app.metainfo.xml"
for png in packaging/linux/icons/*.png; do
    size=$(basename "$png" .png)
    install -D -m 0644 "$png" "$STAGE/usr/share/icons/hicolor/${size}x${size}/apps/nexus-ark.png"
done
LICENSES=$(find "$STAGE/opt/nexus-ark" -type d -path '*nexus_ark/licenses' | head -1)
{
    echo "Nexus Ark $VERSION"
    echo "Licences of Nexus Ark, its bundled models and libraries:"
    for f in "$LICENSES"/*.txt; do echo "  ${f#"$STAGE"}"; done
    echo
    cat "$LICENSES/nexus-ark.txt"
} > "$STAGE/usr/share/doc/nexus-ark/copyright"
INSTALLED_KB=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
cat > "$STAGE/DEBIAN/control" <<EOF
Package: nexus-ark
Version: $VERSION
Section: utils
Priority: optional
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $INSTALLED_KB
Depends: $DEPENDS
Recommends: fonts-noto-cjk
Description: desktop companion whose personas live on your own computer
 Nexus Ark is a desktop app where you talk with one or more personas. Each
 persona is a folder you own: a soul in plain Markdown, its settings and its
 own memory database. A small language model ships with the app, so it works
 offline with no account. Your data lives in ~/.local/share/NexusArk and is
 kept when the package is upgraded or removed.
EOF
install -m 0755 packaging/linux/postinst "$STAGE/DEBIAN/postinst"
install -m 0755 packaging/linux/postrm "$STAGE/DEBIAN/postrm"
mkdir -p dist
DEB=dist/nexus-ark_${VERSION}_$ARCH.deb
"${NICE[@]}" dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-gzip}" --build "$STAGE" "$DEB"
dpkg-deb --info "$DEB" | sed -n '/Package:/,$p'

step "the portable .tar.gz"
PORTABLE=$BUILD/portable/nexus-ark-$VERSION
rm -rf "$BUILD/portable"
mkdir -p "$BUILD/portable"
cp -al "$APP" "$PORTABLE"  # hard links: no second copy on disk
install -m 0644 packaging/linux/icons/256.png "$PORTABLE/nexus-ark.png"
install -m 0644 packaging/linux/README-portable.txt "$PORTABLE/README.txt"
TARBALL=dist/nexus-ark-$VERSION-linux-$MACHINE.tar.gz
tar -C "$BUILD/portable" -cf - "nexus-ark-$VERSION" | "${NICE[@]}" gzip -6 > "$TARBALL"

step "artifacts"
ls -l "$DEB" "$TARBALL"
echo "app folder: $(du -sh "$APP" | cut -f1)"
