"""What the persona knows, shown to the person: search it, archive what is wrong, edit core memory,
the notepad and what it knows about people, manage the knowledge base, export everything.

Everything that touches the persona's files or memory (loading the persona's name, core memory, notepad,
documents and people, searches, edits, document imports and exports) runs in order on one background
thread; the window's own thread opens no connection and reads nothing, so the window opens at once and
shows what it knows as it arrives. That thread reads on a read-only connection of its own and hands every
change to the persona's owner (NexusApp.change_memory: its runtime's queue, the one writer), so an edit
here never races a turn, a dream or an import for the file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.archive import SearchHit
from nexus_ark.memory.knowledge import KnowledgeDocument
from nexus_ark.memory.portability import export_memory
from nexus_ark.memory.store import MemoryStore
from ui.memory.entities_tab import EntitiesTab
from ui.memory.knowledge_tab import KnowledgeTab
from ui.memory.table_labels import DATA_ROLE, relabel
from ui.util import theme
from ui.util.i18n import N_, FollowsLanguage, tr
from ui.util.tasks import SerialWorker

KIND_LABELS = {
    "message": N_("conversation"),
    "episode": N_("episode"),
    "entity": N_("person or thing"),
    "insight": N_("dream diary"),
    "goal": N_("goal"),
    "core": N_("core memory"),
    "kb_chunk": N_("document"),
}


class _Progress(QObject):
    """Progress from the worker thread, queued to the UI thread. Not owned by the window: work told to stop
    may still report once after the window is gone, and it must find a live object to emit on."""

    changed = Signal(str, int, int)


class _WorkerStore:
    store: MemoryStore | None = None

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


class MemoryWindow(EntitiesTab, KnowledgeTab, QDialog, FollowsLanguage):
    """Every text is set through follow(): a language switch shows them all again in the new language."""

    def __init__(self, app: NexusApp, slug: str, parent=None, name: str | None = None) -> None:
        """name: the persona's name when the caller knows it (the title is then right at once); the slug
        stands in until the worker has read the persona. Reads nothing here: a persona that cannot be
        loaded or opened shows why in the status line."""
        super().__init__(parent)
        self.app = app
        self.slug = slug
        self.persona_name = name or slug
        self.follow(lambda: self.setWindowTitle(tr("Memory of {name}", name=self.persona_name)))
        self.resize(900, 620)
        # The worker's own connection, used only on its single thread; kept in a plain holder so the
        # closing task needs no reference to this window (a worker must never drop a window's last one).
        self._worker = _WorkerStore()
        self.worker = SerialWorker(f"memory-{slug}")
        self.cancel_import = threading.Event()
        self._progress = _Progress()
        self.document_progress = self._progress.changed
        self.document_progress.connect(self._on_document_progress)
        self._closing = False
        self._loading = True  # until the first read arrived or failed
        self._core_loaded = False  # core memory and notepad are editable (and saved) once they arrived
        self._entity_request = 0  # the selection whose entity is being read; older answers are dropped

        self.status = QLabel()
        self.status.setObjectName("memoryStatus")
        self.status.setWordWrap(True)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._search_tab(), "")
        self.tabs.addTab(self._core_tab(), "")
        self.tabs.addTab(self._entities_tab(), "")
        self.tabs.addTab(self._knowledge_tab(), "")
        self.follow(self._name_tabs)
        export = QPushButton()
        self.follow(lambda: export.setText(tr("Export…")))
        export.clicked.connect(self.export)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(export)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addLayout(bottom)
        self._load()
        self._load_entities()

    def _load(self) -> None:
        """The persona's name, core memory, notepad and documents, read on the worker."""
        app, slug = self.app, self.slug

        def read(store: MemoryStore) -> tuple[str, str, str, list[KnowledgeDocument]]:
            c = store.components
            name = app.personas.load(slug).settings.name
            return name, c.core_memory(), c.notepad(), store.knowledge.documents()

        def failed() -> None:  # the reason is in the status line; the editors stay read-only
            self._loading = False
            for edit in (self.core_edit, self.notepad_edit):
                edit.setPlaceholderText("")

        self._in_background(read, self._loaded, failed)

    def _loaded(self, loaded: tuple[str, str, str, list[KnowledgeDocument]]) -> None:
        name, core, notepad, docs = loaded
        self.persona_name = name
        self.core_edit.setPlainText(core)
        self.notepad_edit.setPlainText(notepad)
        for edit in (self.core_edit, self.notepad_edit):
            edit.setReadOnly(False)
        self.save_core_button.setEnabled(True)
        self._loading, self._core_loaded = False, True
        self.retranslate()  # the texts that name the persona, and the editors without "Loading…"
        self.refresh_documents(docs)
        # An import stopped by a cancel, a crash or a closed window resumes (unless one already runs).
        if any(d.status in ("pending", "indexing") for d in docs) and self.progress.isHidden():
            self.add_documents([])

    def _name_tabs(self) -> None:
        titles = [tr("Search"), tr("Core memory and notepad"), tr("People and things"), tr("Knowledge")]
        for index, title in enumerate(titles):
            self.tabs.setTabText(index, title)

    def say(self, text: Callable[[], str]) -> None:
        """The status line; text() is asked again after a language switch (the latest message only)."""
        self.follow(lambda: self.status.setText(text()), key="status")

    # -- background work: reads on this window's read-only connection, changes through the owner ------
    def _in_background(self, fn, on_done, on_error: Callable[[], None] | None = None) -> None:
        """fn(store) on the worker with the read-only connection, then on_done(result) on the UI thread; a
        failure is shown in the status line (translated by the worker), then on_error() runs. Opening the
        connection is the first read's work: a persona that cannot be opened fails each read with why."""

        def task():
            if self._worker.store is None:
                self._worker.store = self.app.open_memory(self.slug)
            return fn(self._worker.store)

        self._on_worker(task, on_done, on_error)

    def _change(self, name: str, fn, on_done, on_error: Callable[[], None] | None = None) -> None:
        """fn(store) run by the persona's owner on its queue (the worker waits for it, in order with this
        window's reads), then on_done(result) on the UI thread."""
        app, slug = self.app, self.slug
        self._on_worker(lambda: app.change_memory(slug, name, fn), on_done, on_error)

    def _on_worker(self, task, on_done, on_error: Callable[[], None] | None) -> None:
        def failed(message: str) -> None:
            self._show_error(message)
            if on_error is not None:
                on_error()

        # Results of work that outlived the window have nobody to show them to (the window is closing).
        self.worker.run(
            task,
            lambda value: None if self._closing else on_done(value),
            lambda message: None if self._closing else failed(message),
        )

    def _show_error(self, message: str) -> None:
        self.say(lambda: theme.tinted(message, "error"))

    # -- search -------------------------------------------------------------------------------------
    def _search_tab(self) -> QWidget:
        self.query = QLineEdit()
        self.query.setObjectName("memoryQuery")
        self.follow(
            lambda: self.query.setPlaceholderText(tr("Search what {name} remembers…", name=self.persona_name))
        )
        self.query.returnPressed.connect(self.search)
        self.show_archived = QCheckBox()
        self.follow(lambda: self.show_archived.setText(tr("Include archived")))
        search_button = QPushButton()
        self.follow(lambda: search_button.setText(tr("Search")))
        search_button.clicked.connect(self.search)
        self.results = QTableWidget(0, 4)
        self.results.setObjectName("memoryResults")
        self.follow(
            lambda: self.results.setHorizontalHeaderLabels([tr("Kind"), tr("When"), tr("Memory"), tr("Item")])
        )
        self.follow(lambda: relabel(self.results, 0, lambda kind: tr(KIND_LABELS.get(kind, kind))))
        self.results.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.results.setColumnHidden(3, True)
        self.results.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.setWordWrap(True)
        self.archive_button = QPushButton()
        self.follow(lambda: self.archive_button.setText(tr("Archive selected")))
        self.follow(
            lambda: self.archive_button.setToolTip(
                tr("Moves the memory aside: it is kept, but no longer recalled.")
            )
        )
        self.archive_button.clicked.connect(self.archive_selected)
        self.forget_button = QPushButton()
        self.follow(lambda: self.forget_button.setText(tr("Delete selected…")))
        self.follow(
            lambda: self.forget_button.setToolTip(
                tr("Deletes the memory for good, with the message it came from.")
            )
        )
        self.forget_button.clicked.connect(self.forget_selected)
        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.show_archived)
        row.addWidget(search_button)
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addLayout(row)
        layout.addWidget(self.results, 1)
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.forget_button)
        actions.addWidget(self.archive_button)
        layout.addLayout(actions)
        return tab

    def search(self) -> None:
        text = self.query.text().strip()
        if not text:
            return
        include = self.show_archived.isChecked()
        self.say(lambda: tr("Searching…"))
        app = self.app

        def search(store: MemoryStore) -> tuple[list[SearchHit], bool]:
            try:
                return store.archive.search(text, app.embedder(), k=30, include_archived=include), False
            except NexusArkError:  # the embedder is down: keywords still find what was said
                hits = store.archive.search(text, None, k=30, mode="fts", include_archived=include)
                return hits, True

        self._in_background(search, self._show_hits)

    def _show_hits(self, found: tuple[list[SearchHit], bool]) -> None:
        hits, keywords_only = found
        self.results.setRowCount(len(hits))
        for row, hit in enumerate(hits):
            values = [
                tr(KIND_LABELS.get(hit.kind, hit.kind)),
                hit.timestamp[:16].replace("T", " "),
                hit.text,
                str(hit.item_id),
            ]
            for col, value in enumerate(values):
                self.results.setItem(row, col, QTableWidgetItem(value))
            self.results.item(row, 0).setData(DATA_ROLE, hit.kind)
        self.results.resizeRowsToContents()
        count = len(hits)
        self.say(
            lambda: (
                tr(
                    "{count} memories found (by keywords only: the embedding model is unavailable).",
                    count=count,
                )
                if keywords_only
                else tr("{count} memories found.", count=count)
            )
        )

    def archive_selected(self) -> None:
        rows = sorted({i.row() for i in self.results.selectedIndexes()})
        ids = [int(self.results.item(row, 3).text()) for row in rows]
        if not ids:
            return
        for row in reversed(rows):
            self.results.removeRow(row)

        def archive(store: MemoryStore) -> tuple[int, int]:
            done = protected = 0
            for item_id in ids:
                item = store.archive.get(item_id)
                if item is None or item["kind"] == "core":
                    protected += 1
                    continue
                store.archive.archive(item_id, "archived by the person in the memory window")
                done += 1
            return done, protected

        def archived(counts: tuple[int, int]) -> None:
            done, protected = counts
            self.say(
                lambda: (
                    tr("Archived {count}; core memory is edited on its own tab.", count=done)
                    if protected
                    else tr("Archived {count}.", count=done)
                )
            )

        self._change("archive memories", archive, archived)

    def forget_selected(self, ask: bool = True) -> None:
        rows = sorted({i.row() for i in self.results.selectedIndexes()})
        if not rows:
            return
        if ask:
            answer = QMessageBox.question(
                self,
                tr("Delete memories"),
                tr("Delete {count} memories for good? This cannot be undone.", count=len(rows)),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        ids = [int(self.results.item(row, 3).text()) for row in rows]
        for row in reversed(rows):
            self.results.removeRow(row)
        # Scrubbing the text from neighbouring memories scans the archive: not on the UI thread.
        self._change(
            "forget memories",
            lambda store: store.forget(ids),
            lambda deleted: self.say(lambda: tr("Deleted {count}.", count=deleted)),
        )

    # -- core memory and notepad -------------------------------------------------------------------
    def _core_tab(self) -> QWidget:
        # Read-only, and Save disabled, until the text has arrived: nothing typed is overwritten by the
        # load, and nothing empty is saved over memory that was never shown (nor when it cannot be read).
        self.core_edit = QPlainTextEdit()
        self.core_edit.setObjectName("coreMemory")
        self.notepad_edit = QPlainTextEdit()
        self.notepad_edit.setObjectName("notepad")
        for edit in (self.core_edit, self.notepad_edit):
            edit.setReadOnly(True)
            self.follow(lambda edit=edit: edit.setPlaceholderText(tr("Loading…") if self._loading else ""))
        save = self.save_core_button = QPushButton()
        save.setEnabled(False)
        self.follow(lambda: save.setText(tr("Save")))
        save.clicked.connect(self.save_core)
        core_label, notepad_label = QLabel(), QLabel()
        self.follow(
            lambda: core_label.setText(
                tr(
                    "Core memory: who {name} is to you, and what must never be forgotten.",
                    name=self.persona_name,
                )
            )
        )
        self.follow(lambda: notepad_label.setText(tr("Notepad: short-term notes.")))
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(core_label)
        layout.addWidget(self.core_edit, 2)
        layout.addWidget(notepad_label)
        layout.addWidget(self.notepad_edit, 1)
        layout.addWidget(save, 0, Qt.AlignmentFlag.AlignRight)
        return tab

    def save_core(self) -> None:
        if not self._core_loaded:
            return
        core, notepad = self.core_edit.toPlainText().strip(), self.notepad_edit.toPlainText().strip()

        def save(store: MemoryStore) -> None:  # re-indexes the core item: not on the UI thread
            store.components.set_core_memory(core)
            store.components.set_notepad(notepad)

        self.say(lambda: tr("Saving…"))
        self._change("save core memory", save, lambda _: self.say(lambda: tr("Saved.")))

    # -- export -------------------------------------------------------------------------------------
    def export(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Export memory to a folder"))
        if folder:
            self.export_to(Path(folder))

    def export_to(self, folder: Path) -> None:
        name = self.persona_name
        self._in_background(
            lambda store: export_memory(store, folder, name),
            lambda path: self.say(lambda: tr("Exported to {path}", path=str(path.parent))),
        )

    def done(self, result: int) -> None:
        """Close without waiting: an import in progress stops at its next cancel check (and resumes
        next time); the worker's connection is closed by the worker itself once its queue is idle."""
        self.cancel_import.set()
        self._closing = True

        self.worker.close(self._worker.close)
        super().done(result)
