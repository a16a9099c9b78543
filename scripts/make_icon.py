"""Draws the app icon with Qt, so the artwork is reproducible from source, and writes it for each platform:

  assets/icons/app.png                     256 px, the window icon (ui/app/application.py) and Linux
  assets/icons/app.ico                     Windows: 16, 24, 32, 48, 64 and 256 px PNG entries
  assets/icons/app.icns                    macOS: ic07..ic10 (128, 256, 512, 1024 px) PNG entries
  packaging/linux/icons/<N>.png            the hicolor sizes the .deb installs (16..512 px)

QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/make_icon.py

ICO and ICNS are written here rather than by Qt's image plugins: both formats are a small header and an
index around PNG images, and Qt has no ICNS writer (its ICO writer keeps a single size).
"""

from __future__ import annotations

import struct
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QLinearGradient, QPainter, QPainterPath, QPen

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "icons"
LINUX_OUT = ROOT / "packaging" / "linux" / "icons"
ICO_SIZES = (16, 24, 32, 48, 64, 256)
# ICNS types holding a PNG: ic07 128x128, ic08 256x256, ic09 512x512, ic10 1024x1024 (512@2x).
ICNS_TYPES = ((b"ic07", 128), (b"ic08", 256), (b"ic09", 512), (b"ic10", 1024))
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def draw(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 256
    sky = QLinearGradient(0, 0, 0, size)
    sky.setColorAt(0, QColor("#23305e"))
    sky.setColorAt(1, QColor("#6b4f9c"))
    p.setBrush(sky)
    p.setPen(Qt.PenStyle.NoPen)
    p.drawRoundedRect(QRectF(8 * s, 8 * s, 240 * s, 240 * s), 52 * s, 52 * s)
    # A crescent moon: the persona dreaming between conversations.
    p.setBrush(QColor("#ffe9a8"))
    p.drawEllipse(QPointF(172 * s, 70 * s), 30 * s, 30 * s)
    p.setBrush(sky)
    p.drawEllipse(QPointF(186 * s, 60 * s), 26 * s, 26 * s)
    # The ark: a hull on the water.
    hull = QPainterPath()
    hull.moveTo(48 * s, 150 * s)
    hull.lineTo(208 * s, 150 * s)
    hull.quadTo(196 * s, 196 * s, 150 * s, 200 * s)
    hull.lineTo(106 * s, 200 * s)
    hull.quadTo(60 * s, 196 * s, 48 * s, 150 * s)
    p.setBrush(QColor("#f4f1ea"))
    p.drawPath(hull)
    p.setBrush(QColor("#f4f1ea"))
    p.drawRoundedRect(QRectF(92 * s, 112 * s, 72 * s, 34 * s), 8 * s, 8 * s)
    p.setBrush(QColor("#ffcf5c"))
    for x in (104, 122, 140):
        p.drawEllipse(QPointF((x + 6) * s, 129 * s), 5 * s, 5 * s)
    p.setPen(QPen(QColor("#9ec5ff"), 6 * s, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    p.drawLine(QPointF(40 * s, 216 * s), QPointF(216 * s, 216 * s))
    p.end()
    return image


def png_bytes(size: int) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not draw(size).save(buffer, "PNG"):
        raise RuntimeError(f"Qt could not encode a {size} px PNG")
    buffer.close()
    return bytes(data.data())


def ico_bytes(images: dict[int, bytes]) -> bytes:
    """ICONDIR + one ICONDIRENTRY per image + the PNG data (PNG entries: Windows Vista and later)."""
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries, blobs = b"", b""
    for size, png in sorted(images.items()):
        side = 0 if size >= 256 else size  # 0 means 256
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        blobs += png
        offset += len(png)
    return header + entries + blobs


def icns_bytes(images: list[tuple[bytes, bytes]]) -> bytes:
    """'icns' + total length, then (type, 8 + length, PNG data) per entry; big-endian lengths."""
    body = b"".join(kind + struct.pack(">I", 8 + len(png)) + png for kind, png in images)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> None:
    QGuiApplication([])
    OUT.mkdir(parents=True, exist_ok=True)
    LINUX_OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "app.png").write_bytes(png_bytes(256))
    (OUT / "app.ico").write_bytes(ico_bytes({size: png_bytes(size) for size in ICO_SIZES}))
    (OUT / "app.icns").write_bytes(icns_bytes([(kind, png_bytes(size)) for kind, size in ICNS_TYPES]))
    for size in HICOLOR_SIZES:
        (LINUX_OUT / f"{size}.png").write_bytes(png_bytes(size))
    print(f"wrote {OUT / 'app.png'}, app.ico, app.icns and {len(HICOLOR_SIZES)} sizes in {LINUX_OUT}")


if __name__ == "__main__":
    main()
