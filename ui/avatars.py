"""A persona's (or the person's) picture for the conversation and the persona editor: the picture from the
persona folder, else a stand-in (a coloured disc with the name's first letter, the same colour for the same
name everywhere).

Drawn on QImage, which a worker thread may paint: the first letter of a script not drawn yet (ひ, 김) loads a
fallback font, 8-25 ms measured, which must not happen on the UI thread at a persona switch.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter


def placeholder_image(name: str, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    hue = sum(map(ord, name)) * 47 % 360
    painter.setBrush(QColor.fromHsl(hue, 110, 150))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(0, 0, size, size)
    font = QFont()
    font.setPixelSize(int(size * 0.45))
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(image.rect(), Qt.AlignmentFlag.AlignCenter, (name.strip()[:1] or "?").upper())
    painter.end()
    return image


def avatar_image(name: str, picture: Path | None, size: int) -> QImage:
    """The picture filling a size x size square (cropped to its middle), else the stand-in. Reads and
    decodes a file: call it off the UI thread. A picture that cannot be read or decoded gets the stand-in."""
    if picture is not None:
        try:
            decoded = QImage.fromData(picture.read_bytes())
        except OSError:
            decoded = QImage()
        if not decoded.isNull():
            scaled = decoded.scaled(
                QSize(size, size),
                Qt.AspectRatioMode.KeepAspectRatioByExpanding,
                Qt.TransformationMode.SmoothTransformation,
            )
            return scaled.copy((scaled.width() - size) // 2, (scaled.height() - size) // 2, size, size)
    return placeholder_image(name, size)
