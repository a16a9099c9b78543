"""The memory window: a person sees, searches, archives, edits and exports what the persona knows."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from nexus_ark.app import NexusApp
from nexus_ark.memory.components import Components
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.knowledge import KnowledgeBase
from nexus_ark.providers.embedders import default_embedder
from tests.pdf_maker import write_pdf
from ui.memory.memory_window import MemoryWindow
from ui.util import i18n

pytestmark = pytest.mark.integration


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    store = app.personas.memory("aria")
    turns = []
    for text, at in (
        ("My cat Luna hates the vacuum cleaner.", "2026-02-01T10:00:00"),
        ("I moved to Osaka last spring.", "2026-02-01T10:01:00"),
    ):
        message_id = store.messages.add(speaker="Mika", role="user", content=text, created_at=at)
        turns.append(Turn(speaker="Mika", text=text, created_at=at, source_id=f"msg:{message_id}"))
    index_turns(store.archive, turns)
    store.archive.embed_pending(default_embedder())
    yield app
    app.close()


def _edit_core_and_luna(
    qtbot, window: MemoryWindow, core: str, luna: str, notepad: str | None = None
) -> None:
    """Once loaded (editable): save core memory (and the notepad), then an entity Luna, as a person would."""
    qtbot.waitUntil(lambda: not window.core_edit.isReadOnly(), timeout=30_000)
    window.core_edit.setPlainText(core)
    if notepad is not None:
        window.notepad_edit.setPlainText(notepad)
    window.save_core()
    qtbot.waitUntil(lambda: window.status.text() == "Saved.", timeout=30_000)
    window.entities.entity_name.setText("Luna")
    window.entities.entity_text.setPlainText(luna)
    window.entities.save_entity()
    qtbot.waitUntil(lambda: window.entities.entity_list.count() == 1, timeout=30_000)


def test_search_archive_edit_and_export(qtbot, core: NexusApp, tmp_path: Path) -> None:
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    window.query.setText("Where do I live?")
    qtbot.keyClick(window.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "found" in window.status.text(), timeout=30_000)
    assert window.results.rowCount() == 2
    assert "Osaka" in window.results.item(0, 2).text()
    assert window.results.item(0, 0).text() == "conversation"

    window.results.selectRow(0)
    window.archive_button.click()
    qtbot.waitUntil(lambda: "Archived 1" in window.status.text(), timeout=30_000)
    assert window.results.rowCount() == 1
    window.search()
    qtbot.waitUntil(
        lambda: window.results.rowCount() == 1 and "found" in window.status.text(), timeout=30_000
    )
    assert "Osaka" not in window.results.item(0, 2).text()

    window.results.selectRow(0)  # "My cat Luna hates the vacuum cleaner."
    window.forget_selected(ask=False)
    qtbot.waitUntil(lambda: "Deleted 1" in window.status.text(), timeout=30_000)
    assert window.results.rowCount() == 0
    # The message it came from is gone too; the other one (archived, not deleted) is kept.
    check = core.personas.open_memory("aria", read_only=True)
    try:
        assert [m.content for m in check.messages.recent()] == ["I moved to Osaka last spring."]
        assert check.archive.search("vacuum cleaner", None, mode="fts", include_archived=True) == []
    finally:
        check.close()

    _edit_core_and_luna(
        qtbot,
        window,
        "I am Aria. Mika lives in Osaka.",
        "Mika's cat. Afraid of the vacuum cleaner.",
        notepad="Ask about the move.",
    )
    assert [
        window.entities.entity_list.item(i).text() for i in range(window.entities.entity_list.count())
    ] == ["Luna"]

    window.export_to(tmp_path / "export")
    qtbot.waitUntil(lambda: "Exported" in window.status.text(), timeout=30_000)
    text = (tmp_path / "export" / "memory.md").read_text(encoding="utf-8")
    assert "Mika lives in Osaka" in text and "Ask about the move." in text
    window.done(0)

    check = core.personas.open_memory("aria")
    try:
        assert check.components.core_memory() == "I am Aria. Mika lives in Osaka."
        assert check.components.entity("luna").text.startswith("Mika's cat")
    finally:
        check.close()


def test_documents_are_added_in_the_background_and_removed(qtbot, core: NexusApp, tmp_path: Path) -> None:
    good = tmp_path / "recipes.md"
    good.write_text("# Recipes\nMika's miso soup uses white miso and tofu.", encoding="utf-8")
    bad = tmp_path / "scan.pdf"
    bad.write_bytes(b"%PDF-1.4 broken")
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    window.knowledge.add_documents([good, bad])
    assert not window.knowledge.progress.isHidden()
    qtbot.waitUntil(window.knowledge.progress.isHidden, timeout=60_000)
    statuses = {
        window.knowledge.documents.item(r, 0).text(): window.knowledge.documents.item(r, 1).text()
        for r in range(window.knowledge.documents.rowCount())
    }
    assert statuses["recipes"] == "ready" and statuses["scan"].startswith("cannot be read")
    assert "scan" in window.status.text()
    window.knowledge.documents.selectRow(0)
    window.knowledge.remove_documents()
    qtbot.waitUntil(lambda: window.knowledge.documents.rowCount() == 1, timeout=30_000)
    window.done(0)


@pytest.mark.slow
def test_document_import_shows_progress_can_be_cancelled_and_resumes(
    qtbot, core: NexusApp, tmp_path: Path
) -> None:
    long_doc = tmp_path / "almanac.txt"
    long_doc.write_text(
        "\n\n".join(
            f"Entry {i}: the tide tables of the northern harbour, volume {i}." * 4 for i in range(300)
        ),
        encoding="utf-8",
    )
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    seen: list[int] = []
    window.knowledge.document_progress.connect(lambda title, done, total: seen.append(done))
    window.knowledge.document_progress.connect(
        lambda title, done, total: window.knowledge.cancel_import.set() if done >= 32 else None
    )
    window.knowledge.add_documents([long_doc])
    qtbot.waitUntil(window.knowledge.progress.isHidden, timeout=60_000)
    assert seen and "Stopped" in window.status.text()
    doc = core.personas.open_memory("aria")
    try:
        state = doc.knowledge.documents()[0]
        assert state.status == "indexing" and 0 < state.chunks_done < state.chunks_total
    finally:
        doc.close()
    window.done(0)

    reopened = MemoryWindow(core, "aria")  # resumes by itself
    qtbot.addWidget(reopened)
    qtbot.waitUntil(  # the list arrives from the worker, then the import resumes
        lambda: (
            reopened.knowledge.documents.rowCount() == 1
            and "ready" in reopened.knowledge.documents.item(0, 1).text()
        ),
        timeout=120_000,
    )
    reopened.done(0)


def test_opening_the_window_while_a_reply_streams_leaves_the_reply_streaming(qtbot, core: NexusApp) -> None:
    owner = core.personas.memory("aria")
    reply = owner.messages.add(speaker="aria", role="assistant", content="Once upon", status="streaming")
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    window.query.setText("cat")
    window.search()
    qtbot.waitUntil(lambda: "found" in window.status.text(), timeout=30_000)
    window.done(0)
    window.lane.wait()
    assert owner.messages.get(reply).status == "streaming"  # still being written: not "interrupted"


@pytest.mark.slow
def test_closing_during_an_import_returns_at_once_and_the_import_resumes(
    qtbot, core: NexusApp, tmp_path: Path
) -> None:
    long_doc = tmp_path / "almanac.txt"
    long_doc.write_text(
        "\n\n".join(f"Entry {i}: the lighthouse keeper's log for night {i}." * 4 for i in range(400)),
        encoding="utf-8",
    )
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    started: list[int] = []
    window.knowledge.document_progress.connect(lambda title, done, total: started.append(done))
    window.knowledge.add_documents([long_doc])
    qtbot.waitUntil(lambda: bool(started), timeout=60_000)
    window.done(0)  # must not wait for the import: it is told to stop and closes its own connection
    assert window.knowledge.cancel_import.is_set() and not window.lane.idle
    window.lane.wait()
    store = window.lane.store
    assert store is not None
    with pytest.raises(Exception, match="closed"):
        store.db.execute("select 1")
    doc = core.personas.memory("aria").knowledge.documents()[0]
    assert doc.status == "indexing" and doc.chunks_done < doc.chunks_total


def test_a_lorebook_of_thousands_is_listed_from_the_worker(qtbot, core: NexusApp, monkeypatch) -> None:
    """A card's lorebook makes thousands of people and things: the window reads their names on its worker
    (not on the UI thread, where reading them stalled the window for 140-250 ms) and lists them all."""
    store = core.personas.memory("aria")
    with store.db.atomic():
        for i in range(2000):
            store.components.write_entity(f"Place {i:04d}", f"A harbour town, number {i}.")
    readers: list[str] = []
    names, entity = Components.entity_names, Components.entity

    def entity_names(self: Components) -> list[str]:
        readers.append(threading.current_thread().name)
        return names(self)

    def one_entity(self: Components, name: str):
        readers.append(threading.current_thread().name)
        return entity(self, name)

    monkeypatch.setattr(Components, "entity_names", entity_names)
    monkeypatch.setattr(Components, "entity", one_entity)
    monkeypatch.setattr(Components, "entities", lambda self: pytest.fail("every entity read at once"))
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.entities.entity_list.count() == 2000, timeout=30_000)
    listed = [window.entities.entity_list.item(i).text() for i in range(window.entities.entity_list.count())]
    assert listed[:2] == ["Place 0000", "Place 0001"] and listed[-1] == "Place 1999"
    shown: list[str] = []
    window.entities.entity_name.textChanged.connect(shown.append)
    window.entities.entity_list.setCurrentRow(5)  # passed over before its text arrived: its answer is dropped
    window.entities.entity_list.setCurrentRow(1234)
    qtbot.waitUntil(lambda: window.entities.entity_name.text() == "Place 1234", timeout=30_000)
    assert window.entities.entity_text.toPlainText() == "A harbour town, number 1234."
    assert "Place 0005" not in shown and not window.entities.entity_text.isReadOnly()
    assert len(readers) == 3 and threading.main_thread().name not in readers  # the names, then each entity
    window.done(0)


def test_the_window_reads_nothing_on_the_ui_thread_and_shows_what_memory_holds(
    qtbot, core: NexusApp, monkeypatch, tmp_path: Path
) -> None:
    """The person's window never waits on the disk: the persona, core memory, notepad, documents and a
    selected person are all read on the window's worker, and what arrives is what the database holds."""
    owner = core.personas.memory("aria")
    owner.components.set_core_memory("I am Aria. Mika's oldest friend.")
    owner.components.set_notepad("Mika's birthday is on Friday.")
    owner.components.write_entity("Luna", "Mika's cat.")
    notes = tmp_path / "garden.md"
    notes.write_text("# Garden\nThe tomatoes go in after the last frost.", encoding="utf-8")
    owner.knowledge.add(notes)  # waiting to be indexed: the window resumes the import
    readers: dict[str, list[str]] = {}

    def record(cls: type, method: str) -> None:
        original = getattr(cls, method)

        def reading(self, *args):
            readers.setdefault(method, []).append(threading.current_thread().name)
            return original(self, *args)

        monkeypatch.setattr(cls, method, reading)

    record(Components, "core_memory")
    record(Components, "notepad")
    record(Components, "entity")
    record(KnowledgeBase, "documents")
    record(type(core.personas.store), "load")

    window = MemoryWindow(core, "aria", name="Aria")
    qtbot.addWidget(window)
    assert window.windowTitle() == "Memory of Aria"  # right at once, before anything was read
    assert window.core_edit.isReadOnly() and window.core_edit.toPlainText() == ""
    qtbot.waitUntil(lambda: not window.core_edit.isReadOnly(), timeout=30_000)
    qtbot.waitUntil(lambda: window.entities.entity_list.count() == 1, timeout=30_000)
    window.entities.entity_list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.entities.entity_text.toPlainText() == "Mika's cat.", timeout=30_000)
    qtbot.waitUntil(
        lambda: (
            window.knowledge.documents.rowCount() == 1
            and "ready" in window.knowledge.documents.item(0, 1).text()
        ),
        timeout=60_000,
    )
    assert sorted(readers) == ["core_memory", "documents", "entity", "load", "notepad"]
    ui_thread = threading.main_thread().name
    assert all(ui_thread not in threads for threads in readers.values()), readers

    monkeypatch.undo()  # the test's own reads below are on this thread
    check = core.personas.open_memory("aria", read_only=True)
    try:
        assert window.core_edit.toPlainText() == check.components.core_memory()
        assert window.notepad_edit.toPlainText() == check.components.notepad()
        assert (
            window.knowledge.documents.item(0, 0).text() == check.knowledge.documents()[0].title == "garden"
        )
    finally:
        check.close()
    assert window.core_edit.toPlainText() == "I am Aria. Mika's oldest friend."
    window.done(0)


