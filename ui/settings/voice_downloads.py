"""A list of downloadable voices or recognisers for Settings → Voice (ui/settings/voice_panel.py): each
row's name, languages, size, licence and whether it is on disk, with Download (progress and Cancel) and
Remove. Listing reads the disk and downloading goes through app.voice.get_voice (the same pinned, verified,
resumable downloader as `nexus-ark voice get`): both on a worker, never on the UI thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.providers.download_progress import human_bytes
from nexus_ark.providers.model_download import Progress
from ui.models.get_model_dialog import describe
from ui.util import theme
from ui.util.i18n import N_, tr
from ui.util.tasks import run_in_background, while_open

# The catalogue's entries as the window names them (nexus_ark/voice/catalogue.py has the English labels).
LABELS = {
    "whisper-tiny": N_("Whisper tiny (Japanese and English, fastest)"),
    "whisper-base": N_("Whisper base (Japanese and English)"),
    "whisper-small": N_("Whisper small (Japanese and English, most accurate here)"),
    "whisper-tiny.en": N_("Whisper tiny.en (English only)"),
    "whisper-base.en": N_("Whisper base.en (English only)"),
    "whisper-small.en": N_("Whisper small.en (English only)"),
    "en_GB-cori-medium": N_("Cori (British English, female; Piper)"),
}
LICENCES = {"Public domain (the voice's MODEL_CARD)": N_("Public domain (the voice's MODEL_CARD)")}
LANGUAGES = {"multi": N_("Japanese and English"), "en": N_("English only"), "ja": N_("Japanese")}


@dataclass(frozen=True)
class Row:
    """One voice or recogniser as the list shows it."""

    id: str
    label: str  # the catalogue's English label (LABELS translates the known ones)
    language: str  # "multi", "en" or "ja"
    size_bytes: int
    licence: str
    licence_url: str = ""
    installed: bool = False
    shipped: bool = False  # inside a package the app depends on: always there, never removed


@dataclass
class _Latest:
    """The download's newest progress, written by the worker and shown by the list's timer."""

    progress: Progress | None = None


class DownloadList(QWidget):
    """Rows from `read_rows` (run on a worker); `changed` after a download or removal ends."""

    changed = Signal()
    listed = Signal()  # the rows shown are new

    def __init__(self, app: NexusApp, read_rows: Callable[[], list[Row]], name: str) -> None:
        super().__init__()
        self.app = app
        self.read_rows = read_rows
        self.rows: list[Row] = []
        self._cancel: threading.Event | None = None
        self._latest = _Latest()
        self.setObjectName(name)
        self.tree = QTreeWidget()
        self.tree.setObjectName(f"{name}Tree")
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnCount(5)
        self.tree.itemSelectionChanged.connect(self._enable)
        self.download_button = QPushButton()
        self.download_button.setObjectName(f"{name}Download")
        self.download_button.clicked.connect(lambda: self.download())
        self.cancel_button = QPushButton()
        self.cancel_button.setObjectName(f"{name}Cancel")
        self.cancel_button.clicked.connect(lambda: self.cancel())
        self.remove_button = QPushButton()
        self.remove_button.setObjectName(f"{name}Remove")
        self.remove_button.clicked.connect(lambda: self.remove())
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.progress_label = QLabel()
        self.progress_label.setObjectName(f"{name}Progress")
        self.progress_label.setWordWrap(True)
        self.progress_label.setVisible(False)  # shown once there is something to say
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._show_progress)
        buttons = QHBoxLayout()
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        buttons.addStretch(1)
        buttons.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_label)
        self._enable()

    def retranslate(self) -> None:
        self.tree.setHeaderLabels([tr("Name"), tr("Languages"), tr("Size"), tr("Licence"), tr("State")])
        self.download_button.setText(tr("Download"))
        self.cancel_button.setText(tr("Cancel download"))
        self.remove_button.setText(tr("Remove"))
        self.show_rows(self.rows)

    # -- reading ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        run_in_background(self.read_rows, while_open(self, self.show_rows), while_open(self, self._error))

    def show_rows(self, rows: list[Row]) -> None:
        chosen = self.selected()
        self.rows = rows
        self.tree.clear()
        for row in rows:
            state = (
                tr("Shipped with the app")
                if row.shipped
                else tr("Installed")
                if row.installed
                else tr("Not downloaded")
            )
            item = QTreeWidgetItem(
                [
                    tr(LABELS[row.id]) if row.id in LABELS else row.label,
                    tr(LANGUAGES.get(row.language, row.language)),
                    human_bytes(row.size_bytes),
                    tr(LICENCES[row.licence]) if row.licence in LICENCES else row.licence,
                    state,
                ]
            )
            item.setToolTip(0, row.id)
            item.setToolTip(3, row.licence_url or row.licence)
            self.tree.addTopLevelItem(item)
            if chosen is not None and row.id == chosen.id:
                self.tree.setCurrentItem(item)
        self._fit()
        self._enable()
        self.listed.emit()

    def _fit(self) -> None:
        """The name takes what the other columns leave; the list is as tall as its rows (a few lines)."""
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        rows = max(2, self.tree.topLevelItemCount())
        row_height = self.tree.sizeHintForRow(0) if self.tree.topLevelItemCount() else 20
        frame = 2 * self.tree.frameWidth()
        self.tree.setFixedHeight(header.sizeHint().height() + rows * max(row_height, 18) + frame + 2)

    def selected(self) -> Row | None:
        item = self.tree.currentItem()
        index = self.tree.indexOfTopLevelItem(item) if item is not None else -1
        return self.rows[index] if 0 <= index < len(self.rows) else None

    def select(self, row_id: str) -> None:
        for index, row in enumerate(self.rows):
            item = self.tree.topLevelItem(index)
            if row.id == row_id and item is not None:
                self.tree.setCurrentItem(item)

    def _enable(self) -> None:
        row = self.selected()
        busy = self._cancel is not None
        self.download_button.setEnabled(not busy and row is not None and not row.installed)
        self.remove_button.setEnabled(not busy and row is not None and row.installed and not row.shipped)
        self.cancel_button.setVisible(busy)
        self.tree.setEnabled(not busy)

    # -- downloading and removing -------------------------------------------------------------------
    def download(self) -> None:
        row = self.selected()
        if row is None or row.installed or self._cancel is not None:
            return
        cancel = self._cancel = threading.Event()
        latest = self._latest = _Latest()
        voice = self.app.voice
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self._tell(tr("Starting…"))
        self._timer.start()
        self._enable()

        def fetch() -> str:
            def note(p: Progress) -> None:
                latest.progress = p

            voice.get_voice(row.id, progress=note, cancel=cancel)
            return row.id

        run_in_background(fetch, while_open(self, self._downloaded), while_open(self, self._not_downloaded))

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self._tell(tr("Stopping…"))

    def _show_progress(self) -> None:
        p = self._latest.progress
        if p is None:
            return
        if p.total:
            self.progress.setValue(int(1000 * p.done / p.total))
        self._tell(describe(p))

    def _finish(self) -> None:
        self._timer.stop()
        self._cancel = None
        self._enable()

    def _downloaded(self, row_id: str) -> None:
        self._finish()
        self.progress.setValue(1000)
        self._tell(tr("Downloaded and verified."))
        self._done()

    def _not_downloaded(self, message: str) -> None:
        cancelled = self._cancel is not None and self._cancel.is_set()
        arrived = self._latest.progress is not None and self._latest.progress.done > 0
        self._finish()
        self.progress.setVisible(False)
        if cancelled and arrived:
            self._tell(tr("Cancelled: what arrived is kept; Download goes on from there."))
        elif cancelled:
            self._tell(tr("Cancelled: nothing was downloaded."))
        else:
            self._error(message)
        self._done()

    def remove(self) -> None:
        row = self.selected()
        if row is None or not row.installed or row.shipped:
            return
        voice = self.app.voice
        self.remove_button.setEnabled(False)
        run_in_background(
            lambda: voice.remove_voice(row.id),
            while_open(self, lambda _folder: self._removed(row)),
            while_open(self, self._error),
        )

    def _removed(self, row: Row) -> None:
        self.progress.setVisible(False)
        self._tell(tr("Removed {name}.", name=row.id))
        self._done()

    def _done(self) -> None:
        self.refresh()
        self.changed.emit()

    def _tell(self, text: str) -> None:
        self.progress_label.setText(text)
        self.progress_label.setVisible(bool(text))

    def _error(self, message: str) -> None:
        lines = "<br>".join(escape(line) for line in message.splitlines() if line.strip())
        self._tell(theme.tinted(lines, "error"))
        self._enable()
