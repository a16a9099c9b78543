"""The windows the main window opens from its menus and buttons: one of a kind per persona, brought to
the front when it is open already. A controller the window owns (window.openers), given the window (the
dialogs' parent), the app, the open persona and a narrow host (ui/main/hosts.py).

Each window's module is imported when it is first opened (ui/app/application.py imports them on a thread
of its own once the window shows), so starting the app does not wait for them."""

from __future__ import annotations

from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, SignalInstance
from PySide6.QtWidgets import QMessageBox, QWidget

from nexus_ark.app import NexusApp
from nexus_ark.personas.model import PersonaInfo
from ui.main.hosts import OpenerHost
from ui.personas.persona_dialog import NewPersonaDialog
from ui.util.i18n import tr
from ui.util.open_persona import OpenPersona
from ui.util.tasks import run_in_background, while_open

W = TypeVar("W", bound=QWidget)


class Openers(QObject):
    def __init__(
        self,
        window: QWidget,
        app: NexusApp,
        shown: OpenPersona,
        host: OpenerHost,
        turn_finished: SignalInstance,
    ) -> None:
        """turn_finished: the window's signal once a turn is shown (an open timeline reads on)."""
        super().__init__(window)
        self.window = window
        self.app = app
        self.shown = shown
        self.host = host
        self.turn_finished = turn_finished

    @property
    def current_slug(self) -> str:
        return self.shown.slug

    @property
    def current_name(self) -> str:
        return self.shown.name

    def _raise_open(self, kind: type[W], slug: str | None = None) -> W | None:
        """The window of this kind already open (for this persona), brought to the front; else None."""
        for open_window in self.window.findChildren(kind):
            if open_window.isVisible() and (slug is None or getattr(open_window, "slug", None) == slug):
                open_window.raise_()
                open_window.activateWindow()
                return open_window
        return None

    def new_persona(self) -> None:
        dialog = NewPersonaDialog(self.window)
        if dialog.exec() != NewPersonaDialog.DialogCode.Accepted:
            return
        name, language, description = dialog.values()

        def created(info: PersonaInfo) -> None:
            self.host.refresh_personas()
            if not self.shown.streaming:
                self.host.select_persona(info.slug)

        def failed(message: str) -> None:
            QMessageBox.warning(self.window, tr("Persona not created"), message)

        app = self.app
        run_in_background(  # writes its folder: off the UI thread
            lambda: app.personas.create(name, language, description),
            while_open(self, created),
            while_open(self, failed),
        )

    def show_memory(self) -> None:
        if not self.current_slug:
            return
        from ui.memory.memory_window import MemoryWindow

        # Reads nothing while it opens: a persona that cannot be opened says so in the window's status line.
        window = MemoryWindow(self.app, self.current_slug, self.window, name=self.current_name or None)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.show()

    def show_prompt(self) -> None:
        if not self.current_slug:
            return
        from ui.chat.prompt_view import PromptView

        text = self.host.draft().strip() or tr("Hello!")
        view = PromptView(self.app, self.current_slug, text, self.window)
        view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        view.show()

    def show_activity(self) -> None:
        if not self.current_slug:
            return
        from ui.life.activity_window import ActivityWindow

        open_window = self._raise_open(ActivityWindow, self.current_slug)
        if open_window is not None:
            open_window.load_newer()
            return
        window = ActivityWindow(self.app, self.current_slug, self.window, name=self.current_name)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.turn_finished.connect(window.load_newer)  # a finished turn's entries appear at once
        window.show()

    def show_dashboard(self) -> None:
        if not self.current_slug:
            return
        from ui.life.dashboard import DashboardWindow

        if self._raise_open(DashboardWindow, self.current_slug):
            return
        window = DashboardWindow(self.app, self.current_slug, self.window, name=self.current_name)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.model_changed.connect(self.model_changed)
        window.show()

    def model_changed(self, slug: str) -> None:
        """Another window put a persona on a new model: the one open reopens on it."""
        if slug == self.current_slug and not self.shown.streaming:
            self.host.select_persona(slug)

    def edit_models(self) -> None:
        if not self.current_slug or self.shown.streaming:
            return
        from ui.models.model_dialog import ModelSettingsDialog

        dialog = ModelSettingsDialog(self.app, self.current_slug, self.window, name=self.current_name)
        if dialog.exec() == ModelSettingsDialog.DialogCode.Accepted:
            self.host.select_persona(self.current_slug)  # reopen on the newly chosen model

    def get_suggested_model(self, entry: Any) -> None:
        """The notice's one click: download the suggested model, and switch the persona to it once it is
        verified (the persona reopens on it); with no entry, the list to choose one from."""
        if not self.current_slug or self.shown.streaming:
            return
        from ui.models.get_model_dialog import GetModelDialog

        chosen = entry is not None
        dialog = GetModelDialog(
            self.app, self.current_slug, self.window, name=self.current_name,
            choose=entry.id if chosen else "", start=chosen, switch_when_done=chosen,
        )  # fmt: skip
        if dialog.exec() == GetModelDialog.DialogCode.Accepted:
            self.host.select_persona(self.current_slug)

    def show_settings(self) -> None:
        from ui.settings.settings_dialog import SettingsDialog

        if self._raise_open(SettingsDialog):
            return
        dialog = SettingsDialog(
            self.app, self.window, current_persona=self.current_slug, busy=self.host.answering
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.language_changed.connect(self.host.show_language)
        dialog.applied.connect(self.host.tray_follows_settings)
        dialog.persona_restored.connect(self.persona_saved)
        dialog.first_start_requested.connect(self.show_first_start)
        dialog.show()

    def show_tools(self, slug: str) -> None:
        """Settings → Tools on this persona's servers and decisions (Settings opened, or brought up)."""
        from ui.settings.settings_dialog import SettingsDialog

        self.show_settings()
        dialog = self._raise_open(SettingsDialog)
        if dialog is not None:
            dialog.show_tools(slug)

    def offer_first_start(self) -> None:
        """At start: the first-start flow, until it was finished or skipped once."""
        if not self.app.state.setup_done:
            self.show_first_start()

    def show_first_start(self) -> None:
        """Who the person is and which mind: non-modal over the window; done, the persona reopens on it."""
        from ui.first_start.flow import FirstStartDialog

        if self._raise_open(FirstStartDialog):
            return
        dialog = FirstStartDialog(self.app, self.window, slug=self.current_slug, name=self.current_name)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.applied.connect(lambda _switched: self.model_changed(self.current_slug))
        dialog.show()

    def edit_persona(self) -> None:
        if not self.current_slug:
            return
        from ui.personas.persona_editor import PersonaEditor

        if self._raise_open(PersonaEditor, self.current_slug):
            return
        editor = PersonaEditor(self.app, self.current_slug, self.window, busy=self.host.answering)
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor.saved.connect(self.persona_saved)
        editor.personas_changed.connect(lambda _slug: self.host.refresh_personas())
        editor.persona_deleted.connect(self.persona_deleted)
        editor.history_requested.connect(self.show_soul_history)
        editor.tools_requested.connect(self.show_tools)
        editor.show()

    def show_soul_history(self, slug: str = "", name: str = "") -> None:
        """Every version of a persona's soul (the one shown, unless the editor of another asks)."""
        slug = slug or self.current_slug
        if not slug:
            return
        from ui.soul.history_window import SoulHistoryWindow

        open_window = self._raise_open(SoulHistoryWindow, slug)
        if open_window is not None:
            open_window.load()
            return
        name = name or (self.current_name if slug == self.current_slug else "")
        window = SoulHistoryWindow(self.app, slug, self.window, name=name)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.show()

    def persona_saved(self, slug: str) -> None:
        """Its name, soul, settings or memory changed: the list shows it, and its conversation reopens."""
        self.host.refresh_personas()
        if slug == self.current_slug and not self.shown.streaming:
            self.host.select_persona(slug)

    def persona_deleted(self, slug: str, kept: str) -> None:
        deleted_the_open_one = slug == self.current_slug
        if deleted_the_open_one:
            self.shown.slug = self.shown.name = ""
        self.host.refresh_personas(open_default=deleted_the_open_one)
        self.host.show_status(tr("Deleted. A copy is kept in {folder}", folder=kept), 15_000)

    def show_about(self) -> None:
        from ui.settings.about_dialog import AboutDialog  # version, build, commit and the licences

        dialog = AboutDialog(self.app.data_dir, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