def test_core_memory_cannot_be_typed_over_or_saved_before_it_has_loaded(
    qtbot, core: NexusApp, monkeypatch
) -> None:
    """Until core memory and the notepad have arrived, their editors refuse typing and Save writes
    nothing: an empty editor is never saved over the real memory."""
    core.personas.memory("aria").components.set_core_memory("I am Aria. Mika's oldest friend.")
    arrive = threading.Event()
    core_memory = Components.core_memory

    def slow_core_memory(self: Components) -> str:
        arrive.wait(30)  # the disk is slow today
        return core_memory(self)

    monkeypatch.setattr(Components, "core_memory", slow_core_memory)
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    try:
        assert window.windowTitle() == "Memory of aria"  # the slug until the persona is read
        assert window.core_edit.isReadOnly() and window.notepad_edit.isReadOnly()
        assert window.core_edit.placeholderText() == "Loading…"
        qtbot.keyClicks(window.core_edit, "typed too early")
        qtbot.keyClicks(window.notepad_edit, "typed too early")
        assert window.core_edit.toPlainText() == "" and window.notepad_edit.toPlainText() == ""
        assert not window.save_core_button.isEnabled()
        window.save_core()
        assert window.status.text() != "Saving…"
    finally:
        arrive.set()
    qtbot.waitUntil(lambda: not window.core_edit.isReadOnly(), timeout=30_000)
    assert window.windowTitle() == "Memory of Aria"
    assert window.core_edit.toPlainText() == "I am Aria. Mika's oldest friend."
    assert window.core_edit.placeholderText() == "" and window.save_core_button.isEnabled()

    window.core_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(window.core_edit, " Loves jasmine tea.")
    window.save_core_button.click()
    qtbot.waitUntil(lambda: window.status.text() == "Saved.", timeout=30_000)
    window.done(0)
    check = core.personas.open_memory("aria", read_only=True)
    try:
        assert check.components.core_memory() == "I am Aria. Mika's oldest friend. Loves jasmine tea."
    finally:
        check.close()


