"""The main window's menus: File, View and Help, their actions and their words. A controller the window
owns (window.menus), given the window (the menu bar, the actions' parent), the app, the open persona, the
controllers whose work the actions start and a narrow host for the window's own (ui/main/hosts.py)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu

from nexus_ark.app import NexusApp
from ui.chat.conversation_controller import ConversationController
from ui.main.hosts import MenuHost
from ui.main.openers import Openers
from ui.main.room_hooks import RoomsController
from ui.memory import chatgpt_actions
from ui.personas import card_actions
from ui.util.i18n import tr
from ui.util.open_persona import OpenPersona


class Menus(QObject):
    def __init__(
        self,
        window: QMainWindow,
        app: NexusApp,
        shown: OpenPersona,
        host: MenuHost,
        openers: Openers,
        rooms: RoomsController,
        conversation: ConversationController,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.app = app
        self.shown = shown
        self.host = host
        self.openers = openers
        bar = window.menuBar()
        self.file_menu = bar.addMenu("")
        self.view_menu = bar.addMenu("")
        self.language_menu = self.view_menu.addMenu("")
        self.help_menu = bar.addMenu("")
        self._build_file_menu(rooms)
        self._build_view_menu(conversation)
        self.about_action = self._action(self.help_menu, openers.show_about)
        escape = QShortcut(Qt.Key.Key_Escape, window)  # stops a reply; else leaves an edit or the search
        escape.setContext(Qt.ShortcutContext.WindowShortcut)
        escape.activated.connect(host.escape)

    def _action(self, menu: QMenu, slot: Callable[[], object], shortcut: str = "") -> QAction:
        """An action at the end of the menu, its trigger connected (its words come with retranslate)."""
        action = QAction(self.window)
        if shortcut:
            action.setShortcut(shortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def _build_file_menu(self, rooms: RoomsController) -> None:
        menu, openers, host = self.file_menu, self.openers, self.host
        self.new_persona_action = self._action(menu, openers.new_persona, "Ctrl+N")
        self.new_room_action = self._action(menu, rooms.new_room)  # the person with several personas
        # A SillyTavern character card becomes a persona.
        self.import_card_action = self._action(menu, self._import_card)
        self.export_card_action = self._action(menu, self._export_card)
        # Past conversations from ChatGPT into the open persona.
        self.import_chatgpt_action = self._action(menu, self._import_chatgpt)
        self.model_action = self._action(menu, openers.edit_models)
        self.edit_persona_action = self._action(menu, openers.edit_persona)
        # Every version of its soul: compare, restore.
        self.soul_history_action = self._action(menu, lambda: openers.show_soul_history())
        menu.addSeparator()
        self.settings_action = self._action(menu, openers.show_settings, "Ctrl+,")
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)  # macOS: the app menu
        self.first_start_action = self._action(menu, openers.show_first_start)  # your name and which mind
        menu.addSeparator()
        self.quit_action = self._action(menu, host.quit_app, "Ctrl+Q")

    def _build_view_menu(self, conversation: ConversationController) -> None:
        menu, openers = self.view_menu, self.openers
        group = QActionGroup(self.window)
        self.language_actions: dict[str, QAction] = {}
        for code in ("auto", "en", "ja"):
            action = QAction(self.window, checkable=True)
            action.triggered.connect(lambda _checked, c=code: self.host.change_language(c))
            group.addAction(action)
            self.language_menu.addAction(action)
            self.language_actions[code] = action
        self.language_actions[self.app.settings.language].setChecked(True)
        self.prompt_action = self._action(menu, openers.show_prompt)  # a debug view: what the model is sent
        # The persona's timeline: what happened, by time and kind.
        self.activity_action = self._action(menu, openers.show_activity)
        # The persona's inner life: drives, questions, feelings, dreams.
        self.dashboard_action = self._action(menu, openers.show_dashboard)
        # What the personas wrote on their own, with why.
        self.inbox_action = self._action(menu, self.host.show_inbox, "Ctrl+I")
        self.find_action = self._action(menu, conversation.open_search, "Ctrl+F")  # search the conversation
        self.latest_action = self._action(menu, conversation.jump_to_latest, "Ctrl+End")

    def _import_card(self) -> None:
        card_actions.import_card(self.window, self.app, on_imported=self.host.on_card_imported)

    def _export_card(self) -> None:
        if self.shown.slug:
            card_actions.export_card(self.window, self.app, self.shown.slug)

    def _import_chatgpt(self) -> None:
        if self.shown.slug:
            chatgpt_actions.import_export(self.window, self.app, self.shown.slug, self.shown.name)

    def persona_actions(self) -> list[QAction]:
        """The actions on the open persona and its conversation (the windows of its own, its card, its
        model, the conversation's search and scrolling)."""
        return [
            self.export_card_action,
            self.import_chatgpt_action,
            self.model_action,
            self.edit_persona_action,
            self.soul_history_action,
            self.prompt_action,
            self.activity_action,
            self.dashboard_action,
            self.find_action,
            self.latest_action,
        ]

    def follow_shown_page(self, room_shown: bool) -> str:
        """While a room is shown, the persona's actions have no persona to act on: the one open underneath
        is not what the person sees, so they are off (with why) until a persona is chosen again. Returns why
        (empty with a persona shown), for the window's own buttons."""
        why = tr("Choose a persona on the left first: a room is shown.") if room_shown else ""
        for action in self.persona_actions():
            action.setEnabled(not room_shown)
            action.setStatusTip(why)
            action.setToolTip(why or action.text())
        return why

    def retranslate(self) -> None:
        self.model_action.setText(tr("Model settings…"))
        self.edit_persona_action.setText(tr("Edit persona…"))
        self.soul_history_action.setText(tr("Soul history…"))
        self.settings_action.setText(tr("Settings…"))
        self.first_start_action.setText(tr("First start…"))
        self.prompt_action.setText(tr("Show the prompt…"))
        self.activity_action.setText(tr("Activity timeline…"))
        self.dashboard_action.setText(tr("Inner life…"))
        self.find_action.setText(tr("Find in conversation…"))
        self.latest_action.setText(tr("Jump to the latest message"))
        self.file_menu.setTitle(tr("&File"))
        self.new_persona_action.setText(tr("New persona…"))
        self.new_room_action.setText(tr("New room…"))
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
