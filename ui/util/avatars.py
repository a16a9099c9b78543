"""A persona's (or the person's) picture for the conversation and the persona editor: the picture from the
persona folder, else a stand-in (a coloured disc with the name's first letter, the same colour for the same
name everywhere).

Drawn on QImage, which a worker thread may paint: the first letter of a script not drawn yet (ひ, 김) loads a
fallback font, 8-25 ms measured, which must not happen on the UI thread at a persona switch. Each picture is
drawn once and kept (a changed file is drawn again): drawing text on a worker still loads font files (from
disk, once the system has dropped them from its cache) while holding Qt's font database, and the UI thread,
laying out the conversation's text, waited for it 10-15 ms at a persona switch (perf, docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter

KEPT = 64  # pictures kept drawn: a few per persona; past this the oldest go
_kept: dict[tuple, QImage] = {}
_kept_lock = threading.Lock()  # workers draw in parallel


def _remembered(key: tuple, draw) -> QImage:
    with _kept_lock:
        image = _kept.get(key)
    if image is None:
        image = draw()
        with _kept_lock:
            _kept[key] = image
            while len(_kept) > KEPT:
                del _kept[next(iter(_kept))]
    return QImage(image)  # a copy sharing the pixels (copy-on-write): the kept one is never painted on


def placeholder_image(name: str, size: int) -> QImage:
    """The stand-in: a disc in the name's colour with its first letter."""
    return _remembered(("initial", name, size), lambda: _draw_initial(name, size))


def _draw_initial(name: str, size: int) -> QImage:
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
    if picture is None:
        return placeholder_image(name, size)
    try:
        found = picture.stat()
    except OSError:
        return placeholder_image(name, size)
    stamp = (str(picture), found.st_mtime_ns, found.st_size)
    return _remembered(("picture", name, stamp, size), lambda: _draw_picture(name, picture, size))


def _draw_picture(name: str, picture: Path, size: int) -> QImage:
    try:
        decoded = QImage.fromData(picture.read_bytes())
    except OSError:
        decoded = QImage()
    if decoded.isNull():
        return placeholder_image(name, size)
    scaled = decoded.scaled(
        QSize(size, size),
        Qt.AspectRatioMode.KeepAspectRatioByExpanding,
        Qt.TransformationMode.SmoothTransformation,
    )
    return scaled.copy((scaled.width() - size) // 2, (scaled.height() - size) // 2, size, size)
