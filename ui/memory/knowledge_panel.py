"""The Memory window's knowledge base tab: documents added (txt, md, pdf), their status, adding with progress
and removing. A panel the window owns (ui/memory/memory_window.py); its work runs on the window's lane
(ui/memory/memory_lane.py)."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.memory.knowledge import KnowledgeDocument
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import from_stored
from ui.memory.memory_lane import MemoryHost
from ui.memory.table_labels import relabel, set_row
from ui.util.i18n import N_, tr, tr_error
from ui.util.tables import cell_text

DOCUMENT_STATUS = {
    "done": N_("ready"),
    "indexing": N_("indexing"),
    "pending": N_("waiting"),
    "error": N_("cannot be read"),
}


def _document_status(status: tuple[str, str | None, str | None]) -> str:
    """A document's state in the person's language, with the reason it cannot be read (translated when its
    words were stored with it; a library's or the OS's own words inside stay as they said them)."""
    state, error, error_notice = status
    label = tr(DOCUMENT_STATUS[state]) if state in DOCUMENT_STATUS else state
    problem = from_stored(error_notice) if error_notice else error
    return f"{label}: {tr_error(problem)}" if problem else label


class _Progress(QObject):
    """Progress from the lane, queued to the UI thread. Not owned by the panel: work told to stop may
    still report once after the window is gone, and it must find a live object to emit on."""

    changed = Signal(str, int, int)


class KnowledgePanel(QWidget):
    """The documents table, the import's progress and its Cancel, Add and Remove."""

    def __init__(self, host: MemoryHost) -> None:
        super().__init__()
        self._host = host
        self.cancel_import = threading.Event()
        self._progress = _Progress()
        self.document_progress = self._progress.changed
        self.document_progress.connect(self._on_document_progress)
        self.documents = self._documents_table()
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.cancel_button = QPushButton()
        host.texts.follow(lambda: self.cancel_button.setText(tr("Cancel")))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_import.set)
        layout = QVBoxLayout(self)
        layout.addWidget(self.documents, 1)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        layout.addLayout(progress_row)
        layout.addLayout(self._buttons())

    def _documents_table(self) -> QTableWidget:
        table = QTableWidget(0, 4)
        table.setObjectName("documents")
        follow = self._host.texts.follow
        follow(lambda: table.setHorizontalHeaderLabels([tr("Document"), tr("Status"), tr("Chunks"), "id"]))
        follow(lambda: relabel(table, 1, _document_status))
        table.setColumnHidden(3, True)
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        return table

    def _buttons(self) -> QHBoxLayout:
        add = QPushButton()
        self._host.texts.follow(lambda: add.setText(tr("Add documents…")))
        add.clicked.connect(self.choose_documents)
        remove = QPushButton()
        self._host.texts.follow(lambda: remove.setText(tr("Remove selected")))
        remove.clicked.connect(self.remove_documents)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        return buttons

    def show_documents(self, docs: list[KnowledgeDocument]) -> None:
        """Show docs, and resume an import that a cancel, a crash or a closed window stopped (unless one
        already runs)."""
        self.refresh_documents(docs)
        if any(d.status in ("pending", "indexing") for d in docs) and self.progress.isHidden():
            self.add_documents([])

    def refresh_documents(self, docs: list[KnowledgeDocument] | None = None) -> None:
        """Show docs; without them, the list is read on the lane first."""
        if docs is None:
            self._host.lane.read(lambda store: store.knowledge.documents(), self.refresh_documents)
            return
        self.documents.setRowCount(len(docs))
        for row, doc in enumerate(docs):
            status = (doc.status, doc.error, doc.error_notice)  # plain strings: Qt keeps them as they are
            values = [
                doc.title,
                _document_status(status),
                f"{doc.chunks_done}/{doc.chunks_total}",
                str(doc.id),
            ]
            set_row(self.documents, row, values, 1, status)

    def choose_documents(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, tr("Add documents"), "", "Documents (*.txt *.md *.pdf)")
        if paths:
            self.add_documents([Path(p) for p in paths])

    def add_documents(self, paths: list[Path]) -> None:
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.cancel_button.setVisible(True)
        self.cancel_import.clear()
        self._host.say(lambda: tr("Reading documents…"))

        progress = self._progress  # kept alive by this task, whatever happens to the window
        lane, cancel = self._host.lane, self.cancel_import
        app, slug = lane.app, lane.slug
        # Written by the persona's owner a batch per step of its queue: a turn waits one batch at most.
        lane.run(
            lambda: app.admin.add_documents(slug, paths, progress=progress.changed.emit, cancel=cancel),
            self._documents_added,
        )

    @Slot(str, int, int)
    def _on_document_progress(self, title: str, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self._host.say(
            lambda: tr("Indexing {title}: {done} of {total} parts", title=title, done=done, total=total)
        )

    def _documents_added(self, docs: list[KnowledgeDocument]) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.refresh_documents(docs)
        if self.cancel_import.is_set():
            self._host.say(lambda: tr("Stopped. Adding the documents again continues where it stopped."))
            return
        failed = [d for d in docs if d.status == "error"]
        names = ", ".join(d.title for d in failed)
        self._host.say(
            lambda: (
                tr("Some documents cannot be read: {names}", names=names)
                if failed
                else tr("Documents are ready to be recalled.")
            )
        )

    def remove_documents(self) -> None:
        rows = sorted({i.row() for i in self.documents.selectedIndexes()})
        ids = [int(cell_text(self.documents, r, 3)) for r in rows]
        if not ids:
            return

        def remove(store: MemoryStore) -> list[KnowledgeDocument]:
            for doc_id in ids:
                store.knowledge.remove(doc_id)
            return store.knowledge.documents()

        self._host.lane.change("remove documents", remove, self.refresh_documents)