def test_a_persona_that_cannot_be_opened_says_why_in_the_window(qtbot, core: NexusApp) -> None:
    window = MemoryWindow(core, "nobody")  # opens at once: nothing is read while it opens
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: "There is no persona 'nobody'" in window.status.text(), timeout=30_000)
    assert window.core_edit.isReadOnly() and not window.save_core_button.isEnabled()
    assert window.core_edit.placeholderText() == ""
    window.done(0)

    closed_at_once = MemoryWindow(core, "aria")  # closed before anything arrived: returns at once
    qtbot.addWidget(closed_at_once)
    closed_at_once.done(0)
    closed_at_once.lane.wait()
    store = closed_at_once.lane.store
    assert store is not None
    with pytest.raises(Exception, match="closed"):
        store.db.execute("select 1")


def test_why_a_document_cannot_be_read_is_shown_in_the_persons_language_from_the_database(
    qtbot, core: NexusApp, tmp_path: Path
) -> None:
    """The reason is stored with its words (template and values), so a Japanese window shows it in
    Japanese, a switch to English shows it in English, and the CLI's English text is unchanged."""
    empty = tmp_path / "empty.pdf"
    write_pdf(empty, [[]])  # a valid PDF without text: a scan of images, as far as we can tell
    knowledge = core.personas.memory("aria").knowledge
    knowledge.add(empty)
    knowledge.ingest_pending(default_embedder())
    stored = knowledge.documents()[0]
    assert stored.error == "empty.pdf has no text to read (a scan of images?)."  # the CLI's words

    i18n.set_language("ja")
    try:
        window = MemoryWindow(core, "aria")  # reads the document list again, from the database
        qtbot.addWidget(window)
        qtbot.waitUntil(lambda: window.knowledge.documents.rowCount() == 1, timeout=30_000)
        shown = window.knowledge.documents.item(0, 1).text()
        reason = "empty.pdf には読み取れる文字がありません（画像をスキャンしたものでしょうか）。"
        assert shown == f"読み込めません: {reason}"
        i18n.set_language("en")
        window.retranslate()
        assert window.knowledge.documents.item(0, 1).text() == "cannot be read: " + stored.error
    finally:
        i18n.set_language("en")
    window.done(0)


