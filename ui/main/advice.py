"""The notice above the conversation when the model of the persona shown does not speak its language: asked
off the UI thread (it reads the catalogue), with one click to the model settings or a suggested download,
and dismissed for good per persona. A controller the main window owns (window.advice)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject

from nexus_ark.app import NexusApp
from ui.chat.language_notice import LanguageNotice
from ui.main.openers import Openers
from ui.util.i18n import tr
from ui.util.open_persona import OpenPersona
from ui.util.tasks import run_in_background, while_open


class LanguageAdvice(QObject):
    def __init__(
        self,
        app: NexusApp,
        shown: OpenPersona,
        notice: LanguageNotice,
        openers: Openers,
        error: Callable[[str], None],
        parent: QObject,
    ) -> None:
        """error: one line for the window's status, when a dismissal could not be saved; parent: the window
        (an answer arriving once it is deleted is dropped)."""
        super().__init__(parent)
        self.app = app
        self.shown = shown
        self.notice = notice
        self.error = error
        notice.open_models.connect(openers.edit_models)
        notice.dismissed.connect(self._dismiss)
        notice.get_model.connect(openers.get_suggested_model)

    def check(self, slug: str) -> None:
        """Does the model speak the persona's language? Asked off the UI thread (it reads the catalogue)."""
        self.notice.show_advice(self.shown.name, None)

        def shown(found: tuple[Any, Any]) -> None:
            advice, hint = found
            if slug == self.shown.slug:
                self.notice.show_advice(self.shown.name, advice, bundled_hint=hint)

        app = self.app
        run_in_background(  # the window may be closed (and deleted) before it is read
            lambda: (app.models.language_advice(slug), app.models.bundled_hint(slug)),
            while_open(self, shown),
            lambda _message: None,
        )

    def _dismiss(self, advice: Any) -> None:
        slug, app = self.shown.slug, self.app

        def failed(message: str) -> None:
            self.error(tr("Error: {message}", message=message))

        run_in_background(
            lambda: app.models.dismiss_advice(slug, advice), lambda _: None, while_open(self, failed)
        )
