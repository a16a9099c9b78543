"""The main window's rooms (issue 24): the Rooms section under the personas, New room…, and a room's panel
shown in the central area in place of the persona's conversation (the persona stays open underneath; a
click on any persona brings its conversation back). A controller the window owns (window.rooms), given the
window (the dialogs' parent, its title), the persona list, the open persona and a narrow host
(ui/main/hosts.py). One room is shown at a time; rooms run on the window's rooms lane, one after another
(ui/rooms/room_worker.py), started with the first room opened."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from nexus_ark.app import NexusApp
from ui.main.hosts import RoomHost
from ui.rooms.room_dialog import RoomDialog
from ui.rooms.room_list import RoomList, RoomRow, read_rooms
from ui.rooms.room_panel import RoomPanel, wired
from ui.util.i18n import tr
from ui.util.open_persona import OpenPersona
from ui.util.persona_list import PersonaList
from ui.util.tasks import SerialWorker, run_in_background, while_open


class RoomsController(QObject):
    def __init__(
        self,
        window: QWidget,
        app: NexusApp,
        shown: OpenPersona,
        persona_list: PersonaList,
        host: RoomHost,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.app = app
        self.shown = shown
        self.persona_list = persona_list
        self.host = host
        self.room_panel: RoomPanel | None = None
        self.room_lane: SerialWorker | None = None
        self._room_reads = 0  # the latest read of the rooms (an older one arriving is dropped)
        self.rooms_label = QLabel()
        self.rooms_label.setStyleSheet("font-weight:600")
        self.room_list = wired(RoomList(), "roomList", self.open_room, "chosen")
        self.new_room_button = wired(QPushButton(), "newRoomButton", self.new_room)
        self.pages = QStackedWidget()  # the central area: the persona's conversation, or a room's panel

    def add_to(self, left_layout: QVBoxLayout, conversation: QWidget) -> QStackedWidget:
        """The Rooms section under the personas; the central area with the conversation on its first page."""
        for widget in (self.rooms_label, self.room_list, self.new_room_button):
            left_layout.addWidget(widget)
        self.persona_list.chosen.connect(self._persona_chosen_in_room)  # after the window's own slot
        self.pages.addWidget(conversation)
        return self.pages

    def retranslate(self) -> None:
        self.rooms_label.setText(tr("Rooms"))
        self.new_room_button.setText(tr("New room…"))
        self.room_list.retranslate()
        if self.room_panel is not None:
            self.room_panel.retranslate()

    def refresh_rooms(self, then_open: str | None = None) -> None:
        """Read the rooms on a worker, then list them; with then_open, then open that room."""
        self._room_reads += 1
        token = self._room_reads
        app = self.app

        def shown(result: tuple[list[RoomRow], dict[str, QImage]]) -> None:
            if token == self._room_reads:
                current = self.room_panel.slug if self.room_panel is not None else None
                self.room_list.show_rooms(*result, then_open or current)
            if then_open:
                self.open_room(then_open)

        def failed(message: str) -> None:
            self.host.show_status(message, 15_000)

        run_in_background(lambda: read_rooms(app), while_open(self, shown), while_open(self, failed))

    def new_room(self) -> None:
        personas = {
            slug: name for slug, name in self.persona_list.names().items() if self.persona_list.can_open(slug)
        }
        dialog = RoomDialog(self.window, personas)
        if dialog.exec() != RoomDialog.DialogCode.Accepted:
            return
        name, members, strategy = dialog.values()

        def failed(message: str) -> None:
            QMessageBox.warning(self.window, tr("Room not created"), message)

        app = self.app
        run_in_background(  # writes its folder: off the UI thread
            lambda: app.rooms.create(name, members, strategy),
            while_open(self, lambda slug: self.refresh_rooms(then_open=slug)),
            while_open(self, failed),
        )

    def open_room(self, slug: str) -> None:
        """The room's panel in the central area (the room opens on its lane: the members' memories)."""
        if self.shown.streaming:
            self.room_list.select(self.room_panel.slug if self.room_panel is not None else None)
            return
        problem = self.room_list.problem(slug)
        if problem:
            QMessageBox.warning(self.window, tr("Room cannot be opened"), problem)
            return
        if self.room_panel is not None and self.room_panel.slug == slug:
            return
        self.close_room()
        if self.room_lane is None:
            self.room_lane = SerialWorker("rooms")
        names = self.persona_list.names()
        panel = RoomPanel(
            self.app,
            slug,
            self.room_lane,
            lambda: {s: n for s, n in names.items() if self.persona_list.can_open(s)},
        )
        panel.changed.connect(self._room_changed)
        panel.deleted.connect(self._room_deleted)
        self.room_panel = panel
        self.pages.addWidget(panel)
        self.pages.setCurrentWidget(panel)
        self.persona_list.clearSelection()
        self.room_list.select(slug)
        self.host.follow_shown_page(room_shown=True)
        self.window.setWindowTitle(f"Nexus Ark — {self.room_list.names().get(slug, slug)}")

    def _room_changed(self, slug: str, name: str) -> None:
        if self.room_panel is not None and self.room_panel.slug == slug:
            self.window.setWindowTitle(f"Nexus Ark — {name}")
        self.refresh_rooms()

    def _room_deleted(self, slug: str) -> None:
        self.show_persona_page()
        self.refresh_rooms()
        self.host.show_status(tr("The room was deleted; its members keep their memories."), 15_000)

    def _persona_chosen_in_room(self, slug: str) -> None:
        if self.room_panel is not None and not self.shown.streaming and self.persona_list.can_open(slug):
            self.show_persona_page()

    def show_persona_page(self) -> None:
        """The persona's conversation again; the room closes (its answer under way stops)."""
        self.close_room()
        self.room_list.select(None)
        self.persona_list.select(self.shown.slug)
        self.host.show_title()

    def close_room(self, wait: bool = False) -> None:
        """The room shown closes on its lane (its answer under way stops at its next token); with wait (the
        window's exit), block until the lane has ended, before the core closes."""
        panel, self.room_panel = self.room_panel, None
        if panel is not None:
            self.host.follow_shown_page(room_shown=False)
            panel.close_room()
            self.pages.removeWidget(panel)
            panel.deleteLater()
        if wait and self.room_lane is not None:
            self.room_lane.wait()
