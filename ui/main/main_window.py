"""The main window: persona switcher, conversation, input, status line.

Its jobs beside the layout are controllers it owns, each given the widgets it drives, the open persona
(ui/util/open_persona.py) and a narrow host protocol for what it asks of the window (ui/main/hosts.py):
the menus (menus.py), the turn (turns.py), the windows it opens (openers.py) and the rooms
(room_hooks.py). The conversation's pages and links (ui/chat/conversation_controller.py) and the personas'
lives (ui/life/life_controller.py) are controllers too, and ask the window for the rest by signal."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent, QImage
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.personas.model import PersonaInfo
from nexus_ark.providers.embedders import leave_a_core_to_the_window
from ui.chat.chat_search import SearchBar
from ui.chat.chat_view import ChatView
from ui.chat.conversation_controller import ConversationController
from ui.chat.language_notice import LanguageNotice
from ui.chat.tool_approval import ApprovalCard, ToolApprovals
from ui.chat.voice_bar import VoiceBar
from ui.life.life_controller import LifeController
from ui.life.tray import Tray, click_bridge
from ui.main.advice import LanguageAdvice
from ui.main.menus import Menus
from ui.main.openers import Openers
from ui.main.room_hooks import RoomsController
from ui.main.tray_hooks import follow_settings, install_tray
from ui.main.turns import TurnsController, TurnWidgets
from ui.main.voice import VoiceController
from ui.util import i18n
from ui.util.i18n import tr, tr_error
from ui.util.message_input import MessageInput
from ui.util.open_persona import OpenPersona
from ui.util.persona_list import PersonaList, draw_avatars
from ui.util.tasks import run_in_background, while_open


def _shown(field: str) -> Any:
    """The window's view of the open persona, kept in the OpenPersona its controllers read."""
    return property(
        lambda self: getattr(self.shown, field), lambda self, value: setattr(self.shown, field, value)
    )


def _button(name: str = "") -> QPushButton:
    button = QPushButton()
    if name:
        button.setObjectName(name)
    return button


