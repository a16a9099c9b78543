"""The main window: persona switcher, conversation, input, status line."""

from __future__ import annotations

from PySide6.QtCore import Qt, QThread, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QInputMethodEvent, QKeyEvent, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.config import save_toml_model
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.personas.model import PersonaInfo
from nexus_ark.providers.embedders import leave_a_core_to_the_window
from ui import card_actions, chatgpt_actions, i18n
from ui.chat_search import SearchBar
from ui.chat_view import ChatView
from ui.conversation_controller import ConversationController
from ui.i18n import tr, tr_error, tr_notice
from ui.language_notice import LanguageNotice
from ui.life_controller import LifeController
from ui.persona_dialog import NewPersonaDialog
from ui.session_worker import SessionWorker
from ui.tasks import run_in_background, while_open
from ui.tray import Tray, click_bridge, tray_available

NAME_ROLE = Qt.ItemDataRole.UserRole + 1  # the display name, without markers
ERROR_ROLE = Qt.ItemDataRole.UserRole + 2  # why a persona cannot be opened ("" when it can)


class MessageInput(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line. While an input method composes (Japanese kana being
    turned into kanji), Enter belongs to the input method: it commits the composition, it never sends."""

    submitted = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.composing = False

    def inputMethodEvent(self, event: QInputMethodEvent) -> None:
        self.composing = bool(event.preeditString())
        super().inputMethodEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self.composing:
                return  # the input method's to handle: neither a send nor a new line
            if not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.submitted.emit()
                return
        super().keyPressEvent(event)


class MainWindow(QMainWindow):
    request_open = Signal(str)
    request_send = Signal(str)
    request_continue = Signal(int)
    request_regenerate = Signal(int)
    request_edit = Signal(int, str)
    request_change = Signal(str, int, bool)  # "delete" | "version", message id, forget
    # Re-emitted on the UI thread once the window has shown the result.
    persona_opened = Signal(str)
    turn_finished = Signal(object)

    def __init__(self, app: NexusApp) -> None:
        super().__init__()
        leave_a_core_to_the_window()
        self.app = app
        self.current_slug = ""
        self.current_name = ""
        self.model_name = ""
        self.streaming = False
        self._ready = False
        self._persona_reads = 0  # the latest read of the persona folders (an older one arriving is dropped)
        self._last_sent = ""
        self._turn_kind = "send"
        self._tokens_per_s = 0.0  # the last reply's speed, in the status bar
        self._editing: int | None = None  # the message of the person's being said differently
        self._build_widgets()
        self._build_menus()
        self._start_worker()
        self.conversation = ConversationController(self)  # pages, search and each message's links
        self.quitting = False  # Quit (menu or tray) closes for real, whatever the tray setting says
        self.tray = self._install_tray()
        click_bridge().clicked.connect(self.show_conversation)  # a desktop notification was clicked
        self.life = LifeController(self, app)  # messages written first, unread counts, the inbox, typing
        self.retranslate()
        self.resize(980, 680)
        self.refresh_personas(open_default=True)

    # -- construction -----------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.persona_list = QListWidget()
        self.persona_list.setObjectName("personaList")
        self.persona_list.itemClicked.connect(self._on_persona_clicked)
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
        splitter.addWidget(right)
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

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.file_menu = bar.addMenu("")
        self.new_persona_action = QAction(self)
        self.new_persona_action.setShortcut("Ctrl+N")
        self.new_persona_action.triggered.connect(self.new_persona)
        self.quit_action = QAction(self)
        self.quit_action.setShortcut("Ctrl+Q")
        self.quit_action.triggered.connect(self.quit_app)
        self.file_menu.addAction(self.new_persona_action)
        self.import_card_action = QAction(self)  # a SillyTavern character card becomes a persona
        self.import_card_action.triggered.connect(
            lambda: card_actions.import_card(self, self.app, on_imported=self._on_card_imported)
        )
        self.file_menu.addAction(self.import_card_action)
        self.export_card_action = QAction(self)
        self.export_card_action.triggered.connect(
            lambda: self.current_slug and card_actions.export_card(self, self.app, self.current_slug)
        )
        self.file_menu.addAction(self.export_card_action)
        self.import_chatgpt_action = QAction(self)  # past conversations from ChatGPT into the open persona
        self.import_chatgpt_action.triggered.connect(
            lambda: (
                self.current_slug
                and chatgpt_actions.import_export(self, self.app, self.current_slug, self.current_name)
            )
        )
        self.file_menu.addAction(self.import_chatgpt_action)
        self.model_action = QAction(self)
        self.model_action.triggered.connect(self.edit_models)
        self.file_menu.addAction(self.model_action)
        self.edit_persona_action = QAction(self)
        self.edit_persona_action.triggered.connect(self.edit_persona)
        self.file_menu.addAction(self.edit_persona_action)
        self.file_menu.addSeparator()
        self.settings_action = QAction(self)
        self.settings_action.setShortcut("Ctrl+,")
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)  # macOS: the app menu
        self.settings_action.triggered.connect(self.show_settings)
        self.file_menu.addAction(self.settings_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)

        self.view_menu = bar.addMenu("")
        self.language_menu = self.view_menu.addMenu("")
        group = QActionGroup(self)
        self.language_actions: dict[str, QAction] = {}
        for code in ("auto", "en", "ja"):
            action = QAction(self, checkable=True)
            action.triggered.connect(lambda _checked, c=code: self.change_language(c))
            group.addAction(action)
            self.language_menu.addAction(action)
            self.language_actions[code] = action
        self.language_actions[self.app.settings.language].setChecked(True)
        self.prompt_action = QAction(self)  # a debug view: what the model would be sent
        self.prompt_action.triggered.connect(self.show_prompt)
        self.view_menu.addAction(self.prompt_action)
        self.activity_action = QAction(self)  # the persona's timeline: what happened, by time and kind
        self.activity_action.triggered.connect(self.show_activity)
        self.view_menu.addAction(self.activity_action)
        self.dashboard_action = QAction(self)  # the persona's inner life: drives, questions, feelings, dreams
        self.dashboard_action.triggered.connect(self.show_dashboard)
        self.view_menu.addAction(self.dashboard_action)
        self.inbox_action = QAction(self)  # what the personas wrote on their own, with why
        self.inbox_action.setShortcut("Ctrl+I")
        self.inbox_action.triggered.connect(lambda: self.life.show_inbox())
        self.view_menu.addAction(self.inbox_action)
        self.find_action = QAction(self)  # search in the conversation
        self.find_action.setShortcut("Ctrl+F")
        self.find_action.triggered.connect(lambda: self.conversation.open_search())
        self.view_menu.addAction(self.find_action)
        self.latest_action = QAction(self)
        self.latest_action.setShortcut("Ctrl+End")
        self.latest_action.triggered.connect(lambda: self.conversation.jump_to_latest())
        self.view_menu.addAction(self.latest_action)
        escape = QShortcut(Qt.Key.Key_Escape, self)  # stops a reply; else leaves an edit or the search
        escape.setContext(Qt.ShortcutContext.WindowShortcut)
        escape.activated.connect(self.escape)

        self.help_menu = bar.addMenu("")
        self.about_action = QAction(self)
        self.about_action.triggered.connect(self.show_about)
        self.help_menu.addAction(self.about_action)

    def _start_worker(self) -> None:
        self.thread_ = QThread(self)
        self.thread_.setObjectName("session-worker")
        self.worker = SessionWorker(self.app, self.app.settings.stream_coalesce_ms)
        self.worker.moveToThread(self.thread_)
        self.request_open.connect(self.worker.open_persona)
        self.request_send.connect(self.worker.send)
        self.request_continue.connect(self.worker.continue_reply)
        self.request_regenerate.connect(self.worker.regenerate)
        self.request_edit.connect(self.worker.edit)
        self.request_change.connect(self.worker.change)
        self.worker.changed.connect(self._on_changed)
        self.worker.change_failed.connect(
            lambda message: self.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))
        )
        self.worker.opened.connect(self._on_opened)
        self.worker.open_failed.connect(self._on_open_failed)
        self.worker.delta.connect(self._on_delta)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.thread_.start()

    def retranslate(self) -> None:
        self._show_opened()
        self.personas_label.setText(tr("Personas"))
        self.new_persona_button.setText(tr("New persona…"))
        self.model_button.setText(tr("Model settings…"))
        self.memory_button.setText(tr("Memory…"))
        self.model_action.setText(tr("Model settings…"))
        self.edit_persona_button.setText(tr("Edit persona…"))
        self.edit_persona_action.setText(tr("Edit persona…"))
        self.settings_action.setText(tr("Settings…"))
        self.input.setPlaceholderText(tr("Write a message (Enter sends, Shift+Enter for a new line)"))
        self.send_button.setText(tr("Send"))
        self.prompt_action.setText(tr("Show the prompt…"))
        self.activity_action.setText(tr("Activity timeline…"))
        self.dashboard_action.setText(tr("Inner life…"))
        self.continue_button.setText(tr("Continue"))
        self.find_action.setText(tr("Find in conversation…"))
        self.latest_action.setText(tr("Jump to the latest message"))
        self.edit_banner.setText(tr("Editing a message: Enter sends the new wording, Esc cancels."))
        self.chat.retranslate()
        self.search_bar.retranslate()
        self.language_notice.retranslate()
        self.stop_button.setText(tr("Stop"))
        self.file_menu.setTitle(tr("&File"))
        self.new_persona_action.setText(tr("New persona…"))
        self.quit_action.setText(tr("Quit"))
        self.view_menu.setTitle(tr("&View"))
        self.language_menu.setTitle(tr("Language"))
        self.language_actions["auto"].setText(tr("System language"))
        self.language_actions["en"].setText("English")
        self.language_actions["ja"].setText("日本語")
        self.help_menu.setTitle(tr("&Help"))
        self.about_action.setText(tr("About Nexus Ark"))
        self.import_card_action.setText(tr(card_actions.IMPORT_ACTION))
        self.export_card_action.setText(tr(card_actions.EXPORT_ACTION))
        self.import_chatgpt_action.setText(tr(chatgpt_actions.IMPORT_ACTION))
        if self._tokens_per_s:
            self.speed_label.setText(tr("{tps:.1f} tokens/s", tps=self._tokens_per_s))
        if self.tray is not None:
            self.tray.retranslate()
        self.life.apply()  # the inbox entry and the unread counts, in the new language

    # -- personas ---------------------------------------------------------------------------------
    def refresh_personas(self, *, open_default: bool = False) -> None:
        """Read every persona folder on a worker, then show the list; with open_default, then open the
        persona the window starts on (the last one used), or say why there is none."""
        self._persona_reads += 1
        token = self._persona_reads

        def read() -> tuple[list[PersonaInfo], str | NexusArkError]:
            infos = self.app.list_personas()
            if not open_default:
                return infos, ""
            try:
                return infos, self.app.default_persona()
            except NexusArkError as exc:
                return infos, exc

        def shown(result: tuple[list[PersonaInfo], str | NexusArkError]) -> None:
            infos, default = result
            if token == self._persona_reads:
                self._show_personas(infos)
            if isinstance(default, NexusArkError):
                self.chat.show_placeholder(tr_error(default))
            elif default:
                self.select_persona(default)

        def failed(message: str) -> None:
            self.statusBar().showMessage(message, 15_000)

        run_in_background(read, while_open(self, shown), while_open(self, failed))

    def _show_personas(self, infos: list[PersonaInfo]) -> None:
        self.persona_list.clear()
        for info in infos:
            # ⚠ marks a persona that cannot be opened, or one that runs but lost something (its soul).
            label = info.name if info.ok and not info.warning else f"{info.name if info.ok else info.slug} ⚠"
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, info.slug)
            item.setData(NAME_ROLE, info.name if info.ok else info.slug)
            problem = "" if info.ok else tr_error(info.error)
            item.setData(ERROR_ROLE, problem)
            item.setToolTip(problem or tr_error(info.warning) or info.description)
            if not info.ok:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.persona_list.addItem(item)
            if info.slug == self.current_slug:
                self.persona_list.setCurrentItem(item)
                if info.ok:
                    self.current_name = info.name
        self.life.apply()
        self._show_title()

    def _show_title(self) -> None:
        self.setWindowTitle(f"Nexus Ark — {self.current_name}" if self.current_name else "Nexus Ark")

    def select_persona(self, slug: str) -> None:
        if slug != self.current_slug:
            self.current_name = slug  # until the list or the opened persona gives its name
        for row in range(self.persona_list.count()):
            item = self.persona_list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == slug:
                self.persona_list.setCurrentItem(item)
                self.current_name = item.data(NAME_ROLE)
        self.current_slug = slug
        if self.life.unread.get(slug):  # opening the conversation shows what it wrote first
            self.life.mark_read(slug)
        self._ready = False
        self._set_busy(True)
        self.state_label.setText(tr("Loading {name}…", name=self.current_name or slug))
        self.request_open.emit(slug)

    def _on_persona_clicked(self, item: QListWidgetItem) -> None:
        slug = item.data(Qt.ItemDataRole.UserRole)
        if self.streaming or slug == self.current_slug:
            return
        if item.data(ERROR_ROLE):  # as the list read it (no folder is read on the UI thread)
            QMessageBox.warning(self, tr("Persona cannot be opened"), item.data(ERROR_ROLE))
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
            lambda: self.app.create_persona(name, language, description),
            while_open(self, created),
            while_open(self, failed),
        )

    def show_memory(self) -> None:
        if not self.current_slug:
            return
        from ui.memory_window import MemoryWindow

        # Reads nothing while it opens: a persona that cannot be opened says so in the window's status line.
        window = MemoryWindow(self.app, self.current_slug, self, name=self.current_name or None)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.show()

    def show_prompt(self) -> None:
        if not self.current_slug:
            return
        from ui.prompt_view import PromptView

        text = self.input.toPlainText().strip() or tr("Hello!")
        view = PromptView(self.app, self.current_slug, text, self)
        view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        view.show()

    def show_activity(self) -> None:
        if not self.current_slug:
            return
        from ui.activity_window import ActivityWindow

        for open_window in self.findChildren(ActivityWindow):
            if open_window.slug == self.current_slug and open_window.isVisible():
                open_window.raise_()
                open_window.activateWindow()
                open_window.load_newer()
                return
        window = ActivityWindow(self.app, self.current_slug, self, name=self.current_name)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.turn_finished.connect(window.load_newer)  # a finished turn's entries appear at once
        window.show()

    def show_dashboard(self) -> None:
        if not self.current_slug:
            return
        from ui.dashboard import DashboardWindow

        for open_window in self.findChildren(DashboardWindow):
            if open_window.slug == self.current_slug and open_window.isVisible():
                open_window.raise_()
                open_window.activateWindow()
                return
        window = DashboardWindow(self.app, self.current_slug, self, name=self.current_name)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.model_changed.connect(self._model_changed)
        window.show()

    def _model_changed(self, slug: str) -> None:
        """Another window put a persona on a new model: the one open reopens on it."""
        if slug == self.current_slug and not self.streaming:
            self.select_persona(slug)

    def edit_models(self) -> None:
        if not self.current_slug or self.streaming:
            return
        from ui.model_dialog import ModelSettingsDialog

        dialog = ModelSettingsDialog(self.app, self.current_slug, self, name=self.current_name)
        if dialog.exec() == ModelSettingsDialog.DialogCode.Accepted:
            self.select_persona(self.current_slug)  # reopen on the newly chosen model

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
        self._ready = True
        self._set_busy(False)
        self._show_opened()
        self.input.setFocus()
        self.persona_opened.emit(slug)

    def _show_opened(self) -> None:
        """What names the persona open (a switch sets only these: all of retranslate() cost up to 5 ms)."""
        self._show_title()
        self.model_label.setText(tr("Model: {name}", name=self.model_name) if self.model_name else "")
        if self._ready and not self.streaming:
            self.state_label.setText(tr("Ready"))

    def _check_language(self, slug: str) -> None:
        """Does the model speak the persona's language? Asked off the UI thread (it reads the catalogue)."""
        self.language_notice.show_advice(self.current_name, None)

        def shown(found) -> None:
            advice, hint = found
            if slug == self.current_slug:
                self.language_notice.show_advice(self.current_name, advice, bundled_hint=hint)

        app = self.app
        run_in_background(
            lambda: (app.language_advice(slug), app.bundled_hint(slug)), shown, lambda _message: None
        )

    def get_suggested_model(self, entry) -> None:
        """The notice's one click: download the suggested model, and switch the persona to it once it is
        verified (the persona reopens on it); with no entry, the list to choose one from."""
        if not self.current_slug or self.streaming:
            return
        from ui.get_model_dialog import GetModelDialog

        chosen = entry is not None
        dialog = GetModelDialog(
            self.app, self.current_slug, self, name=self.current_name, choose=entry.id if chosen else "",
            start=chosen, switch_when_done=chosen,
        )  # fmt: skip
        if dialog.exec() == GetModelDialog.DialogCode.Accepted:
            self.select_persona(self.current_slug)

    def _dismiss_advice(self, advice) -> None:
        slug = self.current_slug
        run_in_background(
            lambda: self.app.dismiss_advice(slug, advice),
            lambda _: None,
            lambda message: self.state_label.setText(tr("Error: {message}", message=message)),
        )

    def show_continue(self, reply_id: int | None) -> None:
        """The last reply was cut by the token limit: Continue goes on with it."""
        self._cut_reply = reply_id
        self.continue_button.setVisible(reply_id is not None and not self.streaming)

    def continue_reply(self) -> None:
        if self._cut_reply is None or self.streaming or not self._ready:
            return
        self.continue_button.setVisible(False)
        self.chat.begin_stream(self.current_name)
        self._start_turn("continue")
        self.request_continue.emit(self._cut_reply)

    def _start_turn(self, kind: str) -> None:
        self._turn_kind = kind
        self.streaming = True
        self._set_busy(True)
        self.state_label.setText(tr("{name} is writing…", name=self.current_name))

    def _on_open_failed(self, slug: str, message: str) -> None:
        self.state_label.setText(tr("Could not open {name}", name=slug))
        self.chat.show_placeholder(message)
        QMessageBox.warning(self, tr("Persona cannot be opened"), message)

    # -- chatting ---------------------------------------------------------------------------------
    def send_message(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.streaming or not self._ready:
            return
        self.input.clear()
        self.continue_button.setVisible(False)
        self._last_sent = text
        editing, self._editing = self._editing, None
        self.edit_banner.setVisible(False)
        if self.chat.has_newer:  # an older stretch is shown: the conversation goes on at its end
            self.conversation.show_latest()
        if editing is not None:
            self.chat.remove_from(editing)  # what followed stays as a branch; the view reloads after
        self.chat.add_message(tr("You"), "user", text)
        self.chat.begin_stream(self.current_name)
        if editing is not None:
            self._start_turn("edit")
            self.request_edit.emit(editing, text)
        else:
            self._start_turn("send")
            self.request_send.emit(text)

    def regenerate(self, reply_id: int) -> None:
        """A new version of a reply; the earlier ones stay, browsable with ‹ ›."""
        if self.streaming or not self._ready:
            return
        self.chat.remove_from(reply_id)
        self.chat.begin_stream(self.current_name)
        self._start_turn("regenerate")
        self.request_regenerate.emit(reply_id)

    def begin_edit(self, message_id: int, text: str) -> None:
        self._editing = message_id
        self.input.setPlainText(text)
        self.input.moveCursor(self.input.textCursor().MoveOperation.End)
        self.edit_banner.setVisible(True)
        self.input.setFocus()

    def cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.input.clear()
        self.edit_banner.setVisible(False)

    def worker_request(self, kind: str, message_id: int, forget: bool = False) -> None:
        self.request_change.emit(kind, message_id, forget)

    def _on_changed(self, kind: str, message_id: int) -> None:
        if kind == "delete":
            self.chat.remove_message(message_id)
            self.statusBar().showMessage(tr("Message deleted."), 4000)
        else:  # another version is on the line now, with what followed it
            self.conversation.show_latest()

    def escape(self) -> None:
        if self.streaming:
            self.stop_reply()
        elif self._editing is not None:
            self.cancel_edit()
        elif self.search_bar.isVisible():
            self.search_bar.close_bar()

    def stop_reply(self) -> None:
        if self.streaming:
            self.worker.cancel.set()
            self.state_label.setText(tr("Stopping…"))

    def _on_delta(self, text: str) -> None:
        self.chat.append_stream(text)

    def _on_finished(self, result: TurnResult) -> None:
        self.chat.end_stream(result.text, "cut" if result.cut_by_limit else result.status)
        self.streaming = False
        self.show_continue(result.reply_id if result.cut_by_limit else None)
        self.conversation.after_turn(result, self._turn_kind)
        self._set_busy(False)
        self.state_label.setToolTip("\n\n".join(tr_notice(w) for w in result.warnings))
        if result.error:
            self.state_label.setText(tr("Error: {message}", message=tr_error(result.error).splitlines()[0]))
        elif result.warnings:  # the turn went on, but the person should know recall was weaker
            self.state_label.setText(tr("Ready. Memory search used keywords only (details in the tooltip)."))
        else:
            self.state_label.setText(tr("Ready"))
        if result.tokens_per_s:
            self._tokens_per_s = result.tokens_per_s
            self.speed_label.setText(tr("{tps:.1f} tokens/s", tps=result.tokens_per_s))
        self.turn_finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self.chat.end_stream(self.chat.streaming_text, "error")
        if self.conversation._deferred:  # the history that arrived during the turn
            self.conversation.after_turn(None, self._turn_kind)
        if not self.input.toPlainText().strip():
            self.input.setPlainText(self._last_sent)  # the message could not be saved: give it back
        self.streaming = False
        self._set_busy(False)
        self.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))

    def _set_busy(self, busy: bool) -> None:
        self.send_button.setEnabled(not busy)
        self.model_button.setEnabled(not self.streaming)
        self.stop_button.setEnabled(self.streaming)
        self.persona_list.setEnabled(not self.streaming)

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
        self.app.settings.keep_running_in_tray = keep
        try:
            save_toml_model(self.app.layout.config_file, self.app.settings)
        except NexusArkError as exc:
            self.state_label.setText(tr("Error: {message}", message=tr_error(exc).splitlines()[0]))

    def show_conversation(self, slug: str) -> None:
        """Bring the window back (from the tray too) with this persona's conversation."""
        self.showNormal()
        self.raise_()
        self.activateWindow()
        known = any(  # as the list read it: no folder is read on the UI thread
            item.data(Qt.ItemDataRole.UserRole) == slug and not item.data(ERROR_ROLE)
            for item in (self.persona_list.item(row) for row in range(self.persona_list.count()))
        )
        if known and slug != self.current_slug and not self.streaming:
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
            lambda: app.set_language(code),
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

    def show_settings(self) -> None:
        from ui.settings_dialog import SettingsDialog

        for open_window in self.findChildren(SettingsDialog):
            if open_window.isVisible():
                open_window.raise_()
                open_window.activateWindow()
                return
        dialog = SettingsDialog(self.app, self, current_persona=self.current_slug, busy=self._replying_to)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.language_changed.connect(self.show_language)
        dialog.applied.connect(self._settings_applied)
        dialog.persona_restored.connect(self._persona_saved)
        dialog.show()

    def _settings_applied(self) -> None:
        if self.tray is not None:  # the tray's own check box says the same as the settings
            self.tray.keep_running_action.blockSignals(True)
            self.tray.keep_running_action.setChecked(self.app.settings.keep_running_in_tray)
            self.tray.keep_running_action.blockSignals(False)

    def _replying_to(self, slug: str) -> bool:
        return self.streaming and slug == self.current_slug

    def edit_persona(self) -> None:
        if not self.current_slug:
            return
        from ui.persona_editor import PersonaEditor

        for open_window in self.findChildren(PersonaEditor):
            if open_window.slug == self.current_slug and open_window.isVisible():
                open_window.raise_()
                open_window.activateWindow()
                return
        editor = PersonaEditor(self.app, self.current_slug, self, busy=self._replying_to)
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor.saved.connect(self._persona_saved)
        editor.personas_changed.connect(lambda _slug: self.refresh_personas())
        editor.persona_deleted.connect(self._persona_deleted)
        editor.show()

    def _persona_saved(self, slug: str) -> None:
        """Its name, soul, settings or memory changed: the list shows it, and its conversation reopens."""
        self.refresh_personas()
        if slug == self.current_slug and not self.streaming:
            self.select_persona(slug)

    def _persona_deleted(self, slug: str, kept: str) -> None:
        deleted_the_open_one = slug == self.current_slug
        if deleted_the_open_one:
            self.current_slug = self.current_name = ""
        self.refresh_personas(open_default=deleted_the_open_one)
        self.statusBar().showMessage(tr("Deleted. A copy is kept in {folder}", folder=kept), 15_000)

    def show_about(self) -> None:
        from ui.about_dialog import AboutDialog  # version, build, commit and the licences

        dialog = AboutDialog(self.app.data_dir, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop cooperatively, then let the core close only what is idle: a reply in progress ends at its
        next token (what was said is kept), the worker finishes its current step, and only then may the
        caller close the core. The window disappears at once; it never closes connections under work.

        With a tray and "keep running in the tray" chosen, closing only hides the window."""
        if (
            not self.quitting
            and self.tray is not None
            and self.tray.is_visible()
            and self.app.settings.keep_running_in_tray
        ):
            event.ignore()
            self.hide()
            return
        if self.tray is not None:
            self.tray.hide()
        self.worker.cancel.set()
        self.thread_.quit()
        self.hide()
        self.thread_.wait()
        self.conversation.close()
        super().closeEvent(event)
