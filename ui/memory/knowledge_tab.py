"""The Memory window's knowledge base tab: documents added (txt, md, pdf), their status, adding with progress
and removing. Mixed into MemoryWindow (ui/memory/memory_window.py); the work runs on the window's worker."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.memory.knowledge import KnowledgeDocument
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import from_stored
from ui.memory.table_labels import DATA_ROLE, relabel
from ui.util.i18n import N_, tr, tr_error

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


class KnowledgeTab:
    """The knowledge base tab's widgets and what they do; needs the window's worker and status line."""

    def _knowledge_tab(self) -> QWidget:
        self.documents = QTableWidget(0, 4)
        self.documents.setObjectName("documents")
        self.follow(
            lambda: self.documents.setHorizontalHeaderLabels(
                [tr("Document"), tr("Status"), tr("Chunks"), "id"]
            )
        )
        self.follow(lambda: relabel(self.documents, 1, _document_status))
        self.documents.setColumnHidden(3, True)
        self.documents.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.documents.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.documents.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.cancel_button = QPushButton()
        self.follow(lambda: self.cancel_button.setText(tr("Cancel")))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_import.set)
        add = QPushButton()
        self.follow(lambda: add.setText(tr("Add documents…")))
        add.clicked.connect(self.choose_documents)
        remove = QPushButton()
        self.follow(lambda: remove.setText(tr("Remove selected")))
        remove.clicked.connect(self.remove_documents)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(self.documents, 1)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        layout.addLayout(progress_row)
        layout.addLayout(buttons)
        return tab

    def refresh_documents(self, docs: list[KnowledgeDocument] | None = None) -> None:
        """Show docs; without them, the list is read on the worker first."""
        if docs is None:
            self._in_background(lambda store: store.knowledge.documents(), self.refresh_documents)
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
            for col, value in enumerate(values):
                self.documents.setItem(row, col, QTableWidgetItem(value))
            self.documents.item(row, 1).setData(DATA_ROLE, status)

    def choose_documents(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, tr("Add documents"), "", "Documents (*.txt *.md *.pdf)")
        if paths:
            self.add_documents([Path(p) for p in paths])

    def add_documents(self, paths: list[Path]) -> None:
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.cancel_button.setVisible(True)
        self.cancel_import.clear()
        self.say(lambda: tr("Reading documents…"))

        progress = self._progress  # kept alive by this task, whatever happens to the window
        app, slug, cancel = self.app, self.slug, self.cancel_import
        # Written by the persona's owner a batch per step of its queue: a turn waits one batch at most.
        self._on_worker(
            lambda: app.add_documents(slug, paths, progress=progress.changed.emit, cancel=cancel),
            self._documents_added,
            None,
        )

    @Slot(str, int, int)
    def _on_document_progress(self, title: str, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.say(lambda: tr("Indexing {title}: {done} of {total} parts", title=title, done=done, total=total))

    def _documents_added(self, docs: list[KnowledgeDocument]) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        if self.cancel_import.is_set():
            self.refresh_documents(docs)
            self.say(lambda: tr("Stopped. Adding the documents again continues where it stopped."))
            return
        self.refresh_documents(docs)
        failed = [d for d in docs if d.status == "error"]
        names = ", ".join(d.title for d in failed)
        self.say(
            lambda: (
                tr("Some documents cannot be read: {names}", names=names)
                if failed
                else tr("Documents are ready to be recalled.")
            )
        )

    def remove_documents(self) -> None:
        rows = sorted({i.row() for i in self.documents.selectedIndexes()})
        ids = [int(self.documents.item(r, 3).text()) for r in rows]
        if not ids:
            return

        def remove(store: MemoryStore) -> list[KnowledgeDocument]:
            for doc_id in ids:
                store.knowledge.remove(doc_id)
            return store.knowledge.documents()

        self._change("remove documents", remove, self.refresh_documents)