class MainWindow(QMainWindow):
    persona_opened = Signal(str)  # re-emitted on the UI thread once the window has shown the persona
    turn_finished = Signal(object)  # a TurnResult, once the window has shown it
    current_slug = _shown("slug")
    current_name = _shown("name")
    streaming = _shown("streaming")
    ready = _shown("ready")

    def __init__(self, app: NexusApp) -> None:
        super().__init__()
        leave_a_core_to_the_window()
        self.app = app
        self.shown = OpenPersona()
        self._persona_reads = 0  # the latest read of the persona folders (an older one arriving is dropped)
        self.quitting = False  # Quit (menu or tray) closes for real, whatever the tray setting says
        self.tray: Tray | None = None
        self.openers = Openers(self, app, self.shown, self, self.turn_finished)
        self._build_widgets()
        self.conversation = ConversationController(app, self.shown, self.chat, self.search_bar, self)
        self.advice = LanguageAdvice(
            app, self.shown, self.language_notice, self.openers, self.state_label.setText, self
        )
        self.turns = self._turns_controller()
        # An MCP tool set to "ask" waits on the persona's thread for the card's answer; Stop answers no.
        self.tool_approvals = ToolApprovals(self.tool_approval)
        app.tools.asker = self.tool_approvals.ask
        self.stop_button.clicked.connect(self.tool_approvals.deny_all)
        self.voice = VoiceController(app, self.shown, self.voice_bar, self.turns, self.conversation, self)
        self.menus = Menus(self, app, self.shown, self, self.openers, self.rooms, self.conversation)
        self._connect_conversation()
        self.tray = install_tray(self, app, self.quit_app, self.state_label.setText)
        click_bridge().clicked.connect(self.show_conversation)  # a desktop notification was clicked
        # Messages written first, unread counts, the inbox, typing.
        self.life = LifeController(
            app, self.shown, chat=self.chat, persona_list=self.persona_list, message_input=self.input,
            inbox_action=self.menus.inbox_action, tray=self.tray, parent=self,
        )  # fmt: skip
        self.life.open_requested.connect(self.show_conversation)
        self.retranslate()
        self.resize(980, 680)
        self.refresh_personas(open_default=True)

    # -- construction -----------------------------------------------------------------------------
    def _turns_controller(self) -> TurnsController:
        widgets = TurnWidgets(
            self.chat, self.input, self.send_button, self.continue_button, self.stop_button,
            self.model_button, self.edit_banner, self.state_label, self.speed_label,
        )  # fmt: skip
        turns = TurnsController(self.app, self.shown, widgets, self.conversation, self, self)
        turns.worker.opened.connect(self._on_opened)
        turns.worker.open_failed.connect(self._on_open_failed)
        turns.turn_finished.connect(self.turn_finished)
        turns.set_busy(True)
        return turns

    def _connect_conversation(self) -> None:
        self.conversation.error.connect(self.state_label.setText)
        self.conversation.status.connect(lambda text: self.show_status(text, 4000))
        self.search_bar.closed.connect(self.input.setFocus)

    def _build_widgets(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        self._build_personas(left_layout)
        self.rooms = RoomsController(self, self.app, self.shown, self.persona_list, self)
        conversation = self._build_conversation()
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self.rooms.add_to(left_layout, conversation))
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 760])
        self.setCentralWidget(splitter)
        self.state_label = QLabel()
        self.model_label = QLabel()
        self.speed_label = QLabel()
        self.statusBar().addWidget(self.state_label, 1)
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().addPermanentWidget(self.speed_label)

    def _build_personas(self, left_layout: QVBoxLayout) -> None:
        """The persona list and the buttons under it, on the left."""
        self.persona_list = PersonaList()
        self.persona_list.setObjectName("personaList")
        self.persona_list.chosen.connect(self._on_persona_chosen)
        self.new_persona_button = _button()
        self.new_persona_button.clicked.connect(self.openers.new_persona)
        self.model_button = _button("modelButton")
        self.model_button.clicked.connect(self.openers.edit_models)
        self.memory_button = _button("memoryButton")
        self.memory_button.clicked.connect(self.openers.show_memory)
        self.edit_persona_button = _button("editPersonaButton")
        self.edit_persona_button.clicked.connect(self.openers.edit_persona)
        self.personas_label = QLabel()
        self.personas_label.setStyleSheet("font-weight:600")
        for widget in (
            self.personas_label, self.persona_list, self.edit_persona_button, self.memory_button,
            self.model_button, self.new_persona_button,
        ):  # fmt: skip
            left_layout.addWidget(widget)

    def _build_conversation(self) -> QWidget:
        """The language notice, the search bar, the conversation, the edit banner and the input row."""
        self.chat = ChatView()
        self.search_bar = SearchBar()
        self.language_notice = LanguageNotice()
        self.tool_approval = ApprovalCard()
        self.edit_banner = QLabel()
        self.edit_banner.setObjectName("editBanner")
        self.edit_banner.setVisible(False)
        self.input = MessageInput()
        self.input.setObjectName("messageInput")
        self.input.setFixedHeight(72)
        self.send_button = _button("sendButton")
        self.send_button.setDefault(True)
        self.continue_button = _button("continueButton")
        self.continue_button.setVisible(False)  # shown under a reply the token limit cut
        self.stop_button = _button("stopButton")
        self.voice_bar = VoiceBar()
        buttons = QVBoxLayout()
        for button in (self.continue_button, self.send_button, self.stop_button):
            buttons.addWidget(button)
        input_row = QHBoxLayout()
        input_row.addWidget(self.input, 1)
        input_row.addLayout(buttons)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.language_notice)
        right_layout.addWidget(self.search_bar)
        right_layout.addWidget(self.chat, 1)
        right_layout.addWidget(self.tool_approval)
        right_layout.addWidget(self.edit_banner)
        right_layout.addWidget(self.voice_bar)
        right_layout.addLayout(input_row)
        return right

    def retranslate(self) -> None:
        self.show_opened()
        self.menus.retranslate()
        self.follow_shown_page(room_shown=self.room_shown())  # its words in the new language
        self.personas_label.setText(tr("Personas"))
        self.new_persona_button.setText(tr("New persona…"))
        self.model_button.setText(tr("Model settings…"))
        self.memory_button.setText(tr("Memory…"))
        self.edit_persona_button.setText(tr("Edit persona…"))
        self.input.setPlaceholderText(tr("Write a message (Enter sends, Shift+Enter for a new line)"))
        self.chat.retranslate()
        self.rooms.retranslate()
        self.search_bar.retranslate()
        self.language_notice.retranslate()
        self.tool_approval.retranslate()
        self.voice_bar.retranslate()
        self.turns.retranslate()
        if self.tray is not None:
            self.tray.retranslate()
        self.life.apply()  # the inbox entry and the unread counts, in the new language

    # -- what the controllers ask of the window (ui/main/hosts.py) --------------------------------
    def show_status(self, text: str, timeout_ms: int) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    def room_shown(self) -> bool:
        return self.rooms.room_panel is not None

    def follow_shown_page(self, room_shown: bool) -> None:
        why = self.menus.follow_shown_page(room_shown)
        for button in (self.edit_persona_button, self.memory_button):  # under the persona list
            button.setEnabled(not room_shown)
            button.setToolTip(why)
        self.model_button.setEnabled(not room_shown and not self.streaming)
        self.model_button.setToolTip(why)

    def answering(self, slug: str) -> bool:
        """This persona's reply is under way (shown or not)."""
        return self.turns.answering(slug)

    def draft(self) -> str:
        return self.input.toPlainText()

    def show_inbox(self) -> None:
        self.life.show_inbox()

    def offer_first_start(self) -> None:
        """At start: the first-start flow, until it was finished or skipped once."""
        self.openers.offer_first_start()

    def escape(self) -> None:
        was_speaking = self.voice.speaking
        self.voice.stop_speaking()  # whatever else Esc does, the voice is silenced at once
        if self.rooms.room_panel is not None:  # a room is shown: Esc stops its answer and its auto mode
            self.rooms.room_panel.stop()
        elif self.streaming:
            self.turns.stop_reply()
        elif self.turns.editing:
            self.turns.cancel_edit()
        elif self.search_bar.isVisible():
            self.search_bar.close_bar()
        elif not was_speaking and self.voice.ears.mode:  # nothing else to stop: the open microphone closes
            self.voice.ears.close_microphone()

    # -- personas ---------------------------------------------------------------------------------
    def refresh_personas(self, *, open_default: bool = False) -> None:
        """Read every persona folder on a worker, then show the list; with open_default, then open the
        persona the window starts on (the last one used), or say why there is none."""
        self._persona_reads += 1
        token = self._persona_reads
        self.rooms.refresh_rooms()  # the members' names and faces

        app = self.app
        language = i18n.current_language()

        def read() -> tuple[list[PersonaInfo], dict[str, QImage], str | NexusArkError]:
            infos = app.personas.all()
            avatars = draw_avatars(app, infos)
            if not open_default:
                return infos, avatars, ""
            try:
                return infos, avatars, app.admin.default_persona(language)
            except NexusArkError as exc:
                return infos, avatars, exc

        def shown(result: tuple[list[PersonaInfo], dict[str, QImage], str | NexusArkError]) -> None:
            infos, avatars, default = result
            if token == self._persona_reads:
                self._show_personas(infos)
                self.persona_list.show_avatars(avatars)
            if isinstance(default, NexusArkError):
                self.chat.show_placeholder(tr_error(default))
            elif default:
                self.select_persona(default)

        def failed(message: str) -> None:
            self.statusBar().showMessage(message, 15_000)

        run_in_background(read, while_open(self, shown), while_open(self, failed))

    def _show_personas(self, infos: list[PersonaInfo]) -> None:
        name = self.persona_list.show_personas(infos, self.current_slug)
        if name is not None:
            self.current_name = name
        self.life.apply()
        self.show_title()

    def show_title(self) -> None:
        self.setWindowTitle(f"Nexus Ark — {self.current_name}" if self.current_name else "Nexus Ark")

    def select_persona(self, slug: str) -> None:
        """Open a persona's conversation. One answering meanwhile goes on in its own conversation."""
        if slug != self.current_slug:
            self.current_name = slug  # until the list or the opened persona gives its name
        name = self.persona_list.select(slug)
        if name is not None:
            self.current_name = name
        self.current_slug = slug
        self.streaming = False  # the view shows no reply until this persona's own, if it is answering
        self.turns.show_speed()
        if self.life.unread.get(slug):  # opening the conversation shows what it wrote first
            self.life.mark_read(slug)
        self.ready = False
        self.turns.set_busy(True)
        if self.turns.answering(slug):  # open already, its lane busy with the reply: show it as it goes on
            self.turns.resume_answer(slug)
            return
        self.state_label.setText(tr("Loading {name}…", name=self.current_name or slug))
        self.turns.request_open.emit(slug)

    def _on_persona_chosen(self, slug: str) -> None:
        if slug == self.current_slug:
            return
        problem = self.persona_list.problem(slug)  # as the list read it (no folder is read on the UI thread)
        if problem:
            QMessageBox.warning(self, tr("Persona cannot be opened"), problem)
            return
        self.select_persona(slug)

    def on_card_imported(self, slug: str) -> None:
        self.refresh_personas()
        if not self.streaming:
            self.select_persona(slug)

    def _on_opened(self, slug: str, history: list[StoredMessage], model_name: str, name: str) -> None:
        if slug != self.current_slug:
            return
        self.current_name = name
        self.turns.opened(model_name)
        self.conversation.load_avatar(slug)
        self.check_language(slug)
        if history:
            self.chat.clear_messages()  # the latest page follows from the history thread
        else:
            self.chat.show_placeholder(tr("Say hello to {name}.", name=self.current_name))
        self.conversation.show_latest()
        self.ready = True
        self.turns.set_busy(False)
        self.show_opened()
        self.turns.show_speed()
        self.input.setFocus()
        self.persona_opened.emit(slug)

    def show_opened(self) -> None:
        """What names the persona open (a switch sets only these: all of retranslate() cost up to 5 ms)."""
        self.show_title()
        model = self.turns.model_name
        self.model_label.setText(tr("Model: {name}", name=model) if model else "")
        if self.ready and not self.streaming:
            self.state_label.setText(tr("Ready"))

    def check_language(self, slug: str) -> None:
        self.advice.check(slug)

    def _on_open_failed(self, slug: str, message: str) -> None:
        if slug == self.current_slug:  # another persona chosen meanwhile keeps its view
            self.state_label.setText(tr("Could not open {name}", name=slug))
            self.chat.show_placeholder(message)
        QMessageBox.warning(self, tr("Persona cannot be opened"), message)

    # -- tray and notifications -------------------------------------------------------------------
    def tray_follows_settings(self) -> None:
        follow_settings(self.tray, self.app)

    def show_conversation(self, slug: str) -> None:
        """Bring the window back (from the tray too) with this persona's conversation."""
        self.showNormal()
        self.raise_()
        self.activateWindow()
        if self.persona_list.can_open(slug) and slug != self.current_slug:
            self.select_persona(slug)

    def quit_app(self) -> None:
        self.quitting = True
        self.close()
        QApplication.quit()

    # -- settings and lifecycle -------------------------------------------------------------------
    def change_language(self, code: str) -> None:
        """From the Language menu: shown at once, saved to config.toml on a worker."""
        self.show_language(code)
        app = self.app
        run_in_background(
            lambda: app.admin.set_language(code),
            lambda _saved: None,
            while_open(self, self._language_not_saved),
        )

    def _language_not_saved(self, problem: str) -> None:
        text = tr("The settings were not saved: {problems}.", problems=problem.rstrip("."))
        QMessageBox.warning(self, "Nexus Ark", text)

    def show_language(self, code: str) -> None:
        """Every window in the new language at once (the setting itself is saved by the caller)."""
        i18n.set_language(code)
        action = self.menus.language_actions.get(code)
        if action is not None:
            action.setChecked(True)
        self.retranslate()
        for window in self.findChildren(QWidget):  # the dashboards, settings, persona editors…
            retranslate = getattr(window, "retranslate", None)
            if window.isWindow() and retranslate is not None:
                retranslate()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop cooperatively, then let the core close only what is idle: a reply in progress ends at its
        next token (what was said is kept), the worker finishes its current step, and only then may the
        caller close the core. The window disappears at once; it never closes connections under work.

        With a tray and "keep running in the tray" chosen, closing only hides the window."""
        if not self.quitting and self.tray is not None and self.tray.is_visible() and self.tray.keep_running:
            event.ignore()
            self.hide()
            return
        if self.tray is not None:
            self.tray.hide()
        self.tool_approvals.close()  # a turn waiting for the person's yes hears no, and ends
        self.voice.close()
        self.turns.worker.close()
        self.hide()
        self.rooms.close_room(wait=True)
        # The one wait on closing, with the window already gone: the caller closes the core next, and must
        # not close it under the turn's last step (a stopped reply ends at its next token).
        self.turns.worker.wait()
        self.conversation.close()
        super().closeEvent(event)