def test_every_change_made_in_the_window_is_written_by_the_personas_owner_on_its_queue_thread(
    qtbot, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: the window reads on a read-only connection and hands each change to the persona's runtime.
    The owner connection's trace holds every edit (so no other connection wrote it), all on the queue."""
    trace = tmp_path / "owner.trace"
    monkeypatch.setenv("NEXUS_ARK_TRACE_OWNER", str(trace))
    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    try:
        app.personas.change_memory(
            "aria",
            "plant",
            lambda store: index_turns(
                store.archive,
                [Turn(speaker="Mika", text="My cat Luna hates the vacuum cleaner.", created_at="2026-02-01")],
            ),
        )
        doc = tmp_path / "recipes.md"
        doc.write_text("# Recipes\nMika's miso soup uses white miso and tofu.", encoding="utf-8")
        window = MemoryWindow(app, "aria")
        qtbot.addWidget(window)
        _edit_core_and_luna(qtbot, window, "I am Aria. Mika's cat is called Luna.", "Mika's cat.")
        window.knowledge.add_documents([doc])
        qtbot.waitUntil(window.knowledge.progress.isHidden, timeout=60_000)
        window.query.setText("vacuum")
        window.search()
        qtbot.waitUntil(lambda: "found" in window.status.text(), timeout=30_000)
        window.results.selectRow(0)
        window.forget_selected(ask=False)
        qtbot.waitUntil(lambda: "Deleted 1" in window.status.text(), timeout=30_000)
        window.done(0)
        assert "I am Aria. Mika's cat is called Luna." in app.personas.change_memory(
            "aria", "check", lambda store: store.components.core_memory()
        )
    finally:
        app.close()
    lines = trace.read_text(encoding="utf-8").splitlines()
    threads = {line.split("\t", 1)[0] for line in lines}
    assert threads == {"persona-aria"}, [x for x in lines if not x.startswith("persona-aria")][:5]
    written = "\n".join(line.lower() for line in lines)
    edits = (  # (SQL quotes Mika''s)
        "insert into core_memory (id, text, updated_at) values (1, 'i am aria. mika''s cat is called luna.'",
        "insert into entities (name, text, source_ids, item_id, created_at, updated_at) values ('luna'",
        "insert into kb_documents",
        "delete from items where id in (1)",
    )
    for edit in edits:
        assert edit in written, f"{edit!r} was not written by the owner"


def test_the_entity_marked_as_the_person_is_shown_as_the_person(qtbot, core: NexusApp) -> None:
    """What a dream wrote about the person (issue 32) is listed as "you", and opens under its own name."""
    store = core.personas.memory("aria")
    store.components.write_person("Calvin", "I failed my driving test.")
    store.components.write_entity("Nora", "Calvin's sister.")
    assert store.components.person_entity() == "Calvin"
    window = MemoryWindow(core, "aria", name="Aria")
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.entities.entity_list.count() == 2, timeout=30_000)
    shown = [window.entities.entity_list.item(i).text() for i in range(2)]
    assert shown == ["Calvin (you)", "Nora"]
    assert window.entities.entity_list.item(0).toolTip() == "What Aria knows about you"
    window.entities.entity_list.setCurrentRow(0)
    qtbot.waitUntil(
        lambda: window.entities.entity_text.toPlainText() == "I failed my driving test.", timeout=30_000
    )
    assert window.entities.entity_name.text() == "Calvin"
