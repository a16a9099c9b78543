"""What the persona knows, shown to the person: search it, archive what is wrong, edit core memory,
the notepad and what it knows about people, manage the knowledge base, export everything.

Everything that touches the persona's files or memory (loading the persona's name, core memory, notepad,
documents and people, searches, edits, document imports and exports) runs in order on one background
thread; the window's own thread opens no connection and reads nothing, so the window opens at once and
shows what it knows as it arrives. That thread reads on a read-only connection of its own and hands every
change to the persona's owner (app.personas.change_memory: its runtime's queue, the one writer), so an edit
here never races a turn, a dream or an import for the file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
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
from ui.memory.entities_panel import EntitiesPanel
from ui.memory.knowledge_panel import KnowledgePanel
from ui.memory.memory_lane import MemoryLane
from ui.memory.table_labels import relabel, set_row
from ui.util import theme
from ui.util.i18n import LanguageTexts, tr
from ui.util.memory_kinds import memory_kind
from ui.util.tables import cell_text


class MemoryWindow(QDialog):
    """Search and core memory are the window's own tabs; people and things, and the knowledge base, are
    panels it owns (each given the window as its MemoryHost). Every text is set through self.texts: a
    language switch shows them all again in the new language."""

    def __init__(
        self, app: NexusApp, slug: str, parent: QWidget | None = None, name: str | None = None
    ) -> None:
        """name: the persona's name when the caller knows it (the title is then right at once); the slug
        stands in until the lane has read the persona. Reads nothing here: a persona that cannot be
        loaded or opened shows why in the status line."""
        super().__init__(parent)
        self.app = app
        self.slug = slug
        self.persona_name = name or slug
        self.texts = LanguageTexts()
        self.texts.follow(lambda: self.setWindowTitle(tr("Memory of {name}", name=self.persona_name)))
        self.resize(900, 620)
        self.lane = MemoryLane(app, slug, self._show_error)
        self._loading = True  # until the first read arrived or failed
        self._core_loaded = False  # core memory and notepad are editable (and saved) once they arrived

        self.status = QLabel()
        self.status.setObjectName("memoryStatus")
        self.status.setWordWrap(True)
        self.entities = EntitiesPanel(self)
        self.knowledge = KnowledgePanel(self)
        self.tabs = QTabWidget()
        for tab in (self._search_tab(), self._core_tab(), self.entities, self.knowledge):
            self.tabs.addTab(tab, "")
        self.texts.follow(self._name_tabs)
        export = QPushButton()
        self.texts.follow(lambda: export.setText(tr("Export…")))
        export.clicked.connect(self.export)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(export)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addLayout(bottom)
        self._load()
        self.entities.load()

    def _load(self) -> None:
        """The persona's name, core memory, notepad and documents, read on the lane."""
        app, slug = self.app, self.slug

        def read(store: MemoryStore) -> tuple[str, str, str, list[KnowledgeDocument]]:
            c = store.components
            name = app.personas.load(slug).settings.name
            return name, c.core_memory(), c.notepad(), store.knowledge.documents()

        def failed() -> None:  # the reason is in the status line; the editors stay read-only
            self._loading = False
            for edit in (self.core_edit, self.notepad_edit):
                edit.setPlaceholderText("")

        self.lane.read(read, self._loaded, failed)

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
        self.knowledge.show_documents(docs)

    def _name_tabs(self) -> None:
        titles = [tr("Search"), tr("Core memory and notepad"), tr("People and things"), tr("Knowledge")]
        for index, title in enumerate(titles):
            self.tabs.setTabText(index, title)

    def retranslate(self) -> None:
        self.texts.retranslate()

    def say(self, text: Callable[[], str]) -> None:
        """The status line; text() is asked again after a language switch (the latest message only)."""
        self.texts.follow(lambda: self.status.setText(text()), key="status")

    def _show_error(self, message: str) -> None:
        self.say(lambda: theme.tinted(message, "error"))

    # -- search -------------------------------------------------------------------------------------
    def _search_tab(self) -> QWidget:
        self.query = QLineEdit()
        self.query.setObjectName("memoryQuery")
        self.texts.follow(
            lambda: self.query.setPlaceholderText(tr("Search what {name} remembers…", name=self.persona_name))
        )
        self.query.returnPressed.connect(self.search)
        self.show_archived = QCheckBox()
        self.texts.follow(lambda: self.show_archived.setText(tr("Include archived")))
        search_button = QPushButton()
        self.texts.follow(lambda: search_button.setText(tr("Search")))
        search_button.clicked.connect(self.search)
        self.results = QTableWidget(0, 4)
        self.results.setObjectName("memoryResults")
        self.texts.follow(
            lambda: self.results.setHorizontalHeaderLabels([tr("Kind"), tr("When"), tr("Memory"), tr("Item")])
        )
        self.texts.follow(lambda: relabel(self.results, 0, memory_kind))
        self.results.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.results.setColumnHidden(3, True)
        self.results.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.setWordWrap(True)
        self.archive_button = QPushButton()
        self.texts.follow(lambda: self.archive_button.setText(tr("Archive selected")))
        self.texts.follow(
            lambda: self.archive_button.setToolTip(
                tr("Moves the memory aside: it is kept, but no longer recalled.")
            )
        )
        self.archive_button.clicked.connect(self.archive_selected)
        self.forget_button = QPushButton()
        self.texts.follow(lambda: self.forget_button.setText(tr("Delete selected…")))
        self.texts.follow(
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
                return store.archive.search(
                    text, app.models.embedder(), k=30, include_archived=include
                ), False
            except NexusArkError:  # the embedder is down: keywords still find what was said
                hits = store.archive.search(text, None, k=30, mode="fts", include_archived=include)
                return hits, True

        self.lane.read(search, self._show_hits)

    def _show_hits(self, found: tuple[list[SearchHit], bool]) -> None:
        hits, keywords_only = found
        self.results.setRowCount(len(hits))
        for row, hit in enumerate(hits):
            values = [
                memory_kind(hit.kind),
                hit.timestamp[:16].replace("T", " "),
                hit.text,
                str(hit.item_id),
            ]
            set_row(self.results, row, values, 0, hit.kind)
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
        ids = [int(cell_text(self.results, row, 3)) for row in rows]
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

        self.lane.change("archive memories", archive, archived)

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
        ids = [int(cell_text(self.results, row, 3)) for row in rows]
        for row in reversed(rows):
            self.results.removeRow(row)
        # Scrubbing the text from neighbouring memories scans the archive: not on the UI thread.
        self.lane.change(
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
            self.texts.follow(self._placeholder(edit))
        save = self.save_core_button = QPushButton()
        save.setEnabled(False)
        self.texts.follow(lambda: save.setText(tr("Save")))
        save.clicked.connect(self.save_core)
        core_label, notepad_label = QLabel(), QLabel()
        self.texts.follow(
            lambda: core_label.setText(
                tr(
                    "Core memory: who {name} is to you, and what must never be forgotten.",
                    name=self.persona_name,
                )
            )
        )
        self.texts.follow(lambda: notepad_label.setText(tr("Notepad: short-term notes.")))
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(core_label)
        layout.addWidget(self.core_edit, 2)
        layout.addWidget(notepad_label)
        layout.addWidget(self.notepad_edit, 1)
        layout.addWidget(save, 0, Qt.AlignmentFlag.AlignRight)
        return tab

    def _placeholder(self, edit: QPlainTextEdit) -> Callable[[], None]:
        return lambda: edit.setPlaceholderText(tr("Loading…") if self._loading else "")

    def save_core(self) -> None:
        if not self._core_loaded:
            return
        core, notepad = self.core_edit.toPlainText().strip(), self.notepad_edit.toPlainText().strip()

        def save(store: MemoryStore) -> None:  # re-indexes the core item: not on the UI thread
            store.components.set_core_memory(core)
            store.components.set_notepad(notepad)

        self.say(lambda: tr("Saving…"))
        self.lane.change("save core memory", save, lambda _: self.say(lambda: tr("Saved.")))

    # -- export -------------------------------------------------------------------------------------
    def export(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Export memory to a folder"))
        if folder:
            self.export_to(Path(folder))

    def export_to(self, folder: Path) -> None:
        name = self.persona_name
        self.lane.read(
            lambda store: export_memory(store, folder, name),
            lambda path: self.say(lambda: tr("Exported to {path}", path=str(path.parent))),
        )

    def done(self, result: int) -> None:
        """Close without waiting: an import in progress stops at its next cancel check (and resumes
        next time); the lane's connection is closed by the lane itself once its queue is idle."""
        self.knowledge.cancel_import.set()
        self.lane.close()
        super().done(result)
