"""Draws the app icon (assets/icons/app.png, .ico) with Qt, so the artwork is reproducible from source.

QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/make_icon.py
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QLinearGradient, QPainter, QPainterPath, QPen

OUT = Path(__file__).resolve().parent.parent / "assets" / "icons"


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


def main() -> None:
    QGuiApplication([])
    OUT.mkdir(parents=True, exist_ok=True)
    draw(256).save(str(OUT / "app.png"))
    if not draw(256).save(str(OUT / "app.ico")):
        print("this Qt has no ICO writer; app.ico not written")


if __name__ == "__main__":
    main()
