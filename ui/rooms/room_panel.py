"""A room in the main window's central area, in place of a persona's conversation: its name and members, the
lines said (a bubble per member in its own colour), who is writing, the person's message box, a next-speaker
control, auto mode and the room's menu (room_menu.py, a part it owns).

The person's input interrupts: typing turns auto mode off at once (a step not begun is dropped, the answer
being written may finish), and sending while a member answers stops that answer at its next token and sends.
The room itself runs on its lane (room_worker.py); nothing here waits on a model or a file."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.rooms.conversation import Answered, Said, Speaking, Streamed, Withdrawn
from nexus_ark.rooms.room import RoomSettings
from nexus_ark.rooms.turn_taking import AutoMode
from ui.rooms.room_dialog import STRATEGY_LABELS
from ui.rooms.room_menu import RoomMenu
from ui.rooms.room_view import RoomView, member_colours
from ui.rooms.room_worker import OpenedRoom, RoomWorker, ShownMember, StepEnd, UpdatedRoom
from ui.util import theme
from ui.util.i18n import LanguageTexts, tr, tr_error
from ui.util.language_words import mismatch_text
from ui.util.message_input import MessageInput
from ui.util.tasks import SerialWorker

W = TypeVar("W", bound=QWidget)
RIGHT_MARGIN = 8  # px between the room and the window's right edge


def wired(widget: W, name: str, slot: Callable, signal: str = "clicked") -> W:
    """The widget named (for style sheets and tests) with its signal connected."""
    widget.setObjectName(name)
    getattr(widget, signal).connect(slot)
    return widget


class RoomPanel(QWidget):
    changed = Signal(str, str)  # slug, name: the room's settings changed (its name, members, order...)
    deleted = Signal(str)  # slug

    def __init__(
        self,
        app: NexusApp,
        slug: str,
        lane: SerialWorker,
        personas: Callable[[], dict[str, str]],
        parent: QWidget | None = None,
    ) -> None:
        """lane: where the room runs (the window's, one room at a time); personas: slug -> name of the
        personas that can be opened (as the window's list read them)."""
        super().__init__(parent)
        self.texts = LanguageTexts()  # every text set through it is set again after a language switch
        self.slug = slug
        self.personas = personas
        self.settings: RoomSettings | None = None
        self.member_names: dict[str, str] = {}
        self._you = QImage()
        self.auto = AutoMode()
        self._spoken = 0  # the members' lines since the person last spoke
        self._auto_timer = QTimer(self, singleShot=True)
        self._auto_timer.timeout.connect(self._auto_step)
        self._skip: threading.Event | None = None  # drops the auto step queued, if it has not begun
        self._waiting_to_show: list[str] = []  # the person's lines shown before the room said them
        self._passing = False  # the status says something true only while the room is busy
        self._build()
        self.worker = RoomWorker(app, slug, lane, app.settings.stream_coalesce_ms, self)
        self.worker.opened.connect(self._on_opened)
        self.worker.updated.connect(self._on_updated)
        self.worker.room_event.connect(self._on_event)
        self.worker.step_done.connect(self._on_step_done)
        self.worker.failed.connect(self._on_failed)
        self.worker.deleted.connect(self.deleted)
        self._show_busy()
        self._texts()
        self._say(lambda: tr("Opening the room…"), passing=True)
        self.view.show_placeholder(tr("Opening the room…"))
        self.worker.open()

    def _build(self) -> None:
        self.title = QLabel()
        self.title.setObjectName("roomTitle")
        self.title.setStyleSheet("font-weight:600; font-size:15px")
        self.members_label = QLabel()
        self.next_box = QComboBox()
        self.next_box.setObjectName("nextSpeaker")
        self.next_button = wired(QPushButton(), "askNext", self.ask_next)
        self.auto_button = QToolButton()
        self.auto_button.setCheckable(True)
        wired(self.auto_button, "autoMode", self._toggle_auto, "toggled")
        self.menu_button = QPushButton()  # its menu's arrow beside the word, not drawn over it
        self.menu_button.setObjectName("roomMenu")
        self.room_menu = RoomMenu(self, self)
        self.menu_button.setMenu(self.room_menu.menu)
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addWidget(self.members_label, 1)
        header.addWidget(self.next_box)
        header.addWidget(self.next_button)
        header.addWidget(self.auto_button)
        header.addWidget(self.menu_button)

        self.view = RoomView()
        # A member whose model does not speak its language: said here as a one-to-one chat says it.
        self.language_notice = QLabel()
        self.language_notice.setObjectName("roomLanguageNotice")
        self.language_notice.setWordWrap(True)
        self.language_notice.setVisible(False)
        self._advice: list = []
        self.status = QLabel()
        self.status.setObjectName("roomStatus")
        self.input = wired(MessageInput(), "roomInput", self.send, "submitted")
        self.input.setFixedHeight(72)
        self.input.textChanged.connect(self._typing)
        self.send_button = wired(QPushButton(), "roomSend", self.send)
        self.stop_button = wired(QPushButton(), "roomStop", self.stop)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        input_row = QHBoxLayout()
        input_row.addWidget(self.input, 1)
        input_row.addLayout(buttons)
        layout = QVBoxLayout(self)
        # A right margin as the chat's: the bubbles, the status and the buttons kept off the window's edge.
        layout.setContentsMargins(0, 0, RIGHT_MARGIN, 0)
        layout.addLayout(header)
        layout.addWidget(self.language_notice)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.status)
        layout.addLayout(input_row)

    def _texts(self) -> None:
        self.texts.follow(lambda: self.next_button.setText(tr("Ask to speak")))
        self.texts.follow(lambda: self.next_box.setToolTip(tr("Who speaks next")))
        self.texts.follow(lambda: self.auto_button.setText(tr("Let them talk")))
        self.texts.follow(lambda: self.menu_button.setText(tr("Room")))
        self.texts.follow(lambda: self.send_button.setText(tr("Send")))
        self.texts.follow(lambda: self.stop_button.setText(tr("Stop")))
        self.texts.follow(
            lambda: self.input.setPlaceholderText(
                tr("Write to the room (Enter sends, Shift+Enter for a new line)")
            )
        )
        self.texts.follow(self.room_menu.retranslate)
        self.texts.follow(self._show_header)
        self.texts.follow(self._show_language_notice)

    def _show_language_notice(self) -> None:
        text = " ".join(mismatch_text(name, advice) for name, advice in self._advice)
        self.language_notice.setText(text)
        self.language_notice.setVisible(bool(text))

    def retranslate(self) -> None:
        self.texts.retranslate()
        self.view.retranslate()

    # -- the room as it opened -------------------------------------------------------------------------
    def _on_opened(self, opened: OpenedRoom) -> None:
        self.settings = opened.settings
        self.member_names = {m.slug: m.name for m in opened.members}
        self.auto.pause_s = opened.settings.pause_s
        self._spoken = opened.spoken_since_person
        self._you = opened.you
        self.view.set_members([(m.slug, m.avatar) for m in opened.members], opened.you)
        if opened.lines:
            self.view.show_lines(opened.lines)
        else:
            names = ", ".join(self.member_names.values())
            self.view.show_placeholder(tr("Say hello to {name}.", name=names))
        self._advice = opened.language_advice
        self._show_language_notice()
        self._show_members(opened.members)
        self.room_menu.show_strategy(opened.settings.strategy)
        self._show_header()
        self._show_busy()
        self._say(lambda: tr("Ready"))
        self.input.setFocus()

    def _on_updated(self, updated: UpdatedRoom) -> None:
        """The room goes on with its new settings: its lines stay; the bubbles are drawn again only when the
        members or their order changed (each member's colour is its place)."""
        self.settings = updated.settings
        names = {m.slug: m.name for m in updated.members}
        if list(names.items()) != list(self.member_names.items()):
            self.view.set_members([(m.slug, m.avatar) for m in updated.members], self._you)
            if self.view.shown:
                self.view.retranslate()
            else:
                self.view.show_placeholder(tr("Say hello to {name}.", name=", ".join(names.values())))
        self.member_names = names
        self._advice = updated.language_advice
        self._show_language_notice()
        self.auto.pause_s = updated.settings.pause_s
        self._show_members(updated.members)
        self.room_menu.show_strategy(updated.settings.strategy)
        self._show_header()
        self._show_busy()
        if self.settings.strategy == "manual" and self.auto.on:
            self._auto_off(lambda: tr("In manual order you choose who speaks: auto mode stopped."))
        elif self.worker.idle:
            self._say(lambda: tr("The room's settings are saved."))
        self.changed.emit(self.slug, updated.settings.name)

    def _show_members(self, members: list[ShownMember]) -> None:
        """The next-speaker control: every member (a muted one too: the person may still ask it)."""
        current = self.next_box.currentData()
        self.next_box.clear()
        for member in members:
            self.next_box.addItem(member.name, member.slug)
        if current in self.member_names:
            self.next_box.setCurrentIndex(self.next_box.findData(current))

    def _show_header(self) -> None:
        if self.settings is None:
            return
        self.title.setText(html.escape(self.settings.name))
        dark = self.view.dark
        muted = {m.persona for m in self.settings.members if m.muted}
        names = " · ".join(
            theme.tinted(html.escape(tr("{name} (muted)", name=name)), "muted")
            if slug in muted
            else f"<span style='color:{colour}; font-weight:600'>{html.escape(name)}</span>"
            for colour, (slug, name) in zip(self._colours(dark), self.member_names.items(), strict=True)
        )
        order = tr(STRATEGY_LABELS[self.settings.strategy]).split(":")[0]
        self.members_label.setText(f"{names}&nbsp;&nbsp;{theme.tinted(f'({html.escape(order)})', 'muted')}")
        manual = self.settings.strategy == "manual"
        self.auto_button.setEnabled(not manual)
        self.auto_button.setToolTip(
            tr("In manual order you choose who speaks: auto mode has nobody to ask.")
            if manual
            else tr("The members go on talking with a pause between replies; typing stops it.")
        )

    def _colours(self, dark: bool) -> list[str]:
        return [member_colours(place, dark)[1] for place in range(len(self.member_names))]

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # light <-> dark: the names' colours
            self._show_header()

    # -- the person's part -----------------------------------------------------------------------------
    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.settings is None:
            return
        if not self.worker.idle:
            self.worker.cancel()  # the answer being written stops at its next token; the message follows
        self.input.clear()
        self._waiting_to_show.append(text)
        self.view.add_line(None, "", text)
        self.worker.say(text)
        self._show_busy()

    def ask_next(self) -> None:
        slug = self.next_box.currentData()
        if slug and self.settings is not None:
            self.worker.next(slug)
            self._show_busy()

    def stop(self) -> None:
        self._stop_auto()
        if not self.worker.idle:
            self.worker.cancel()
            self._say(lambda: tr("Stopping…"), passing=True)

    def _typing(self) -> None:
        if self.input.toPlainText().strip() and self.auto.person_typing():
            self._auto_timer.stop()
            if self._skip is not None:
                self._skip.set()
            self._show_auto(False)
            self._say(lambda: tr("Auto mode stopped: you have the floor."))

    # -- what the room says ----------------------------------------------------------------------------
    def _on_event(self, event) -> None:
        if isinstance(event, Speaking):
            self.view.begin_answer(event.slug, event.name)
            name = event.name
            self._say(lambda: tr("{name} is writing…", name=name), passing=True)
        elif isinstance(event, Streamed):
            if self.view.answering == event.slug:
                self.view.append_answer(event.text)
        elif isinstance(event, Answered):
            result = event.result
            status = "error" if result.error else "stopped" if result.status == "stopped" else "complete"
            self.view.end_answer(result.text, status)
            if result.error:
                error = result.error
                self._say(lambda: tr("Error: {message}", message=tr_error(error).splitlines()[0]))
        elif isinstance(event, Withdrawn):  # it repeated another member's line: not said in the room
            self.view.withdraw_answer()
            name, repeated = event.name, event.repeated
            self._say(lambda: tr("{name} only repeated {other}: left out.", name=name, other=repeated))
        elif isinstance(event, Said) and event.line.author is None:
            line = event.line
            if self._waiting_to_show and self._waiting_to_show[0] == line.text:
                self._waiting_to_show.pop(0)  # shown when it was sent
            else:
                self.view.add_line(None, "", line.text, line.created_at)

    def _on_step_done(self, end: StepEnd) -> None:
        if self.view.answering is not None:  # the step ended without its answer's end (a failure)
            last = self.view.shown[-1]
            self.view.end_answer(last.text, "error")
        if end.spoken_since_person is None:  # failed: the message the room did not take comes back
            if end.kind == "say" and self._waiting_to_show:
                text = self._waiting_to_show.pop()
                if not self.input.toPlainText().strip():
                    self.input.setPlainText(text)
            self._stop_auto()
        else:
            self._spoken = end.spoken_since_person
        self._show_busy()
        if self.worker.idle and self._passing:
            self._say(lambda: tr("Ready"))
        if self.auto.on:
            if end.kind == "go_on" and not end.spoke:
                self._auto_off(lambda: tr("Nobody has more to say: auto mode stopped."))
            else:
                self._schedule_auto()

    def _on_failed(self, message: str) -> None:
        if self.settings is None:  # the room could not be opened
            self.view.show_placeholder(message)
        self._say(lambda: tr("Error: {message}", message=message.splitlines()[0]))

    # -- auto mode ---------------------------------------------------------------------------------
    def _toggle_auto(self, on: bool) -> None:
        if on:
            self.auto.start()
            self._schedule_auto()
        else:
            self._stop_auto()
        self._show_busy()

    def _schedule_auto(self) -> None:
        if self.settings is None:
            return
        if not self.auto.may_continue(self._spoken, self.settings.cap):
            count = self._spoken
            self._auto_off(
                lambda: tr("They wait for you now: {count} replies since your message.", count=count)
            )
        elif self.worker.idle:
            self._auto_timer.start(round(self.auto.pause_s * 1000))
            self._say(lambda: tr("Letting them talk…"), passing=True)

    def _auto_step(self) -> None:
        if self.auto.on and self.worker.idle:
            self._skip = self.worker.go_on()
            self._show_busy()

    def _stop_auto(self) -> None:
        self.auto.stop()
        self._auto_timer.stop()
        if self._skip is not None:
            self._skip.set()
        self._show_auto(False)
        self._show_busy()

    def _auto_off(self, message: Callable[[], str]) -> None:
        self._stop_auto()
        self._say(message)

    def _show_auto(self, on: bool) -> None:
        self.auto_button.blockSignals(True)
        self.auto_button.setChecked(on)
        self.auto_button.blockSignals(False)

    # -- status ------------------------------------------------------------------------------------
    def _show_busy(self) -> None:
        opened = self.settings is not None
        self.send_button.setEnabled(opened)
        self.next_button.setEnabled(opened)
        self.stop_button.setEnabled(opened and (not self.worker.idle or self.auto.on))

    def _say(self, text: Callable[[], str], *, passing: bool = False) -> None:
        """The status line, said again in the new language after a switch. passing: true only while the room
        is busy (the step's end says Ready)."""
        self._passing = passing
        self.texts.follow(lambda: self.status.setText(text()), key="status")

    # -- what the room's menu asks (room_menu.py RoomMenuHost) -------------------------------------------
    def personas_to_choose(self) -> dict[str, str]:
        return self.personas()

    def save_changes(self, changes: dict[str, Any]) -> None:
        self._say(lambda: tr("Saving the room…"), passing=True)
        self.worker.update(changes)

    def delete_room(self) -> None:
        self._stop_auto()
        self.worker.delete()

    # -- closing -----------------------------------------------------------------------------------
    def close_room(self) -> None:
        """Stop what runs and close the room on its lane, after its last step. Never waits."""
        self._stop_auto()
        self.worker.close()
