"""The main window's tray icon: installed where the desktop has a tray (else closing the window quits, as it
always did), its "keep running in the tray" tick remembered in config.toml on a worker, and its check box
kept in step with the settings."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from ui.life.tray import Tray
from ui.util.desktop import tray_available
from ui.util.i18n import tr, tr_error
from ui.util.tasks import run_in_background, while_open


def install_tray(
    window: QWidget, app: NexusApp, quit_app: Callable[[], None], error: Callable[[str], None]
) -> Tray | None:
    """The tray for this window, shown; None without a tray on this desktop. error: one line for the
    window's status when the tick could not be saved."""
    if not tray_available():
        return None
    tray = Tray(window, keep_running=app.settings.keep_running_in_tray, parent=window)
    tray.keep_running_toggled.connect(lambda keep: _keep_running_in_tray(window, app, keep, error))
    tray.quit_requested.connect(quit_app)
    tray.show()
    return tray


def _keep_running_in_tray(window: QWidget, app: NexusApp, keep: bool, error: Callable[[str], None]) -> None:
    """Remembered in config.toml by its owner, on a worker (it writes a file); closing the window meanwhile
    already follows the tray's tick."""

    def failed(exc: BaseException | str) -> None:
        message = tr_error(exc) if isinstance(exc, NexusArkError) else str(exc)
        error(tr("Error: {message}", message=message.splitlines()[0]))

    run_in_background(
        lambda: app.admin.update_settings(keep_running_in_tray=keep),
        lambda _settings: None,
        while_open(window, failed),
    )


def follow_settings(tray: Tray | None, app: NexusApp) -> None:
    """The tray's own check box says the same as the settings."""
    if tray is not None:
        tray.keep_running_action.blockSignals(True)
        tray.keep_running_action.setChecked(app.settings.keep_running_in_tray)
        tray.keep_running_action.blockSignals(False)
