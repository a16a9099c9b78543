#!/usr/bin/env bash
# scripts/build_linux.sh run in a fresh Debian (minbase: no Python, no compiler, no X or Wayland library),
# to check that the build needs nothing the build machine happens to have. As root, with debootstrap:
#   sudo bash scripts/build_linux_fresh.sh [SUITE]         (default bookworm; the artifacts land in dist/)
# The committed tree (HEAD; WITH_CHANGES=1 adds the uncommitted changes of tracked files) is built. The
# host's pip cache is copied too (llama-cpp-python's compiled wheel: FRESH_PIP=1 leaves it out), and the
# host's CA bundle is used for pip (a TLS-inspecting proxy's CA included). CHROOT (default
# build/linux-fresh/SUITE) is reused when it exists; delete it for a new one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE=${1:-bookworm}
CHROOT=${CHROOT:-$ROOT/build/linux-fresh/$SUITE}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "error: run as root (debootstrap, chroot, mount)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "error: apt-get install debootstrap" >&2; exit 1; }

if [ ! -x "$CHROOT/bin/bash" ]; then
    echo "== debootstrap $SUITE into $CHROOT"
    mkdir -p "$(dirname "$CHROOT")"
    debootstrap --variant=minbase "$SUITE" "$CHROOT" "$MIRROR" >"$CHROOT.debootstrap.log" 2>&1 ||
        { tail -20 "$CHROOT.debootstrap.log" >&2; exit 1; }
fi
cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$CHROOT/root/host-ca.crt"
if [ "${FRESH_PIP:-0}" != 1 ] && [ -d "$HOME/.cache/pip" ]; then
    mkdir -p "$CHROOT/root/.cache" && cp -a "$HOME/.cache/pip" "$CHROOT/root/.cache/"
fi
rm -rf "$CHROOT/src"
git clone -q "$ROOT" "$CHROOT/src"
if [ "${WITH_CHANGES:-0}" = 1 ]; then
    git diff HEAD | (cd "$CHROOT/src" && git apply --allow-empty)
fi

mounted=()
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount --recursive --lazy "${mounted[$i]}" || true; done; }
trap cleanup EXIT
for fs in proc sys dev; do
    mount --rbind "/$fs" "$CHROOT/$fs" && mounted+=("$CHROOT/$fs")
done

echo "== scripts/build_linux.sh in the fresh $SUITE"
chroot "$CHROOT" env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_CERT=/root/host-ca.crt SSL_CERT_FILE=/root/host-ca.crt ${NEXUS_ARK_VERSION:+NEXUS_ARK_VERSION=$NEXUS_ARK_VERSION} \
    bash -c 'cd /src && bash scripts/build_linux.sh'
mkdir -p dist
cp -v "$CHROOT"/src/dist/nexus-ark* dist/
