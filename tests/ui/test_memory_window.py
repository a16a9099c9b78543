"""The memory window: a person sees, searches, archives, edits and exports what the persona knows."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nexus_ark.app import NexusApp
from nexus_ark.memory.components import Components
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.providers.embedders import default_embedder
from ui import i18n
from ui.memory_window import MemoryWindow

pytestmark = pytest.mark.integration


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    store = app.memory("aria")
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
    assert [m.content for m in window.store.messages.recent()] == ["I moved to Osaka last spring."]
    assert window.store.archive.search("vacuum cleaner", None, mode="fts", include_archived=True) == []

    window.core_edit.setPlainText("I am Aria. Mika lives in Osaka.")
    window.notepad_edit.setPlainText("Ask about the move.")
    window.save_core()
    qtbot.waitUntil(lambda: window.status.text() == "Saved.", timeout=30_000)
    window.entity_name.setText("Luna")
    window.entity_text.setPlainText("Mika's cat. Afraid of the vacuum cleaner.")
    window.save_entity()
    qtbot.waitUntil(lambda: window.entity_list.count() == 1, timeout=30_000)
    assert [window.entity_list.item(i).text() for i in range(window.entity_list.count())] == ["Luna"]

    window.export_to(tmp_path / "export")
    qtbot.waitUntil(lambda: "Exported" in window.status.text(), timeout=30_000)
    text = (tmp_path / "export" / "memory.md").read_text(encoding="utf-8")
    assert "Mika lives in Osaka" in text and "Ask about the move." in text
    window.done(0)

    check = core.open_memory("aria")
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
    window.add_documents([good, bad])
    assert not window.progress.isHidden()
    qtbot.waitUntil(window.progress.isHidden, timeout=60_000)
    statuses = {
        window.documents.item(r, 0).text(): window.documents.item(r, 1).text()
        for r in range(window.documents.rowCount())
    }
    assert statuses["recipes"] == "ready" and statuses["scan"].startswith("cannot be read")
    assert "scan" in window.status.text()
    window.documents.selectRow(0)
    window.remove_documents()
    qtbot.waitUntil(lambda: window.documents.rowCount() == 1, timeout=30_000)
    window.done(0)


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
    window.document_progress.connect(lambda title, done, total: seen.append(done))
    window.document_progress.connect(
        lambda title, done, total: window.cancel_import.set() if done >= 32 else None
    )
    window.add_documents([long_doc])
    qtbot.waitUntil(window.progress.isHidden, timeout=60_000)
    assert seen and "Stopped" in window.status.text()
    doc = core.open_memory("aria")
    try:
        state = doc.knowledge.documents()[0]
        assert state.status == "indexing" and 0 < state.chunks_done < state.chunks_total
    finally:
        doc.close()
    window.done(0)

    reopened = MemoryWindow(core, "aria")  # resumes by itself
    qtbot.addWidget(reopened)
    qtbot.waitUntil(lambda: "ready" in reopened.documents.item(0, 1).text(), timeout=120_000)
    reopened.done(0)


def test_opening_the_window_while_a_reply_streams_leaves_the_reply_streaming(qtbot, core: NexusApp) -> None:
    owner = core.memory("aria")
    reply = owner.messages.add(speaker="aria", role="assistant", content="Once upon", status="streaming")
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    window.query.setText("cat")
    window.search()
    qtbot.waitUntil(lambda: "found" in window.status.text(), timeout=30_000)
    window.done(0)
    window.worker.wait()
    assert owner.messages.get(reply).status == "streaming"  # still being written: not "interrupted"


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
    window.document_progress.connect(lambda title, done, total: started.append(done))
    window.add_documents([long_doc])
    qtbot.waitUntil(lambda: bool(started), timeout=60_000)
    window.done(0)  # must not wait for the import: it is told to stop and closes its own connection
    assert window.cancel_import.is_set() and not window.worker.idle
    window.worker.wait()
    store = window._worker.store
    assert store is not None
    with pytest.raises(Exception, match="closed"):
        store.db.execute("select 1")
    doc = core.memory("aria").knowledge.documents()[0]
    assert doc.status == "indexing" and doc.chunks_done < doc.chunks_total


def test_a_lorebook_of_thousands_is_listed_from_the_worker(qtbot, core: NexusApp, monkeypatch) -> None:
    """A card's lorebook makes thousands of people and things: the window reads their names on its worker
    (not on the UI thread, where reading them stalled the window for 140-250 ms) and lists them all."""
    store = core.memory("aria")
    with store.db.atomic():
        for i in range(2000):
            store.components.write_entity(f"Place {i:04d}", f"A harbour town, number {i}.")
    readers: list[str] = []
    names = Components.entity_names

    def entity_names(self: Components) -> list[str]:
        readers.append(threading.current_thread().name)
        return names(self)

    monkeypatch.setattr(Components, "entity_names", entity_names)
    monkeypatch.setattr(Components, "entities", lambda self: pytest.fail("every entity read at once"))
    window = MemoryWindow(core, "aria")
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.entity_list.count() == 2000, timeout=30_000)
    assert readers and threading.main_thread().name not in readers
    listed = [window.entity_list.item(i).text() for i in range(window.entity_list.count())]
    assert listed[:2] == ["Place 0000", "Place 0001"] and listed[-1] == "Place 1999"
    window.entity_list.setCurrentRow(1234)
    assert window.entity_name.text() == "Place 1234"
    assert window.entity_text.toPlainText() == "A harbour town, number 1234."
    window.done(0)
