"""Get a model: the catalogue's models with what fits this machine and what is installed; download one
(a GGUF from Hugging Face into the data folder, or an Ollama pull) with bytes, speed and time left, Cancel
(what arrived is kept: Download again goes on from there), the licence shown before the first byte and
agreed to where its terms ask, and Use to put the persona on it.

Opened from the model settings (Use hands the choice to their picker: `save_choice=False`), or from the
language notice with one entry chosen and started at once; then the persona is switched to the model as
soon as it is verified (`switch_when_done`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.providers.model_download import Progress, human_bytes
from nexus_ark.providers.model_store import ModelStatus
from ui.util import theme
from ui.util.i18n import N_, tr
from ui.util.tasks import run_in_background, while_open

COLUMNS = (N_("Model"), N_("Size"), N_("Languages"), N_("Licence"), N_("This computer"), N_("Installed"))


@dataclass
class _Latest:
    """The download's newest progress, written by the worker and read by the dialog's timer: the UI
    thread redraws ten times a second however fast the bytes come."""

    progress: Progress | None = None


class GetModelDialog(QDialog):
    def __init__(
        self,
        app: NexusApp,
        slug: str | None,
        parent: QWidget | None = None,
        *,
        name: str = "",
        choose: str = "",
        start: bool = False,
        switch_when_done: bool = False,
        save_choice: bool = True,
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.slug = slug
        self.persona_name = name or (slug or "")
        self.choose, self.start_at_once, self.switch_when_done = choose, start, switch_when_done
        self.save_choice = save_choice
        self.statuses: list[ModelStatus] = []
        self.chosen_spec = ""  # what Use put the persona on (the model settings pick it up)
        self.api_base = ""  # where an Ollama model chosen is served
        self.ollama_host = ""
        self._cancel: threading.Event | None = None
        self._latest = _Latest()
        self.setWindowTitle(tr("Get a model"))
        self.setMinimumSize(960, 440)

        self._build_table()
        self._build_details()
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addLayout(self._build_buttons(slug is not None))

        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._show_progress)
        self._enable()
        self.refresh()

    # -- building ---------------------------------------------------------------------------------
    def _build_table(self) -> None:
        """The models one can get, a row each: the name takes the width, a licence's name may be long."""
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("modelTable")
        self.table.setHorizontalHeaderLabels([tr(c) for c in COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)  # a licence's name can be long
        header.resizeSection(3, 170)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setWordWrap(False)
        self.table.itemSelectionChanged.connect(self._show_chosen)

    def _build_details(self) -> None:
        """The chosen model's details, and the download's progress with what it says."""
        self.details = QLabel(tr("Loading…"))
        self.details.setObjectName("modelDetails")
        self.details.setWordWrap(True)
        self.details.setOpenExternalLinks(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.progress = QProgressBar()
        self.progress.setObjectName("downloadProgress")
        self.progress.setVisible(False)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("downloadLabel")
        # An error and its hint run to several lines (offline: what works instead): wrapped at the dialog's
        # width, never cut at it.
        self.progress_label.setWordWrap(True)
        self.progress_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _build_buttons(self, for_a_persona: bool) -> QHBoxLayout:
        self.download_button = QPushButton(tr("Download"))
        self.download_button.setObjectName("downloadButton")
        self.download_button.clicked.connect(self.download)
        self.cancel_button = QPushButton(tr("Cancel download"))
        self.cancel_button.setObjectName("cancelDownloadButton")
        self.cancel_button.clicked.connect(self.cancel_download)
        self.cancel_button.setVisible(False)
        self.use_button = QPushButton(
            tr("Use for {name}", name=self.persona_name) if for_a_persona else tr("Use")
        )
        self.use_button.setObjectName("useButton")
        self.use_button.clicked.connect(self.use)
        self.use_button.setVisible(for_a_persona)
        close = QPushButton(tr("Close"))
        close.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.use_button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        return buttons

    # -- the list ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        slug = self.slug
        app = self.app

        def read() -> tuple[list[ModelStatus], str]:
            return [s for s in app.models.statuses(slug) if s.entry.obtainable], app.models.ollama_host(slug)

        run_in_background(read, while_open(self, self._listed), while_open(self, self._failed))

    def _listed(self, read: tuple[list[ModelStatus], str]) -> None:
        statuses, self.ollama_host = read
        current = self._chosen()
        chosen = current.entry.id if current is not None else self.choose
        self.statuses = statuses
        self.table.setRowCount(len(statuses))
        for row, status in enumerate(statuses):
            e = status.entry
            installed = {True: tr("installed"), False: "", None: "?"}[status.installed]
            if not status.installed and status.partial_bytes:
                installed = tr("{size} downloaded", size=human_bytes(status.partial_bytes))
            cells = (
                e.name if e.download else f"{e.name} (Ollama)",
                human_bytes(e.size_bytes()),
                ", ".join(e.languages),
                e.license,
                tr("fits") if status.fits else tr("needs more memory"),
                installed,
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                unknown = column == 5 and status.installed is None
                item.setToolTip(tr("Ollama not reachable") if unknown else text)
                self.table.setItem(row, column, item)
            if e.id == chosen:
                self.table.selectRow(row)
        if self._chosen() is None and statuses:
            self.table.selectRow(0)
        self._show_chosen()
        if self.start_at_once:
            self.start_at_once = False
            picked = self._chosen()
            if picked is not None and picked.installed:
                self._downloaded(picked.spec)
            else:
                self.download()

    def _failed(self, message: str) -> None:
        self.details.setText(theme.tinted(message, "error"))

    def _chosen(self) -> ModelStatus | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self.statuses[rows[0].row()] if rows and rows[0].row() < len(self.statuses) else None

    def _show_chosen(self) -> None:
        status = self._chosen()
        self._enable()
        if status is None:
            return
        e = status.entry
        licence = f"<a href='{e.license_url}'>{e.license}</a>" if e.license_url else e.license
        title = f"<b>{e.name}</b>" + (f" — {e.note}" if e.note else "")
        lines = [title, tr("Licence: {licence}", licence=licence)]
        if e.kind == "ollama":
            lines.append(tr("Pulled by your Ollama; Ollama must be running."))
        self.details.setText("<br>".join(lines))
        if self._cancel is None:
            resume = not status.installed and status.partial_bytes
            self.download_button.setText(tr("Resume download") if resume else tr("Download"))

    def _enable(self) -> None:
        status = self._chosen()
        busy = self._cancel is not None
        self.download_button.setEnabled(not busy and status is not None and status.installed is not True)
        self.cancel_button.setVisible(busy)
        self.use_button.setEnabled(not busy and status is not None and bool(status.installed))
        self.table.setEnabled(not busy)

    # -- downloading ------------------------------------------------------------------------------
    def download(self) -> None:
        status = self._chosen()
        if status is None or self._cancel is not None:
            return
        entry = status.entry
        if entry.accept_license and not self._agreed(status):
            return
        cancel = self._cancel = threading.Event()
        latest = self._latest = _Latest()
        self.progress.setVisible(True)
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress_label.setText(tr("Starting…"))
        self._timer.start()
        self._enable()
        app, slug = self.app, self.slug

        def fetch() -> str:
            def note(p: Progress) -> None:
                latest.progress = p

            return app.models.get(entry, slug=slug, accepted_license=True, progress=note, cancel=cancel)

        run_in_background(fetch, while_open(self, self._downloaded), while_open(self, self._not_downloaded))

    def _agreed(self, status: ModelStatus) -> bool:
        e = status.entry
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(tr("Licence"))
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(
            tr(
                "{name} comes under the {license}. Its terms ask you to agree to them before downloading:"
                " <a href='{url}'>{url}</a>",
                name=e.name,
                license=e.license,
                url=e.license_url,
            )
        )
        agree = box.addButton(tr("I agree, download"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(tr("Cancel"), QMessageBox.ButtonRole.RejectRole)
        box.exec()
        return box.clickedButton() is agree

    def cancel_download(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self.progress_label.setText(tr("Stopping…"))

    def _show_progress(self) -> None:
        p = self._latest.progress
        if p is None:
            return
        if p.total:
            self.progress.setValue(int(1000 * p.done / p.total))
        self.progress_label.setText(describe(p))

    def _finish(self) -> None:
        self._timer.stop()
        self._cancel = None
        self._enable()

    def _downloaded(self, spec: str) -> None:
        self._finish()
        self.progress.setValue(1000)
        self.progress_label.setText(tr("Downloaded and verified."))
        self.chosen_spec = spec
        self.refresh()
        if self.switch_when_done and self.slug:
            self._switch(spec)

    def _not_downloaded(self, message: str) -> None:
        cancelled = self._cancel is not None and self._cancel.is_set()
        arrived = self._latest.progress is not None and self._latest.progress.done > 0
        self._finish()
        if cancelled and arrived:
            self.progress_label.setText(tr("Cancelled: what arrived is kept; Resume goes on from there."))
        elif cancelled:
            self.progress_label.setText(tr("Cancelled: nothing was downloaded."))
        else:  # the error, then its hint on a line of its own
            lines = "<br>".join(escape(line) for line in message.splitlines() if line.strip())
            self.progress_label.setText(theme.tinted(lines, "error"))
        self.refresh()

    # -- using it ---------------------------------------------------------------------------------
    def use(self) -> None:
        status = self._chosen()
        if status is None or not status.installed or self.slug is None:
            return
        self._switch(status.spec)

    def _switch(self, spec: str) -> None:
        slug = self.slug
        assert slug is not None
        self.chosen_spec = spec
        status = self._chosen()
        if status is not None and status.entry.kind == "ollama":
            self.api_base = self.ollama_host
        if not self.save_choice:  # the model settings take it into their picker; their Save writes it
            self.accept()
            return
        self.use_button.setEnabled(False)
        run_in_background(
            lambda: self.app.personas.use_model(slug, spec),
            while_open(self, lambda _: self.accept()),
            self._failed,
        )

    def reject(self) -> None:
        """Closing stops a download (what arrived is kept, and goes on next time)."""
        if self._cancel is not None:
            self._cancel.set()
        super().reject()


def describe(p: Progress) -> str:
    """“312.0 MB of 1.1 GB · 8.2 MB/s · 2 min left”, in the person's language."""
    if p.stage == "verifying":
        return tr("Verifying {size}…", size=human_bytes(p.total))
    parts = [tr("{done} of {total}", done=human_bytes(p.done), total=human_bytes(p.total))]
    if p.bytes_per_s > 0:
        parts.append(tr("{speed}/s", speed=human_bytes(p.bytes_per_s)))
    left = p.seconds_left
    if left is not None:
        minutes = int(left // 60)
        if minutes:
            parts.append(tr("{minutes} min left", minutes=minutes))
        else:
            parts.append(tr("{seconds} s left", seconds=int(left) + 1))
    return " · ".join(parts)
