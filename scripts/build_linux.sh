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
# SKIP_DEPS=1 (install no Debian package: scripts/linux_build_deps.sh is not run, absent libraries are only
# named). On a fresh Debian/Ubuntu, as root or with passwordless sudo, it installs what it needs
# (scripts/linux_build_deps.sh, then what scripts/deb_depends.py finds absent); otherwise run first:
#   sudo bash scripts/linux_build_deps.sh
# Needs python3 (3.11+, with venv), dpkg, tar. The first build of the venv compiles
# llama-cpp-python (~8 min on 2 cores); pip's wheel cache makes later ones take about a minute.
# The installed-app smoke test (root, Xvfb): NEXUS_ARK_INSTALLER_TEST=1 pytest tests/integration/test_installers.py
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ "${SKIP_DEPS:-0}" != 1 ]; then  # python3, the compilers, Qt's libraries (as root: installed if missing)
    printf '== build dependencies (Debian packages)\n'
    bash scripts/linux_build_deps.sh
fi
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
    build_app
}

build_app() {
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
# What the bundle's ELF files link (DT_NEEDED) and no file in the bundle provides, mapped to packages by
# dpkg -S, or by apt-file where the library is absent here (scripts/deb_depends.py). As root it installs
# what was absent; the bundle is then built again so that it is what a machine with them builds.
DEPENDS_ARGS=()
if [ "${SKIP_DEPS:-0}" != 1 ] && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; then
    DEPENDS_ARGS+=(--install)
fi
before=$(dpkg-query -W -f '${Package} ${Status}\n' | sort)
DEPENDS=$("$PY" scripts/deb_depends.py "$APP" "${DEPENDS_ARGS[@]}")
if [ "$before" != "$(dpkg-query -W -f '${Package} ${Status}\n' | sort)" ] && [ "${SKIP_BUILD:-0}" != 1 ]; then
    echo "warning: the bundle needed libraries scripts/linux_build_deps.sh does not install; building again" >&2
    build_app
    DEPENDS=$("$PY" scripts/deb_depends.py "$APP")
fi
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
