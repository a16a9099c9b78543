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


@pytest.mark.slow
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


def test_kb_cli_takes_long_names_refuses_bad_ids_blames_only_its_own_documents_and_lists_one_line_each(
    tmp_path: Path,
) -> None:
    """Issue 23, defect 6: a 245-character file name failed with OSError (the stored copy's hash prefix
    took it past 255 bytes); `kb remove abc` was a ValueError; after one broken PDF every later `kb add`
    exited 1; `kb list` printed a title's newline raw."""
    from tests.conftest import run_cli

    data = str(tmp_path / "data")

    def kb(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli("--data-dir", data, "memory", "kb", "--persona", "aria", *args)

    long_name = tmp_path / ("a" * 245 + ".txt")
    long_name.write_text("Yui's birthday is on Friday.", encoding="utf-8")
    added = kb("add", str(long_name))
    assert added.returncode == 0 and "Traceback" not in added.stderr, added.stderr
    bad_id = kb("remove", "abc")
    assert bad_id.returncode == 2 and "'abc' is not a document id" in bad_id.stderr
    assert "Traceback" not in bad_id.stderr
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 broken")
    assert kb("add", str(broken)).returncode == 1  # its own document failed
    fine = tmp_path / "fine.txt"
    fine.write_text("Kenji moved the deadline.", encoding="utf-8")
    assert kb("add", str(fine)).returncode == 0  # the old broken one is listed, not blamed
    newline = tmp_path / "two\nlines.txt"
    newline.write_text("A title with a newline.", encoding="utf-8")
    assert kb("add", str(newline)).returncode == 0
    listed = kb("list")
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [len(r) for r in rows] == [4, 4, 4, 4] and rows[-1][2] == "two lines"
    assert rows[1][1] == "error" and "broken.pdf" in rows[1][3]
