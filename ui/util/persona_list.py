"""The persona list beside the conversation: each row's slug, display name, why it cannot be opened and its
unread count, as item data roles (the text shown is derived from them)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from nexus_ark.personas.model import PersonaInfo
from ui.util.i18n import tr, tr_error

SLUG_ROLE = Qt.ItemDataRole.UserRole
NAME_ROLE = Qt.ItemDataRole.UserRole + 1  # the display name, without markers
ERROR_ROLE = Qt.ItemDataRole.UserRole + 2  # why a persona cannot be opened ("" when it can)
UNREAD_ROLE = Qt.ItemDataRole.UserRole + 3  # messages it wrote first that the person has not seen


class PersonaList(QListWidget):
    def show_personas(self, infos: list[PersonaInfo], current_slug: str) -> str | None:
        """The list as read (unread counts are shown after it, by show_unread); returns the current
        persona's name when it is there and can be opened."""
        current_name = None
        self.clear()
        for info in infos:
            # ⚠ marks a persona that cannot be opened, or one that runs but lost something (its soul).
            label = info.name if info.ok and not info.warning else f"{info.name if info.ok else info.slug} ⚠"
            item = QListWidgetItem(label)
            item.setData(SLUG_ROLE, info.slug)
            item.setData(NAME_ROLE, info.name if info.ok else info.slug)
            problem = "" if info.ok else tr_error(info.error)
            item.setData(ERROR_ROLE, problem)
            item.setToolTip(problem or tr_error(info.warning) or info.description)
            if not info.ok:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.addItem(item)
            if info.slug == current_slug:
                self.setCurrentItem(item)
                if info.ok:
                    current_name = info.name
        return current_name

    def items(self) -> list[QListWidgetItem]:
        return [self.item(row) for row in range(self.count())]

    def find(self, slug: str) -> QListWidgetItem | None:
        return next((item for item in self.items() if item.data(SLUG_ROLE) == slug), None)

    def names(self) -> dict[str, str]:
        return {item.data(SLUG_ROLE): item.data(NAME_ROLE) for item in self.items()}

    def can_open(self, slug: str) -> bool:
        """As the list read it: no folder is read on the UI thread."""
        item = self.find(slug)
        return item is not None and not item.data(ERROR_ROLE)

    def show_unread(self, counts: dict[str, int]) -> None:
        """Unread counts beside the personas' names, in bold."""
        for item in self.items():
            count = counts.get(item.data(SLUG_ROLE), 0)
            item.setData(UNREAD_ROLE, count)
            base = item.text().split("  ●", 1)[0]
            item.setText(f"{base}  ● {count}" if count else base)
            font = QFont(item.font())
            font.setBold(bool(count))
            item.setFont(font)
            if count:
                item.setToolTip(tr("{count} unread messages written first", count=count))
