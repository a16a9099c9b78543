"""The rooms beside the personas: each room's name with its members' faces side by side, the members and the
reply order in its tooltip. Read on a worker (read_rooms: the room files, the members' names and pictures);
a room that cannot be read is listed with why, and says so when clicked."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from ui.rooms.room_dialog import STRATEGY_LABELS
from ui.util.avatars import avatar_image
from ui.util.i18n import tr, tr_error

ICON_PX = 24
_FACE = 2 * 16  # each member's face in the icon, drawn at twice the size for a high-density screen
_PROBLEM_ROLE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class RoomRow:
    slug: str
    name: str
    members: list[str]  # the members' display names, in the room's order
    strategy: str
    problem: str = ""  # why the room cannot be read ("" when it can), in the person's language


def _faces(images: list[QImage]) -> QImage:
    """Up to three members' faces overlapping, left to right, in a square."""
    size = 2 * ICON_PX
    icon = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    icon.fill(Qt.GlobalColor.transparent)
    painter = QPainter(icon)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    shown = images[:3]
    step = (size - _FACE) // max(1, len(shown) - 1)
    for n, face in enumerate(shown):
        painter.drawImage(n * step, (size - _FACE) // 2 if len(shown) > 2 else n * step, face)
    painter.end()
    return icon


def read_rooms(app: NexusApp) -> tuple[list[RoomRow], dict[str, QImage]]:
    """Every room with its members' names, and its icon; reads files: call it on a worker."""
    rows: list[RoomRow] = []
    icons: dict[str, QImage] = {}
    for slug, settings in app.rooms.all():
        if isinstance(settings, NexusArkError):
            rows.append(RoomRow(slug, slug, [], "", tr_error(settings)))
            continue
        names, faces = [], []
        for member in settings.slugs:
            try:
                name = app.personas.load(member).settings.name
            except NexusArkError:
                name = member  # gone or unreadable: the room says why when it opens
            names.append(name)
            faces.append(avatar_image(name, app.personas.store.avatar_file(member), _FACE))
        rows.append(RoomRow(slug, settings.name, names, settings.strategy))
        icons[slug] = _faces(faces)
    return rows, icons


class RoomList(QListWidget):
    chosen = Signal(str)  # slug

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setIconSize(QSize(ICON_PX, ICON_PX))
        self.itemClicked.connect(lambda item: self.chosen.emit(item.data(Qt.ItemDataRole.UserRole)))
        self._rows: list[RoomRow] = []

    def show_rooms(self, rows: list[RoomRow], icons: dict[str, QImage], current: str | None) -> None:
        self._rows = rows
        self.clear()
        for row in rows:
            item = QListWidgetItem(row.name if not row.problem else f"{row.name} ⚠")
            item.setData(Qt.ItemDataRole.UserRole, row.slug)
            item.setData(_PROBLEM_ROLE, row.problem)
            if row.slug in icons:
                item.setIcon(QIcon(QPixmap.fromImage(icons[row.slug])))
            item.setToolTip(row.problem or self._about(row))
            self.addItem(item)
        self.select(current)

    @staticmethod
    def _about(row: RoomRow) -> str:
        order = tr(STRATEGY_LABELS.get(row.strategy, row.strategy))
        return tr("With {members}. Reply order: {order}", members=", ".join(row.members), order=order)

    def retranslate(self) -> None:
        for number, row in enumerate(self._rows):
            self.item(number).setToolTip(row.problem or self._about(row))

    def select(self, slug: str | None) -> None:
        """The room's row made current; None (or a room not listed): none is."""
        self.clearSelection()
        for number in range(self.count()):
            if self.item(number).data(Qt.ItemDataRole.UserRole) == slug:
                self.setCurrentRow(number)
                return
        self.setCurrentRow(-1)

    def problem(self, slug: str) -> str:
        return next((row.problem for row in self._rows if row.slug == slug), "")

    def names(self) -> dict[str, str]:
        return {row.slug: row.name for row in self._rows}
