"""The New room dialog, also the room's Members dialog: a name, the members (two to six, ticked in a list
whose order, dragged, is the room's order) and the reply order."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.rooms.room import MAX_MEMBERS, MIN_MEMBERS
from nexus_ark.rooms.turn_taking import STRATEGIES, Strategy
from ui.util import theme
from ui.util.i18n import N_, tr

STRATEGY_LABELS = {
    "natural": N_("Natural: who is named, then whoever the words draw in"),
    "list": N_("In turn: everyone, in the list's order"),
    "manual": N_("I choose who speaks"),
}


class RoomDialog(QDialog):
    def __init__(
        self,
        parent: QWidget | None,
        personas: dict[str, str],
        *,
        name: str = "",
        members: list[str] | None = None,
        strategy: Strategy = "natural",
        editing: bool = False,
    ) -> None:
        """personas: slug -> name of those that can be opened; members: the ticked ones, in order first."""
        super().__init__(parent)
        self.setWindowTitle(tr("Room members") if editing else tr("New room"))
        self.name_field = QLineEdit(name)
        self.name_field.setMaxLength(80)
        self.name_field.setVisible(not editing)  # a room is renamed from its menu
        self.members_list = QListWidget()
        self.members_list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        chosen = [slug for slug in members or [] if slug in personas]
        for slug in [*chosen, *(s for s in personas if s not in chosen)]:
            item = QListWidgetItem(personas[slug])
            item.setData(Qt.ItemDataRole.UserRole, slug)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsDragEnabled)
            item.setCheckState(Qt.CheckState.Checked if slug in chosen else Qt.CheckState.Unchecked)
            self.members_list.addItem(item)
        self.members_list.itemChanged.connect(self._check)
        self.strategy_box = QComboBox()
        for key in STRATEGIES:
            self.strategy_box.addItem(tr(STRATEGY_LABELS[key]), key)
        self.strategy_box.setCurrentIndex(STRATEGIES.index(strategy))
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.name_field.textChanged.connect(self._check)

        form = QFormLayout()
        if not editing:
            form.addRow(tr("Name"), self.name_field)
        form.addRow(tr("Reply order"), self.strategy_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel(tr("Members (drag to change the order):")))
        layout.addWidget(self.members_list, 1)
        layout.addWidget(self.hint)
        layout.addWidget(self.buttons)
        self.resize(420, 420)
        self._check()

    def members(self) -> list[str]:
        """The ticked personas, in the list's order."""
        items = (self.members_list.item(row) for row in range(self.members_list.count()))
        return [
            item.data(Qt.ItemDataRole.UserRole)
            for item in items
            if item.checkState() == Qt.CheckState.Checked
        ]

    def set_member(self, slug: str, ticked: bool) -> None:
        for row in range(self.members_list.count()):
            item = self.members_list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == slug:
                item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)

    def _suggested_name(self) -> str:
        names = {
            self.members_list.item(row).data(Qt.ItemDataRole.UserRole): self.members_list.item(row).text()
            for row in range(self.members_list.count())
        }
        return " & ".join(names[slug] for slug in self.members())

    def _check(self, *_args) -> None:
        count = len(self.members())
        self.name_field.setPlaceholderText(self._suggested_name())
        fits = MIN_MEMBERS <= count <= MAX_MEMBERS
        self.hint.setText(
            tr(
                "{count} chosen: a room has {low} to {high} members.",
                count=count,
                low=MIN_MEMBERS,
                high=MAX_MEMBERS,
            )
        )
        theme.set_tone(self.hint, "muted" if fits else "error")
        named = bool(self.name_field.text().strip() or self.name_field.placeholderText().strip())
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(fits and named)

    def values(self) -> tuple[str, list[str], Strategy]:
        name = self.name_field.text().strip() or self._suggested_name()
        return name, self.members(), self.strategy_box.currentData()
