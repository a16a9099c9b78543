"""The room's menu: rename, members (add, remove, reorder), the room's settings (mute, talkativeness, reply
order, cap, pause), the reply order and delete. A part of RoomPanel (a mixin), kept apart so each file holds
one job. Every change is saved through the core on the room's lane, after the step under way, and the open
room takes it there without reopening (NexusApp.update_room)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QMessageBox

from nexus_ark.rooms.room import RoomMemberSettings
from nexus_ark.rooms.turn_taking import STRATEGIES, Strategy
from ui.rooms.room_dialog import STRATEGY_LABELS, RoomDialog
from ui.rooms.room_settings import RoomSettingsDialog
from ui.util.i18n import tr


class RoomMenu:
    def _build_menu(self) -> QMenu:
        menu = QMenu(self)
        self.rename_action = QAction(self)
        self.rename_action.triggered.connect(self.rename)
        self.members_action = QAction(self)
        self.members_action.triggered.connect(self.edit_members)
        self.settings_action = QAction(self)
        self.settings_action.setObjectName("roomSettingsAction")
        self.settings_action.triggered.connect(self.edit_settings)
        self.order_menu = QMenu(menu)
        group = QActionGroup(self)
        self.order_actions: dict[str, QAction] = {}
        for key in STRATEGIES:
            action = QAction(self, checkable=True)
            action.triggered.connect(lambda _checked, k=key: self.set_strategy(k))
            group.addAction(action)
            self.order_menu.addAction(action)
            self.order_actions[key] = action
        self.delete_action = QAction(self)
        self.delete_action.triggered.connect(self.delete_room)
        menu.addAction(self.rename_action)
        menu.addAction(self.members_action)
        menu.addAction(self.settings_action)
        menu.addMenu(self.order_menu)
        menu.addSeparator()
        menu.addAction(self.delete_action)
        return menu

    def _retranslate_menu(self) -> None:
        self.rename_action.setText(tr("Rename…"))
        self.members_action.setText(tr("Members…"))
        self.settings_action.setText(tr("Room settings…"))
        self.order_menu.setTitle(tr("Reply order"))
        for key, action in self.order_actions.items():
            action.setText(tr(STRATEGY_LABELS[key]))
        self.delete_action.setText(tr("Delete the room…"))

    def _show_strategy(self, strategy: Strategy) -> None:
        self.order_actions[strategy].setChecked(True)

    def rename(self) -> None:
        if self.settings is None:
            return
        name, ok = QInputDialog.getText(
            self, tr("Rename the room"), tr("Name"), QLineEdit.EchoMode.Normal, self.settings.name
        )
        if ok and name.strip() and name.strip() != self.settings.name:
            self._change({"name": name.strip()})

    def edit_members(self) -> None:
        if self.settings is None:
            return
        dialog = RoomDialog(
            self, self.personas(), members=self.settings.slugs, strategy=self.settings.strategy, editing=True
        )
        if dialog.exec() != RoomDialog.DialogCode.Accepted:
            return
        _, slugs, strategy = dialog.values()
        kept = {member.persona: member for member in self.settings.members}  # talkativeness, muted
        members = [kept.get(slug) or RoomMemberSettings(persona=slug) for slug in slugs]
        self._change({"members": members, "strategy": strategy})

    def edit_settings(self) -> None:
        """Room settings…: mute, talkativeness, reply order, cap and pause, saved as the room goes on."""
        if self.settings is None:
            return
        dialog = RoomSettingsDialog(self, self.settings, self.member_names)
        self.settings_dialog = dialog  # tests and the screenshots reach it while it is open
        try:
            if dialog.exec() != RoomSettingsDialog.DialogCode.Accepted:
                return
            changes = dialog.changes()
        finally:
            self.settings_dialog = None
            dialog.deleteLater()
        if changes:
            self._change(changes)

    def set_strategy(self, strategy: Strategy) -> None:
        if self.settings is not None and strategy != self.settings.strategy:
            self._change({"strategy": strategy})

    def delete_room(self) -> None:
        if self.settings is None:
            return
        asked = QMessageBox.question(
            self,
            tr("Delete the room"),
            tr(
                "Delete the room {name}? Its record of the conversation goes; each member keeps what it "
                "heard and said there in its own memory.",
                name=self.settings.name,
            ),
        )
        if asked == QMessageBox.StandardButton.Yes:
            self._stop_auto()
            self.worker.delete()

    def _change(self, changes: dict[str, Any]) -> None:
        self._say(lambda: tr("Saving the room…"), passing=True)
        self.worker.update(changes)
