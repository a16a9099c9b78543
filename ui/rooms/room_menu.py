"""The room's menu: rename, members (add, remove, reorder), the room's settings (mute, talkativeness, reply
order, cap, pause), the reply order and delete. A part RoomPanel owns (panel.room_menu), given the panel (the
dialogs' parent) as a narrow host (RoomMenuHost) for the room's settings and what a change asks of it. Every
change is saved through the core on the room's lane, after the step under way, and the open room takes it
there without reopening."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QMessageBox, QWidget

from nexus_ark.rooms.room import RoomMemberSettings, RoomSettings
from nexus_ark.rooms.turn_taking import STRATEGIES, Strategy
from ui.rooms.room_dialog import STRATEGY_LABELS, RoomDialog
from ui.rooms.room_settings import RoomSettingsDialog
from ui.util.i18n import tr


class RoomMenuHost(Protocol):
    """What the menu asks of the room's panel."""

    @property
    def settings(self) -> RoomSettings | None:
        """The room's settings as it opened or was last saved; None until it is open."""

    @property
    def member_names(self) -> dict[str, str]:
        """slug -> name of the room's members, in their order."""

    def personas_to_choose(self) -> dict[str, str]:
        """slug -> name of the personas that can be opened (as the window's list read them)."""

    def save_changes(self, changes: dict[str, Any]) -> None:
        """Saved on the room's lane; the room goes on with them."""

    def delete_room(self) -> None:
        """Auto mode off, the room deleted on its lane."""


class RoomMenu(QObject):
    def __init__(self, panel: QWidget, host: RoomMenuHost) -> None:
        super().__init__(panel)
        self.panel = panel
        self.host = host
        self.settings_dialog: RoomSettingsDialog | None = None  # while Room settings… is open
        self.menu = self._build_menu()

    def _build_menu(self) -> QMenu:
        panel = self.panel
        menu = QMenu(panel)
        self.rename_action = QAction(panel)
        self.rename_action.triggered.connect(self.rename)
        self.members_action = QAction(panel)
        self.members_action.triggered.connect(self.edit_members)
        self.settings_action = QAction(panel)
        self.settings_action.setObjectName("roomSettingsAction")
        self.settings_action.triggered.connect(self.edit_settings)
        self.order_menu = QMenu(menu)
        group = QActionGroup(panel)
        self.order_actions: dict[str, QAction] = {}
        for key in STRATEGIES:
            action = QAction(panel, checkable=True)
            action.triggered.connect(lambda _checked, k=key: self.set_strategy(k))
            group.addAction(action)
            self.order_menu.addAction(action)
            self.order_actions[key] = action
        self.delete_action = QAction(panel)
        self.delete_action.triggered.connect(self.delete_room)
        menu.addAction(self.rename_action)
        menu.addAction(self.members_action)
        menu.addAction(self.settings_action)
        menu.addMenu(self.order_menu)
        menu.addSeparator()
        menu.addAction(self.delete_action)
        return menu

    def retranslate(self) -> None:
        self.rename_action.setText(tr("Rename…"))
        self.members_action.setText(tr("Members…"))
        self.settings_action.setText(tr("Room settings…"))
        self.order_menu.setTitle(tr("Reply order"))
        for key, action in self.order_actions.items():
            action.setText(tr(STRATEGY_LABELS[key]))
        self.delete_action.setText(tr("Delete the room…"))

    def show_strategy(self, strategy: Strategy) -> None:
        self.order_actions[strategy].setChecked(True)

    def rename(self) -> None:
        settings = self.host.settings
        if settings is None:
            return
        name, ok = QInputDialog.getText(
            self.panel, tr("Rename the room"), tr("Name"), QLineEdit.EchoMode.Normal, settings.name
        )
        if ok and name.strip() and name.strip() != settings.name:
            self.host.save_changes({"name": name.strip()})

    def edit_members(self) -> None:
        settings = self.host.settings
        if settings is None:
            return
        dialog = RoomDialog(
            self.panel,
            self.host.personas_to_choose(),
            members=settings.slugs,
            strategy=settings.strategy,
            editing=True,
        )
        if dialog.exec() != RoomDialog.DialogCode.Accepted:
            return
        _, slugs, strategy = dialog.values()
        kept = {member.persona: member for member in settings.members}  # talkativeness, muted
        members = [kept.get(slug) or RoomMemberSettings(persona=slug) for slug in slugs]
        self.host.save_changes({"members": members, "strategy": strategy})

    def edit_settings(self) -> None:
        """Room settings…: mute, talkativeness, reply order, cap and pause, saved as the room goes on."""
        settings = self.host.settings
        if settings is None:
            return
        dialog = RoomSettingsDialog(self.panel, settings, self.host.member_names)
        self.settings_dialog = dialog  # tests and the screenshots reach it while it is open
        try:
            if dialog.exec() != RoomSettingsDialog.DialogCode.Accepted:
                return
            changes = dialog.changes()
        finally:
            self.settings_dialog = None
            dialog.deleteLater()
        if changes:
            self.host.save_changes(changes)

    def set_strategy(self, strategy: Strategy) -> None:
        settings = self.host.settings
        if settings is not None and strategy != settings.strategy:
            self.host.save_changes({"strategy": strategy})

    def delete_room(self) -> None:
        settings = self.host.settings
        if settings is None:
            return
        asked = QMessageBox.question(
            self.panel,
            tr("Delete the room"),
            tr(
                "Delete the room {name}? Its record of the conversation goes; each member keeps what it "
                "heard and said there in its own memory.",
                name=settings.name,
            ),
        )
        if asked == QMessageBox.StandardButton.Yes:
            self.host.delete_room()
