"""Starting the window: QApplication, the core app, error dialogs for what stops us from starting."""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import Notice, NoticeKind
from nexus_ark.paths import assets_dir
from ui.util import i18n, theme
from ui.util.i18n import tr, tr_error, tr_notice
from ui.util.tasks import SerialWorker, favour_the_ui_thread, freeze_long_lived

if TYPE_CHECKING:
    from nexus_ark.notify import Notifier, OnClick

log = logging.getLogger(__name__)

# The windows a person opens from the menus, imported after the main window shows (import_in_background).
WINDOW_MODULES = (
    "ui.life.dashboard",
    "ui.personas.persona_editor",
    "ui.settings.settings_dialog",
    "ui.memory.memory_window",
    "ui.models.get_model_dialog",
)

# NEXUS_ARK_QUIT_AFTER_MS lets the packaging smoke test start the built app and have it quit by itself.
QUIT_AFTER_ENV = "NEXUS_ARK_QUIT_AFTER_MS"


class TranslatedNotifier:
    """The core's notifier with its sentences in the person's language: the core hands it Notices (English
    text that keeps its template), translated here by template as the window translates them; a click on a
    soul proposal's notification also calls `open_review` with the persona and the proposal (from the
    notifier's thread: it must only emit a signal, as InboxOnClick's does)."""

    def __init__(self, inner: Notifier, open_review: Callable[[str, int], None] | None = None) -> None:
        self.inner = inner
        self.open_review = open_review

    def available(self) -> tuple[bool, str]:
        return self.inner.available()

    def notify(self, title: str, body: str, *, on_click: OnClick | None = None) -> bool:
        if (
            self.open_review is not None
            and isinstance(body, Notice)
            and body.kind is NoticeKind.SOUL_PROPOSAL
        ):
            slug, proposal = body.values.get("persona"), body.values.get("proposal")
            if isinstance(slug, str) and isinstance(proposal, int):
                open_review = self.open_review
                on_click = _then(on_click, lambda: open_review(slug, proposal))
        return self.inner.notify(tr_notice(title), tr_notice(body), on_click=on_click)

    def close(self) -> None:
        self.inner.close()


def _then(first: OnClick | None, then: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        if first is not None:
            first()  # the persona's conversation, and the window brought back
        then()

    return both


class InboxOnClick(QObject):
    """Lives on the UI thread; a notification clicked on the notifier's thread arrives here queued: the
    persona and the soul proposal to review."""

    clicked = Signal(str, int)


def import_in_background(*modules: str) -> SerialWorker:
    """Import windows' modules, in order, on a lane of their own (wait() on it to have them all). The
    dashboard's plotting library (pyqtgraph) takes a quarter of a second to import, the persona editor's and
    the settings' modules about 10 ms each: imported lazily on the UI thread, the first open of each froze the
    window that long. Importing defines classes only and creates no Qt object, so any thread may do it; a UI
    thread that wants a module meanwhile waits for this import instead of starting its own."""
    lane = SerialWorker("import-windows")
    for module in modules:
        lane.run(
            partial(importlib.import_module, module),
            lambda _imported: None,
            partial(_not_imported_ahead, module),
        )
    lane.close()
    return lane


def _not_imported_ahead(module: str, message: str) -> None:
    log.warning("%s not imported ahead: %s", module, message)


def run_window(data_dir: str | None) -> int:
    """The desktop app: the window until it quits; returns the exit code."""
    previous_interval = favour_the_ui_thread()
    try:
        return _run_window(data_dir)
    finally:  # a caller in the same process (a test) gets its interpreter back as it was
        sys.setswitchinterval(previous_interval)


def _run_window(data_dir: str | None) -> int:
    qt_app = cast(QApplication, QApplication.instance() or QApplication(sys.argv))  # a QApplication here
    qt_app.setApplicationName("Nexus Ark")
    qt_app.setOrganizationName("NexusArk")
    qt_app.setWindowIcon(QIcon(str(assets_dir() / "icons" / "app.png")))
    core = NexusApp(data_dir)
    try:
        core.open()
    except NexusArkError as exc:
        i18n.set_language("auto")
        print(f"error: {exc}", file=sys.stderr)
        QMessageBox.critical(None, tr("Nexus Ark cannot start"), tr_error(exc))
        return 2
    i18n.set_language(core.settings.language)
    i18n.read_every_catalogue()
    theme.apply_appearance(core.settings.theme, core.settings.font_size)
    from nexus_ark.notify import default_notifier
    from ui.main.main_window import MainWindow

    inbox_on_click = InboxOnClick(qt_app)
    core.life.notifications.notifier = TranslatedNotifier(
        default_notifier(assets_dir() / "icons" / "app.png"), inbox_on_click.clicked.emit
    )
    window = MainWindow(core)
    inbox_on_click.clicked.connect(window.life.review_proposal)
    window.show()
    window.offer_first_start()  # your name and which mind, until done or skipped once
    importer = import_in_background(*WINDOW_MODULES)
    window.life.start()  # every persona wakes; the scheduler runs while the app does
    freeze_long_lived()  # full garbage collections stay short: the window never waits on one for long
    quit_after = os.environ.get(QUIT_AFTER_ENV)
    if quit_after:
        QTimer.singleShot(int(quit_after), window.quit_app)
    try:
        return qt_app.exec()
    finally:
        # Finished long before, unless the app quit at once: an import cut off by the interpreter's shutdown
        # may crash it.
        importer.wait()
        core.close()
