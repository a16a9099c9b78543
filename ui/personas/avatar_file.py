"""An avatar chosen from a file: a PNG or JPEG cropped to a centred square and scaled to the stored size,
as PNG bytes. Refused in words when the file is too large, unreadable, not an image or damaged."""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from nexus_ark.errors import PersonaError
from ui.util.i18n import tr

AVATAR_PX = 256  # stored size; shown smaller
AVATAR_MAX_FILE = 20 * 1024 * 1024  # a photo straight from a phone fits; a 50 MB file is refused unread


def avatar_png(path: Path, size: int = AVATAR_PX) -> tuple[bytes, QImage]:
    """A PNG or JPEG file cropped to a centred square and scaled to `size` px, as PNG bytes (and the
    image). Runs on a worker: QImage, unlike QPixmap, may be used off the UI thread."""
    try:
        if path.stat().st_size > AVATAR_MAX_FILE:
            raise PersonaError(
                tr("{file} is too large for an avatar (at most 20 MB).", file=path.name),
            )
        data = path.read_bytes()
    except OSError as exc:
        raise PersonaError(tr("Cannot read {file}: {reason}", file=path.name, reason=exc.strerror)) from exc
    if not (data.startswith(b"\x89PNG\r\n\x1a\n") or data.startswith(b"\xff\xd8\xff")):
        raise PersonaError(tr("{file} is not a PNG or JPEG image.", file=path.name))
    image = QImage.fromData(data)
    if image.isNull():
        raise PersonaError(tr("{file} is damaged: it could not be read as an image.", file=path.name))
    side = min(image.width(), image.height())
    square = image.copy((image.width() - side) // 2, (image.height() - side) // 2, side, side)
    scaled = square.scaled(
        size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "avatar.png"
        if not scaled.save(str(target)):  # PNG, from the file name
            raise PersonaError(tr("The avatar could not be converted to PNG."))
        return target.read_bytes(), scaled
