"""The main window: persona switcher, conversation, input, status line.

Its jobs beside the layout live in mixins of their own: the menus (menus.py), the turn (turns.py) and the
windows it opens (openers.py). The conversation's pages and links (ui/chat/conversation_controller.py) and
the personas' lives (ui/life/life_controller.py) are controllers that get the widgets they drive and the
open persona (ui/util/open_persona.py) and ask the window for the rest by signal."""

from __future__ import annotations

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
from ui.life.life_controller import LifeController
from ui.life.tray import Tray, click_bridge
from ui.main.menus import Menus
from ui.main.openers import Openers
from ui.main.room_hooks import RoomHooks
from ui.main.turns import Answer, Turns
from ui.personas.persona_dialog import NewPersonaDialog
from ui.util import i18n
from ui.util.desktop import tray_available
from ui.util.i18n import tr, tr_error
from ui.util.message_input import MessageInput
from ui.util.open_persona import OpenPersona
from ui.util.persona_list import PersonaList, draw_avatars
from ui.util.tasks import run_in_background, while_open


def _shown(field: str) -> property:
    """The window's view of the open persona, kept in the OpenPersona its controllers read."""
    return property(
        lambda self: getattr(self.shown, field), lambda self, value: setattr(self.shown, field, value)
    )


class MainWindow(Menus, Turns, Openers, RoomHooks, QMainWindow):
    request_open = Signal(str)
    request_send = Signal(str)
    request_continue = Signal(int)
    request_regenerate = Signal(int)
    request_edit = Signal(int, str)
    request_change = Signal(str, int, bool)  # "delete" | "version", message id, forget
    # Re-emitted on the UI thread once the window has shown the result.
    persona_opened = Signal(str)
    turn_finished = Signal(object)
    current_slug = _shown("slug")
    current_name = _shown("name")
    streaming = _shown("streaming")
    ready = _shown("ready")

    def __init__(self, app: NexusApp) -> None:
        super().__init__()
        leave_a_core_to_the_window()
        self.app = app
        self.shown = OpenPersona()
        self.model_name = ""
        self._persona_reads = 0  # the latest read of the persona folders (an older one arriving is dropped)
        self._answers: dict[str, Answer] = {}  # replies under way, by persona (shown or not)
        # Each persona's last reply speed: the status bar shows the one of the persona shown.
        self._speeds: dict[str, float] = {}
        self._editing: int | None = None  # the message of the person's being said differently
        self._build_widgets()
        self._build_menus()
        self._start_worker()
        self.conversation = self._conversation_controller()  # pages, search and each message's links
        self.quitting = False  # Quit (menu or tray) closes for real, whatever the tray setting says
        self.tray = self._install_tray()
        click_bridge().clicked.connect(self.show_conversation)  # a desktop notification was clicked
        # Messages written first, unread counts, the inbox, typing.
        self.life = LifeController(
            app, self.shown, chat=self.chat, persona_list=self.persona_list, message_input=self.input,
            inbox_action=self.inbox_action, tray=self.tray, parent=self,
        )  # fmt: skip
        self.life.open_requested.connect(self.show_conversation)
        self.retranslate()
        self.resize(980, 680)
        self.refresh_personas(open_default=True)

    # -- construction -----------------------------------------------------------------------------
    def _conversation_controller(self) -> ConversationController:
        conversation = ConversationController(self.app, self.shown, self.chat, self.search_bar, self)
        conversation.continue_offered.connect(self.show_continue)
        conversation.error.connect(self.state_label.setText)
        conversation.status.connect(lambda text: self.statusBar().showMessage(text, 4000))
        conversation.regenerate_requested.connect(self.regenerate)
        conversation.page_shown.connect(self._on_page_shown)
        conversation.edit_requested.connect(self.begin_edit)
        conversation.change_requested.connect(self.request_change)
        self.search_bar.closed.connect(self.input.setFocus)
        return conversation

    def _build_widgets(self) -> None:
        self.persona_list = PersonaList()
        self.persona_list.setObjectName("personaList")
        self.persona_list.chosen.connect(self._on_persona_chosen)
        self.new_persona_button = QPushButton()
        self.new_persona_button.clicked.connect(self.new_persona)
        self.model_button = QPushButton()
        self.model_button.setObjectName("modelButton")
        self.model_button.clicked.connect(self.edit_models)
        self.memory_button = QPushButton()
        self.memory_button.setObjectName("memoryButton")
        self.memory_button.clicked.connect(self.show_memory)
        self.edit_persona_button = QPushButton()
        self.edit_persona_button.setObjectName("editPersonaButton")
        self.edit_persona_button.clicked.connect(self.edit_persona)
        self.personas_label = QLabel()
        self.personas_label.setStyleSheet("font-weight:600")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(self.personas_label)
        left_layout.addWidget(self.persona_list)
        left_layout.addWidget(self.edit_persona_button)
        left_layout.addWidget(self.memory_button)
        left_layout.addWidget(self.model_button)
        left_layout.addWidget(self.new_persona_button)
        self._build_rooms(left_layout)

        self.chat = ChatView()
        self.search_bar = SearchBar()
        self.language_notice = LanguageNotice()
        self.language_notice.open_models.connect(self.edit_models)
        self.language_notice.dismissed.connect(self._dismiss_advice)
        self.language_notice.get_model.connect(self.get_suggested_model)
        self.edit_banner = QLabel()
        self.edit_banner.setObjectName("editBanner")
        self.edit_banner.setVisible(False)
        self.input = MessageInput()
        self.input.setObjectName("messageInput")
        self.input.setFixedHeight(72)
        self.input.submitted.connect(self.send_message)
        self.send_button = QPushButton()
        self.send_button.setObjectName("sendButton")
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.send_message)
        self.continue_button = QPushButton()
        self.continue_button.setObjectName("continueButton")
        self.continue_button.setVisible(False)  # shown under a reply the token limit cut
        self.continue_button.clicked.connect(self.continue_reply)
        self._cut_reply: int | None = None
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("stopButton")
        self.stop_button.clicked.connect(self.stop_reply)
        buttons = QVBoxLayout()
        buttons.addWidget(self.continue_button)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        input_row = QHBoxLayout()
        input_row.addWidget(self.input, 1)
        input_row.addLayout(buttons)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.language_notice)
        right_layout.addWidget(self.search_bar)
        right_layout.addWidget(self.chat, 1)
        right_layout.addWidget(self.edit_banner)
        right_layout.addLayout(input_row)

        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self._room_pages(right))
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 760])
        self.setCentralWidget(splitter)

        self.state_label = QLabel()
        self.model_label = QLabel()
        self.speed_label = QLabel()
        self.statusBar().addWidget(self.state_label, 1)
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().addPermanentWidget(self.speed_label)
        self._set_busy(True)

    def retranslate(self) -> None:
        self._show_opened()
        self._retranslate_menus()
        self.personas_label.setText(tr("Personas"))
        self.new_persona_button.setText(tr("New persona…"))
        self.model_button.setText(tr("Model settings…"))
        self.memory_button.setText(tr("Memory…"))
        self.edit_persona_button.setText(tr("Edit persona…"))
        self.input.setPlaceholderText(tr("Write a message (Enter sends, Shift+Enter for a new line)"))
        self.send_button.setText(tr("Send"))
        self.continue_button.setText(tr("Continue"))
        self.edit_banner.setText(tr("Editing a message: Enter sends the new wording, Esc cancels."))
        self.chat.retranslate()
        self._retranslate_rooms()
        self.search_bar.retranslate()
        self.language_notice.retranslate()
        self.stop_button.setText(tr("Stop"))
        self._show_speed()
        if self.tray is not None:
            self.tray.retranslate()
        self.life.apply()  # the inbox entry and the unread counts, in the new language

    # -- personas ---------------------------------------------------------------------------------
    def refresh_personas(self, *, open_default: bool = False) -> None:
        """Read every persona folder on a worker, then show the list; with open_default, then open the
        persona the window starts on (the last one used), or say why there is none."""
        self._persona_reads += 1
        token = self._persona_reads
        self.refresh_rooms()  # the members' names and faces

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
        self._show_title()

    def _show_title(self) -> None:
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
        self._show_speed()
        if self.life.unread.get(slug):  # opening the conversation shows what it wrote first
            self.life.mark_read(slug)
        self.ready = False
        self._set_busy(True)
        if self.answering(slug):  # open already, its lane busy with the reply: show it as it goes on
            self.resume_answer(slug)
            return
        self.state_label.setText(tr("Loading {name}…", name=self.current_name or slug))
        self.request_open.emit(slug)

    def _on_persona_chosen(self, slug: str) -> None:
        if slug == self.current_slug:
            return
        problem = self.persona_list.problem(slug)  # as the list read it (no folder is read on the UI thread)
        if problem:
            QMessageBox.warning(self, tr("Persona cannot be opened"), problem)
            return
        self.select_persona(slug)

    def _on_card_imported(self, slug: str) -> None:
        self.refresh_personas()
        if not self.streaming:
            self.select_persona(slug)

    def new_persona(self) -> None:
        dialog = NewPersonaDialog(self)
        if dialog.exec() != NewPersonaDialog.DialogCode.Accepted:
            return
        name, language, description = dialog.values()

        def created(info: PersonaInfo) -> None:
            self.refresh_personas()
            if not self.streaming:
                self.select_persona(info.slug)

        def failed(message: str) -> None:
            QMessageBox.warning(self, tr("Persona not created"), message)

        run_in_background(  # writes its folder: off the UI thread
            lambda: self.app.personas.create(name, language, description),
            while_open(self, created),
            while_open(self, failed),
        )

    def _on_opened(self, slug: str, history: list[StoredMessage], model_name: str, name: str) -> None:
        if slug != self.current_slug:
            return
        self.current_name = name
        self.model_name = model_name
        self.cancel_edit()
        self.conversation.load_avatar(slug)
        self._check_language(slug)
        if history:
            self.chat.clear_messages()  # the latest page follows from the history thread
        else:
            self.chat.show_placeholder(tr("Say hello to {name}.", name=self.current_name))
        self.conversation.show_latest()
        self.ready = True
        self._set_busy(False)
        self._show_opened()
        self._show_speed()
        self.input.setFocus()
        self.persona_opened.emit(slug)

    def _show_opened(self) -> None:
        """What names the persona open (a switch sets only these: all of retranslate() cost up to 5 ms)."""
        self._show_title()
        self.model_label.setText(tr("Model: {name}", name=self.model_name) if self.model_name else "")
        if self.ready and not self.streaming:
            self.state_label.setText(tr("Ready"))

    def _check_language(self, slug: str) -> None:
        """Does the model speak the persona's language? Asked off the UI thread (it reads the catalogue)."""
        self.language_notice.show_advice(self.current_name, None)

        def shown(found) -> None:
            advice, hint = found
            if slug == self.current_slug:
                self.language_notice.show_advice(self.current_name, advice, bundled_hint=hint)

        app = self.app
        run_in_background(  # the window may be closed (and deleted) before it is read
            lambda: (app.models.language_advice(slug), app.models.bundled_hint(slug)),
            while_open(self, shown),
            lambda _message: None,
        )

    def _dismiss_advice(self, advice) -> None:
        slug, app = self.current_slug, self.app

        def failed(message: str) -> None:
            self.state_label.setText(tr("Error: {message}", message=message))

        run_in_background(lambda: app.models.dismiss_advice(slug, advice), lambda _: None, while_open(self, failed))

    def _on_open_failed(self, slug: str, message: str) -> None:
        if slug == self.current_slug:  # another persona chosen meanwhile keeps its view
            self.state_label.setText(tr("Could not open {name}", name=slug))
            self.chat.show_placeholder(message)
        QMessageBox.warning(self, tr("Persona cannot be opened"), message)

    # -- chatting ---------------------------------------------------------------------------------
    # -- tray and notifications -------------------------------------------------------------------
    def _install_tray(self) -> Tray | None:
        if not tray_available():  # no tray on this desktop: closing the window quits, as it always did
            return None
        tray = Tray(self, keep_running=self.app.settings.keep_running_in_tray, parent=self)
        tray.keep_running_toggled.connect(self.set_keep_running_in_tray)
        tray.quit_requested.connect(self.quit_app)
        tray.show()
        return tray

    def set_keep_running_in_tray(self, keep: bool) -> None:
        """Remembered in config.toml by its owner, on a worker (it writes a file); closing the window
        meanwhile already follows the tray's tick."""

        def failed(exc: BaseException) -> None:
            message = tr_error(exc) if isinstance(exc, NexusArkError) else str(exc)
            self.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))

        app = self.app
        run_in_background(
            lambda: app.admin.update_settings(keep_running_in_tray=keep),
            lambda _settings: None,
            while_open(self, failed),
        )

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
        action = self.language_actions.get(code)
        if action is not None:
            action.setChecked(True)
        self.retranslate()
        for window in self.findChildren(QWidget):  # the dashboards, settings, persona editors…
            if window.isWindow() and hasattr(window, "retranslate"):
                window.retranslate()

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
        self.worker.close()
        self.hide()
        self.close_room(wait=True)
        # The one wait on closing, with the window already gone: the caller closes the core next, and must
        # not close it under the turn's last step (a stopped reply ends at its next token).
        self.worker.wait()
        self.conversation.close()
        super().closeEvent(event)
