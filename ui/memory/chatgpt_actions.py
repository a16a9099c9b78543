"""File > Import a ChatGPT export…: a ChatGPT data export (conversations.json, or the export's .zip) becomes
the open persona's earlier conversations (app.admin.import_chatgpt_export).

The file dialog runs on the UI thread; the import runs on a worker with a connection of its own, so the
window and the persona go on while it reads. A progress dialog follows the file and has a Stop button:
what was imported stays, and importing the same export again finishes it (nothing is written twice). The
imported conversations live in memory (recall finds them), each in a room of its own: the conversation
view keeps showing the person's own conversation with the persona.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QWidget
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.memory.chatgpt_import import ChatGPTImportReport
from ui.util.i18n import N_, tr, tr_notice
from ui.util.result_box import tell
from ui.util.tasks import run_in_background

IMPORT_ACTION = N_("Import a ChatGPT export…")  # the File menu's entry (the window shows it with tr())
STEPS = 1000  # the progress bar's resolution
SHOWN_ERRORS = 5  # conversations named in the result box; the activity timeline has the count


PROGRESS_EVERY_S = 0.1  # an export of short conversations reads thousands a second: the bar needs ten


class _Progress(QObject):
    """Progress from the worker, queued to the UI thread. Not owned by any window (the worker may report
    once more after the window has gone); the import's call keeps it alive until its result is delivered."""

    changed = Signal(int, int, int)  # bytes read, bytes in all, conversations read

    def __init__(self) -> None:
        super().__init__()
        self._last = 0.0

    def report(self, done: int, size: int, conversations: int) -> None:
        """On the worker: passed on to the UI thread at most every PROGRESS_EVERY_S."""
        now = time.monotonic()
        if now - self._last >= PROGRESS_EVERY_S:
            self._last = now
            self.changed.emit(done, size, conversations)


class ChatGPTImport:
    """One import under way: its progress dialog, its Stop, and what it tells the person at the end."""

    def __init__(
        self,
        parent: QWidget | None,
        app: NexusApp,
        slug: str,
        name: str,
        path: Path,
    ) -> None:
        self.parent, self.name, self.path = parent, name, path
        self.stop = threading.Event()
        self.progress = _Progress()
        self.dialog = QProgressDialog(
            tr("Reading {file} into {name}'s memory…", file=path.name, name=name),
            tr("Stop"),
            0,
            STEPS,
            parent,
        )
        self.dialog.setObjectName("chatgpt-import")
        self.dialog.setWindowTitle(tr("ChatGPT export"))
        self.dialog.setWindowModality(Qt.WindowModality.NonModal)  # the person may go on chatting
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.setMinimumDuration(0)
        self.dialog.canceled.connect(self._stop)
        self.progress.changed.connect(self._show_progress)
        stop, progress = self.stop, self.progress
        run_in_background(
            lambda: app.admin.import_chatgpt_export(slug, path, progress=progress.report, stop=stop),
            self._done,
            self._failed,
        )
        self.dialog.show()

    def _stop(self) -> None:
        self.stop.set()
        if isValid(self.dialog):
            self.dialog.setLabelText(tr("Stopping after this conversation…"))

    def _show_progress(self, done: int, size: int, conversations: int) -> None:
        if not isValid(self.dialog) or self.stop.is_set():
            return
        self.dialog.setValue(min(STEPS, done * STEPS // size) if size else 0)
        self.dialog.setLabelText(
            tr(
                "Reading {file} into {name}'s memory: {count} conversations so far…",
                file=self.path.name,
                name=self.name,
                count=conversations,
            )
        )

    def _finish(self) -> None:
        if isValid(self.dialog):
            self.dialog.canceled.disconnect(self._stop)
            self.dialog.close()
            self.dialog.deleteLater()

    def _done(self, report: ChatGPTImportReport) -> None:
        self._finish()
        text = tr(
            "{imported} messages from {conversations} conversations are now in {name}'s memory "
            "({already} were there already). {name} remembers them when they come up; the conversation "
            "shown here stays your own with {name}.",
            imported=report.imported,
            conversations=report.conversations,
            already=report.skipped_duplicates,
            name=self.name,
        )
        if report.stopped:
            text += "\n\n" + tr("Stopped before the end: import the same file again to finish.")
        if report.errors:
            text += "\n\n" + tr("{count} could not be read:", count=len(report.errors))
            text += "\n" + "\n".join(f"• {tr_notice(error)}" for error in report.errors[:SHOWN_ERRORS])
            if len(report.errors) > SHOWN_ERRORS:
                text += "\n" + tr("…and {count} more.", count=len(report.errors) - SHOWN_ERRORS)
        tell(
            self.parent, tr("ChatGPT export imported"), text, warn=bool(report.errors), name="chatgpt-result"
        )

    def _failed(self, message: str) -> None:
        self._finish()
        tell(self.parent, tr("ChatGPT export not imported"), message, warn=True, name="chatgpt-result")


def import_export(parent: QWidget | None, app: NexusApp, slug: str, name: str) -> ChatGPTImport | None:
    """Ask for the export, then import it into the persona `slug`."""
    path, _ = QFileDialog.getOpenFileName(
        parent,
        tr("Import a ChatGPT export"),
        "",
        tr("ChatGPT export (conversations.json *.zip);;JSON (*.json)"),
    )
    return ChatGPTImport(parent, app, slug, name, Path(path)) if path else None
