"""File > Import a character card… and Export as a character card…: SillyTavern cards (V2 and V3, PNG or
JSON) in and out, through nexus_ark.cards_io.

The file dialog runs on the UI thread; reading, checking and writing the card run on a worker (ui.util.tasks),
so the window never waits on the disk. While it works a small progress dialog appears (only if it takes a
moment); the result or the reason it failed comes in a message box that does not block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QWidget
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.cards_io import CardExport, CardFormat, CardImport
from nexus_ark.cards_io import export_card as write_card
from nexus_ark.cards_io import import_card as read_card
from ui.util.i18n import N_, tr, tr_notice
from ui.util.result_box import tell
from ui.util.tasks import run_in_background

SHOW_PROGRESS_AFTER_MS = 300  # a quick import shows no progress dialog at all
# The File menu's entries (the window shows them with tr()).
IMPORT_ACTION = N_("Import a character card…")
EXPORT_ACTION = N_("Export as a character card…")


def import_card(
    parent: QWidget | None, app: NexusApp, on_imported: Callable[[str], None] | None = None
) -> None:
    """Ask for a card file, then import it as a new persona. on_imported(slug) runs on the UI thread
    once the persona exists (the window refreshes its list and opens it)."""
    path, _ = QFileDialog.getOpenFileName(
        parent, tr("Import a character card"), "", tr("Character cards (*.png *.json)")
    )
    if path:
        import_card_file(parent, app, Path(path), on_imported)


def import_card_file(
    parent: QWidget | None,
    app: NexusApp,
    path: Path,
    on_imported: Callable[[str], None] | None = None,
) -> None:
    """Import `path` on a worker; the person is told how it went."""
    progress = _Progress(parent, tr("Importing {name}…", name=path.name))

    def done(result: CardImport) -> None:
        progress.finish()
        text = tr(
            "{name} is ready: {greetings} greetings, {lore} lore entries in memory, {always} always in mind.",
            name=result.name,
            greetings=result.greetings,
            lore=result.lore_in_memory,
            always=result.lore_always,
        )
        _tell(parent, tr("Character card imported"), text, result.warnings)
        if on_imported is not None and (parent is None or isValid(parent)):
            # The next turn of the main loop: building the box and opening the new persona in one turn
            # kept the window from drawing for a frame (16.6 ms measured, bench/import_stall.py).
            slug = result.slug
            receiver = parent if parent is not None else QCoreApplication.instance()
            if receiver is not None:
                QTimer.singleShot(0, receiver, lambda: on_imported(slug))

    def failed(message: str) -> None:
        progress.finish()
        _tell(parent, tr("Character card not imported"), message, warn=True)

    run_in_background(lambda: read_card(app, path), done, failed)


def export_card(parent: QWidget | None, app: NexusApp, slug: str) -> None:
    """Ask where to save, then write the persona as a V3 card (PNG with its picture, or JSON)."""
    png, json_ = tr("PNG card (*.png)"), tr("JSON card (*.json)")
    path, chosen = QFileDialog.getSaveFileName(
        parent, tr("Export as a character card"), str(Path.home() / f"{slug}.png"), f"{png};;{json_}"
    )
    if not path:
        return
    target = Path(path)
    fmt: CardFormat = "json" if chosen == json_ or target.suffix.lower() == ".json" else "png"
    if target.suffix.lower() != f".{fmt}":
        target = target.with_name(f"{target.name}.{fmt}")
    export_card_file(parent, app, slug, target, fmt)


def export_card_file(parent: QWidget | None, app: NexusApp, slug: str, path: Path, fmt: CardFormat) -> None:
    """Write the card on a worker; the person is told where it went."""
    progress = _Progress(parent, tr("Writing {name}…", name=path.name))

    def done(result: CardExport) -> None:
        progress.finish()
        text = tr("Saved as {path}.", path=str(result.path))
        _tell(parent, tr("Character card exported"), text, result.warnings)

    def failed(message: str) -> None:
        progress.finish()
        _tell(parent, tr("Character card not exported"), message, warn=True)

    run_in_background(lambda: write_card(app, slug, path, fmt), done, failed)


class _Progress:
    """A busy dialog that appears only when the work takes longer than a moment."""

    def __init__(self, parent: QWidget | None, label: str) -> None:
        self.dialog: QProgressDialog | None = None
        self.finished = False
        self.parent = parent
        self.label = label
        QTimer.singleShot(SHOW_PROGRESS_AFTER_MS, self._show)

    def _show(self) -> None:
        if self.finished or (self.parent is not None and not isValid(self.parent)):
            return
        dialog = QProgressDialog(self.label, "", 0, 0, self.parent)
        dialog.setCancelButton(None)  # the work is short and leaves nothing half-done: no cancel
        dialog.setWindowTitle(tr("Character card"))
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.dialog = dialog

    def finish(self) -> None:
        self.finished = True
        if self.dialog is not None and isValid(self.dialog):
            self.dialog.close()
        self.dialog = None


def _tell(
    parent: QWidget | None, title: str, text: str, notes: Sequence[str] | None = None, warn: bool = False
) -> None:
    if notes:
        text += "\n\n" + tr("Notes:") + "\n" + "\n".join(f"• {tr_notice(n)}" for n in notes)
    tell(parent, title, text, warn=warn, name="card-result")
