#!/usr/bin/env bash
# Sign "dist/Nexus Ark.app" (ad hoc unless MACOS_SIGN_IDENTITY names a Developer ID certificate in the
# keychain) and pack it into dist/nexus-ark-<version>-macos-<arch>.dmg with an Applications link.
#   bash packaging/macos/make_dmg.sh 0.1.0
# Notarization (a maintainer with an Apple Developer account): docs/installers.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=${1:?usage: make_dmg.sh VERSION}
APP="dist/Nexus Ark.app"
IDENTITY=${MACOS_SIGN_IDENTITY:--}
[ -d "$APP" ] || { echo "error: $APP is missing: pyinstaller build.spec first" >&2; exit 1; }
if [ "$IDENTITY" = - ]; then
    codesign --force --deep --sign - "$APP"
else
    # Hardened runtime and a timestamp: what notarization requires.
    codesign --force --deep --options runtime --timestamp \
        --entitlements packaging/macos/entitlements.plist --sign "$IDENTITY" "$APP"
fi
codesign --verify --deep --strict --verbose=2 "$APP"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
DMG="dist/nexus-ark-$VERSION-macos-$(uname -m).dmg"
rm -f "$DMG"
hdiutil create -volname "Nexus Ark $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO -ov "$DMG"
if [ "$IDENTITY" != - ]; then
    codesign --sign "$IDENTITY" --timestamp "$DMG"
fi
ls -l "$DMG"
