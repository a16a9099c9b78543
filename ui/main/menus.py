"""The main window's menus: File, View and Help, their actions and their words. A part of MainWindow (a
mixin), kept apart so each file holds one job."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QShortcut

from ui.memory import chatgpt_actions
from ui.personas import card_actions
from ui.util.i18n import tr


class Menus:
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
        self.new_room_action = QAction(self)  # a room: the person with several personas at once
        self.new_room_action.triggered.connect(self.new_room)
        self.file_menu.addAction(self.new_room_action)
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
        self.soul_history_action = QAction(self)  # every version of its soul: compare, restore
        self.soul_history_action.triggered.connect(lambda: self.show_soul_history())
        self.file_menu.addAction(self.soul_history_action)
        self.file_menu.addSeparator()
        self.settings_action = QAction(self)
        self.settings_action.setShortcut("Ctrl+,")
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)  # macOS: the app menu
        self.settings_action.triggered.connect(self.show_settings)
        self.file_menu.addAction(self.settings_action)
        self.first_start_action = QAction(self)  # your name and which mind, again
        self.first_start_action.triggered.connect(self.show_first_start)
        self.file_menu.addAction(self.first_start_action)
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

    def _persona_actions(self) -> list[QAction]:
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

    def _follow_shown_page(self, room_shown: bool) -> None:
        """While a room is shown, the persona's actions have no persona to act on: the one open underneath
        is not what the person sees, so they are off (with why) until a persona is chosen again."""
        why = tr("Choose a persona on the left first: a room is shown.") if room_shown else ""
        for action in self._persona_actions():
            action.setEnabled(not room_shown)
            action.setStatusTip(why)
            action.setToolTip(why or action.text())
        for button in (self.edit_persona_button, self.memory_button):  # under the persona list
            button.setEnabled(not room_shown)
            button.setToolTip(why)
        self.model_button.setEnabled(not room_shown and not self.streaming)
        self.model_button.setToolTip(why)

    def _retranslate_menus(self) -> None:
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
        self._follow_shown_page(room_shown=self.room_panel is not None)  # its words in the new language
