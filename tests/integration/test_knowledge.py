"""The knowledge base with real files: a real PDF, an unreadable one, a kill in the middle of an import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder
from tests.pdf_maker import write_pdf

pytestmark = pytest.mark.integration


@pytest.fixture
def memory(tmp_path: Path):
    (tmp_path / "persona").mkdir()
    store = MemoryStore(tmp_path / "persona" / "memory.db")
    yield store
    store.close()


def test_pdf_is_chunked_indexed_and_recalled(memory: MemoryStore, tmp_path: Path) -> None:
    pdf = write_pdf(
        tmp_path / "handbook.pdf",
        [
            ["The Harbor Light Handbook.", "Chapter one describes the harbour and its boats."],
            ["The lighthouse keeper is named Ansel Brandt.", "He has kept the light since 1987."],
        ],
    )
    doc = memory.knowledge.add(pdf)
    assert Path(doc.path).parent == memory.path.parent / "knowledge" and Path(doc.path).exists()
    assert memory.knowledge.add(pdf).id == doc.id, "adding the same file twice registers it once"
    seen = []
    docs = memory.knowledge.ingest_pending(
        default_embedder(), progress=lambda t, d, n: seen.append((t, d, n))
    )
    assert docs[0].status == "done" and docs[0].chunks_done == docs[0].chunks_total >= 1
    assert seen[-1] == ("handbook", docs[0].chunks_total, docs[0].chunks_total)
    hits = memory.archive.search("Who keeps the lighthouse?", default_embedder(), k=3, kinds=["kb_chunk"])
    assert hits and "Ansel Brandt" in hits[0].text and hits[0].source_id.startswith(f"kb:{doc.id}#")


def test_unreadable_pdf_is_reported_and_skipped(memory: MemoryStore, tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    good = tmp_path / "notes.md"
    good.write_text("# Notes\nMika's favourite tea is genmaicha.", encoding="utf-8")
    memory.knowledge.add(broken)
    memory.knowledge.add(good)
    docs = {d.title: d for d in memory.knowledge.ingest_pending(default_embedder())}
    assert docs["broken"].status == "error" and "broken.pdf" in docs["broken"].error
    assert docs["notes"].status == "done"


def test_resume_after_a_kill_mid_import_without_duplicates(memory: MemoryStore, tmp_path: Path) -> None:
    text = "\n\n".join(
        f"Section {i}. The river town keeps record number {i} of its boats and bridges." * 3
        for i in range(400)
    )
    source = tmp_path / "long.txt"
    source.write_text(text, encoding="utf-8")
    memory.knowledge.add(source)
    db_path = memory.path
    memory.close()
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nexus_ark.memory.store import MemoryStore\n"
        "from nexus_ark.providers.embedders import default_embedder\n"
        f"store = MemoryStore(Path({str(db_path)!r}))\n"
        "show = lambda title, done, total: print(done, total, flush=True)\n"
        "store.knowledge.ingest_pending(default_embedder(), progress=show)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    proc.kill()  # no clean shutdown: as if the app or the machine died
    proc.wait()
    done_before, total = map(int, first.split())
    assert 0 < done_before < total

    store = MemoryStore(db_path)
    try:
        doc = store.knowledge.documents()[0]
        assert doc.status == "indexing"
        store.knowledge.ingest_pending(default_embedder())
        doc = store.knowledge.documents()[0]
        assert doc.status == "done" and doc.chunks_done == doc.chunks_total == total
        db = store.db
        assert db.execute("select count(*) from kb_chunks").fetchone()[0] == total
        assert db.execute(
            "select count(*), count(distinct source_id) from items where kind = 'kb_chunk'"
        ).fetchone() == (total, total)
        assert store.archive.pending_vectors(default_embedder()) == 0

        store.knowledge.remove(doc.id)
        assert db.execute("select count(*) from items where kind = 'kb_chunk'").fetchone()[0] == 0
        assert db.execute("select count(*) from kb_chunks").fetchone()[0] == 0
        assert not Path(doc.path).exists()
        assert store.archive.search("river town boats", default_embedder()) == []
    finally:
        store.close()
