"""The persona list beside the conversation: a model of the personas (PersonaModel) with a role for each
thing a row knows (its slug, display name, avatar, why it cannot be opened and its unread count) and the
view that shows it (PersonaList). What a row shows (its text, bold face and tooltip) is derived from those
roles when the view asks, so a count that clears leaves nothing of itself behind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QFont, QIcon, QImage, QPixmap
from PySide6.QtWidgets import QListView, QWidget

from nexus_ark.app import NexusApp
from nexus_ark.personas.model import PersonaInfo
from ui.util.avatars import avatar_image
from ui.util.i18n import tr, tr_error

SLUG_ROLE = Qt.ItemDataRole.UserRole
NAME_ROLE = Qt.ItemDataRole.UserRole + 1  # the display name, without markers
ERROR_ROLE = Qt.ItemDataRole.UserRole + 2  # why a persona cannot be opened ("" when it can)
UNREAD_ROLE = Qt.ItemDataRole.UserRole + 3  # messages it wrote first that the person has not seen
AVATAR_ROLE = Qt.ItemDataRole.DecorationRole  # its picture (a QIcon), drawn beside the name
AVATAR_PX = 24
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class _Row:
    slug: str
    name: str  # the display name (the slug for a persona that cannot be opened)
    label: str  # the name as the row shows it: ⚠ marks a persona that cannot be opened or lost something
    problem: str  # why it cannot be opened, in the person's language ("" when it can)
    about: str  # the tooltip while nothing is unread: the problem, the warning or the description


def _row(info: PersonaInfo) -> _Row:
    name = info.name if info.ok else info.slug
    problem = "" if info.ok else tr_error(info.error)
    return _Row(
        slug=info.slug,
        name=name,
        label=name if info.ok and not info.warning else f"{name} ⚠",
        problem=problem,
        about=problem or tr_error(info.warning) or info.description,
    )


def draw_avatars(app: NexusApp, infos: list[PersonaInfo]) -> dict[str, QImage]:
    """Each persona's picture (or its stand-in) at the list's size; reads files: call it on a worker."""
    size = AVATAR_PX * 2  # sharp on a high-density screen, scaled down smoothly on others
    return {
        info.slug: avatar_image(
            info.name if info.ok else info.slug, app.personas.store.avatar_file(info.slug), size
        )
        for info in infos
    }


class PersonaModel(QAbstractListModel):
    """The personas as last read, with their unread counts and avatars (kept by slug across a new read)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._unread: dict[str, int] = {}
        self._avatars: dict[str, QIcon] = {}

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        unread = self._unread.get(row.slug, 0)
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{row.label}  ● {unread}" if unread else row.label
        if role == Qt.ItemDataRole.ToolTipRole:
            return tr("{count} unread messages written first", count=unread) if unread else row.about
        if role == Qt.ItemDataRole.FontRole:
            if not unread:
                return None
            font = QFont()
            font.setBold(True)
            return font
        return {
            SLUG_ROLE: row.slug,
            NAME_ROLE: row.name,
            ERROR_ROLE: row.problem,
            UNREAD_ROLE: unread,
            AVATAR_ROLE: self._avatars.get(row.slug),
        }.get(role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self._rows[index.row()].problem:  # clicked, it says why; never the current persona
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- what the window tells it -----------------------------------------------------------------------
    def set_personas(self, infos: list[PersonaInfo]) -> None:
        self.beginResetModel()
        self._rows = [_row(info) for info in infos]
        self.endResetModel()

    def set_unread(self, counts: dict[str, int]) -> None:
        """Unread counts by slug (a persona not named has none)."""
        before, self._unread = self._unread, {slug: n for slug, n in counts.items() if n}
        roles = [
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.FontRole,
            Qt.ItemDataRole.ToolTipRole,
            UNREAD_ROLE,
        ]
        for number, row in enumerate(self._rows):
            if before.get(row.slug, 0) != self._unread.get(row.slug, 0):
                self.dataChanged.emit(self.index(number), self.index(number), roles)

    def set_avatars(self, images: dict[str, QImage]) -> None:
        """Pictures by slug, drawn on a worker (draw_avatars); made icons here, on the UI thread."""
        self._avatars.update({slug: QIcon(QPixmap.fromImage(image)) for slug, image in images.items()})
        for number, row in enumerate(self._rows):
            if row.slug in images:
                self.dataChanged.emit(self.index(number), self.index(number), [AVATAR_ROLE])

    # -- what the window asks ---------------------------------------------------------------------------
    def row_of(self, slug: str) -> int:
        """The row showing this persona, or -1."""
        return next((number for number, row in enumerate(self._rows) if row.slug == slug), -1)

    def names(self) -> dict[str, str]:
        return {row.slug: row.name for row in self._rows}


class PersonaList(QListView):
    """The view of a PersonaModel of its own; a click on a row says which persona (`chosen`)."""

    chosen = Signal(str)  # slug

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.personas = PersonaModel(self)
        self.setModel(self.personas)
        self.setIconSize(QSize(AVATAR_PX, AVATAR_PX))
        self.setUniformItemSizes(True)
        self.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.clicked.connect(lambda index: self.chosen.emit(index.data(SLUG_ROLE)))

    def show_personas(self, infos: list[PersonaInfo], current_slug: str) -> str | None:
        """The list as read (unread counts are shown after it, by show_unread); returns the current
        persona's name when it is there and can be opened."""
        self.personas.set_personas(infos)
        name = self.select(current_slug)
        return name if name is not None and self.can_open(current_slug) else None

    def show_unread(self, counts: dict[str, int]) -> None:
        """Unread counts beside the personas' names, in bold."""
        self.personas.set_unread(counts)

    def show_avatars(self, images: dict[str, QImage]) -> None:
        self.personas.set_avatars(images)

    def select(self, slug: str) -> str | None:
        """Make the persona's row the current one; its display name, or None when it is not listed."""
        row = self.personas.row_of(slug)
        if row < 0:
            return None
        index = self.personas.index(row)
        self.setCurrentIndex(index)
        return index.data(NAME_ROLE)

    def current_slug(self) -> str | None:
        index = self.currentIndex()
        return index.data(SLUG_ROLE) if index.isValid() else None

    def problem(self, slug: str) -> str:
        """Why the persona cannot be opened, as the list read it ("" when it can, or is not listed)."""
        row = self.personas.row_of(slug)
        return self.personas.index(row).data(ERROR_ROLE) if row >= 0 else ""

    def can_open(self, slug: str) -> bool:
        """As the list read it: no folder is read on the UI thread."""
        return self.personas.row_of(slug) >= 0 and not self.problem(slug)

    def names(self) -> dict[str, str]:
        return self.personas.names()
