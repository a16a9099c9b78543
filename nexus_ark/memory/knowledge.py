"""The knowledge base: documents a person gives the persona (.txt, .md, .pdf), chunked, embedded and
indexed in the archive as kind "kb_chunk".

Ingestion is resumable: chunk rows are written first, each chunk becomes an archive item in the same
transaction that records it, and vectors are stored per batch; after a crash or a cancel, the next run
continues where it stopped, with no duplicate chunks and nothing embedded twice.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.archive import Archive, NewItem
from nexus_ark.memory.db import inserted_id
from nexus_ark.notices import Notice, from_stored, notice, stored
from nexus_ark.providers.embedders import Embedder

SUPPORTED = {".txt", ".md", ".markdown", ".pdf"}
CHUNK_CHARS = 800
OVERLAP_CHARS = 120
BATCH = 32

_SPACES = re.compile(r"[ \t]+")

Progress = Callable[[str, int, int], None]  # document title, chunks done, chunks total


class KnowledgeDocument(BaseModel):
    id: int
    path: str
    title: str
    sha256: str
    status: str
    chunks_total: int
    chunks_done: int
    error: str | None = None  # the English text
    error_notice: str | None = None  # the same with its template and values (notices.stored)

    @property
    def problem(self) -> str | None:
        """Why the document cannot be read: a Notice when its words were stored (a window translates it),
        else the English text (a row written by an older version)."""
        return from_stored(self.error_notice) if self.error_notice else self.error


class UnreadableDocumentError(NexusArkError):
    """A document whose text cannot be extracted (damaged, encrypted, scanned images only)."""


def _unsupported(path: Path, name: str | None = None) -> Notice:
    return notice("{name}: only .txt, .md and .pdf files can be added.", name=name or path.name)


# A file name's limit is 255 bytes on the common file systems; the stored copy adds 13 (the hash and a
# dash), and a little room stays for the copies other tools make beside it.
STORED_NAME_BYTES = 200


def stored_name(digest: str, name: str) -> str:
    """The stored copy's name: the content hash, then the person's file name, its stem shortened (by whole
    characters) where the whole would pass the file system's limit; the suffix is kept."""
    stem, suffix = Path(name).stem, Path(name).suffix
    room = STORED_NAME_BYTES - 13 - len(suffix.encode("utf-8"))
    while len(stem.encode("utf-8")) > room:
        stem = stem[:-1]
    return f"{digest[:12]}-{stem}{suffix}"


def original_name(copy: Path) -> str:
    """The name the person's file had: the stored copy's name without the content hash in front."""
    digest, dash, name = copy.name.partition("-")
    return name if dash and len(digest) == 12 and all(c in "0123456789abcdef" for c in digest) else copy.name


# What one document may hold: about 600 book pages. A 10 MB text took 17 s of a core to chunk and index,
# on the persona's queue; past this it is refused in words (split it, and the parts are read).
DOCUMENT_MAX_CHARS = 2_000_000


def extract_text(path: Path, name: str | None = None) -> str:
    """The document's text; `name` is how errors call the file (its own name by default). A text longer
    than DOCUMENT_MAX_CHARS is refused (UnreadableDocumentError says how long, and what to do)."""
    name = name or path.name
    text = _text_of(path, name)
    if len(text) > DOCUMENT_MAX_CHARS:
        raise UnreadableDocumentError(
            notice(
                "{name} holds {count:,} characters: at most {limit:,} are read into the knowledge base. "
                "Split it into parts and add each.",
                name=name,
                count=len(text),
                limit=DOCUMENT_MAX_CHARS,
            )
        )
    return text


def _text_of(path: Path, name: str) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise UnreadableDocumentError(_unsupported(path, name))
    if suffix != ".pdf":
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            return path.read_text(encoding="utf-8", errors="replace")
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise UnreadableDocumentError(notice("{name} is password-protected.", name=name))
        text = "\n\n".join((page.extract_text() or "") for page in reader.pages)
    except UnreadableDocumentError:
        raise
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise UnreadableDocumentError(
            notice("{name} is not a readable PDF: {problem}", name=name, problem=str(exc))
        ) from exc
    if not text.strip():
        raise UnreadableDocumentError(notice("{name} has no text to read (a scan of images?).", name=name))
    return text


def chunk_text(text: str, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS) -> list[str]:
    """Chunks of about `size` characters that end at a paragraph or sentence where one is near."""
    # A line at a time (runs of spaces never cross a line): one substitution over a whole book holds the
    # interpreter lock for tens of milliseconds (28 ms for 650 kB), and the window's thread waits for it.
    text = "\n".join(_SPACES.sub(" ", line) for line in text.split("\n")).strip()
    chunks, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start:end]
            cut = max(window.rfind("\n\n"), window.rfind("。"), window.rfind(". "), window.rfind("\n"))
            if cut > size // 2:
                end = start + cut + 1
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return chunks


class KnowledgeBase:
    def __init__(
        self,
        db: sqlite_utils.Database,
        archive: Archive,
        folder: Path,
        clock: Clock | None = None,
        *,
        activity: ActivityLog | None = None,
    ) -> None:
        self.db = db
        self.archive = archive
        self.folder = folder
        self.clock = clock or SystemClock()
        self.activity = activity or ActivityLog(db, self.clock)

    def documents(self) -> list[KnowledgeDocument]:
        rows = self.db.query("select * from kb_documents order by id")
        return [KnowledgeDocument(**{k: r[k] for k in KnowledgeDocument.model_fields}) for r in rows]

    def add(self, source: Path) -> KnowledgeDocument:
        """Copy the original into the persona's knowledge/ folder and register it (idempotent)."""
        if not source.is_file():
            raise NexusArkError(notice("{path} does not exist or is not a file.", path=str(source)))
        if source.suffix.lower() not in SUPPORTED:
            raise UnreadableDocumentError(_unsupported(source))
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        existing = self.db.execute("select id from kb_documents where sha256 = ?", [digest]).fetchone()
        if existing:
            return self._get(existing[0])
        self.folder.mkdir(parents=True, exist_ok=True)
        copy = self.folder / stored_name(digest, source.name)
        shutil.copy2(source, copy)
        now = iso(self.clock.now())
        with self.db.atomic():
            cur = self.db.execute(
                "insert into kb_documents (path, title, sha256, status, added_at, updated_at) values (?,?,?,?,?,?)",
                [str(copy), source.stem, digest, "pending", now, now],
            )
            self.activity.imported(
                notice("document {name} added to the knowledge base", name=source.name),
                source="knowledge",
                document_id=inserted_id(cur),
                title=source.stem,
            )
        return self._get(inserted_id(cur))

    def remove(self, doc_id: int) -> None:
        """Remove a document, its chunks and their archive items; the stored original goes too."""
        doc = self._get(doc_id)
        item_ids = [
            r[0]
            for r in self.db.execute(
                "select item_id from kb_chunks where doc_id = ? and item_id is not null", [doc_id]
            )
        ]
        with self.db.atomic():
            self.archive.delete_items(item_ids)
            self.db.execute("delete from kb_chunks where doc_id = ?", [doc_id])
            self.db.execute("delete from kb_documents where id = ?", [doc_id])
            self.activity.memory_write(
                notice("knowledge"),
                notice("document {title} removed", title=doc.title),
                document_id=doc_id,
                chunks=len(item_ids),
            )
        Path(doc.path).unlink(missing_ok=True)

    def ingest_pending(
        self,
        embedder: Embedder,
        *,
        cancel: threading.Event | None = None,
        progress: Progress | None = None,
        batches: int | None = None,
    ) -> list[KnowledgeDocument]:
        """Chunk, index and embed every document not yet done. Safe to call again after any stop.
        `batches`: stop after that many batches of chunks (one step of the owner's queue); unfinished()
        says whether there is more."""
        budget = [batches if batches is not None else -1]
        for doc in self.documents():
            if doc.status in ("done", "error"):
                continue
            if (cancel is not None and cancel.is_set()) or budget[0] == 0:
                break
            self._ingest(doc, embedder, cancel, progress, budget)
        return self.documents()

    def unfinished(self) -> bool:
        return bool(
            self.db.execute("select 1 from kb_documents where status not in ('done', 'error')").fetchone()
        )

    def _ingest(
        self,
        doc: KnowledgeDocument,
        embedder: Embedder,
        cancel: threading.Event | None,
        progress: Progress | None,
        budget: list[int],
    ) -> None:
        """budget[0]: batches left (-1: no limit), counted down here."""
        if doc.chunks_total == 0:
            chunked = self._chunk(doc)
            if chunked is None:
                return
            doc = chunked
        while not (cancel is not None and cancel.is_set()) and budget[0] != 0:
            budget[0] -= 1
            batch = self.db.execute(
                "select id, ord, text from kb_chunks where doc_id = ? and item_id is null order by ord limit ?",
                [doc.id, BATCH],
            ).fetchall()
            if not batch:
                break
            with self.db.atomic():
                for chunk_id, ord_, text in batch:
                    item_id = self.archive.add(
                        NewItem(
                            kind="kb_chunk",
                            text=text,
                            source_id=f"kb:{doc.id}#{ord_}",
                            meta={"document": doc.title, "chunk": ord_},
                        )
                    )
                    self.db.execute("update kb_chunks set item_id = ? where id = ?", [item_id, chunk_id])
            self.archive.embed_pending(embedder, batch=BATCH, cancel=cancel)
            done = self.db.execute(
                "select count(*) from kb_chunks where doc_id = ? and item_id is not null", [doc.id]
            ).fetchone()[0]
            self._set(doc.id, chunks_done=done)
            if progress is not None:
                progress(doc.title, done, doc.chunks_total)
        remaining = self.db.execute(
            "select count(*) from kb_chunks where doc_id = ? and item_id is null", [doc.id]
        ).fetchone()[0]
        if remaining == 0:
            with self.db.atomic():
                self._set(doc.id, status="done")
                self.activity.imported(
                    notice(
                        "document {title} indexed: {chunks} chunks", title=doc.title, chunks=doc.chunks_total
                    ),
                    source="knowledge",
                    document_id=doc.id,
                    title=doc.title,
                    chunks=doc.chunks_total,
                )

    def _chunk(self, doc: KnowledgeDocument) -> KnowledgeDocument | None:
        """Read a document and store its chunks; None when it cannot be read (its error is recorded)."""
        try:
            name = original_name(Path(doc.path))
            chunks = chunk_text(extract_text(Path(doc.path), name))
        except (UnreadableDocumentError, OSError) as exc:
            problem = (  # our sentence (a Notice, with its hint when it has one), or the OS's in ours
                str(exc)
                if isinstance(exc, NexusArkError)
                else notice("{name} cannot be read: {problem}", name=name, problem=str(exc))
            )
            with self.db.atomic():
                self._set(doc.id, status="error", error=str(problem), error_notice=stored(problem))
                self.activity.error(
                    notice(
                        "document {title} could not be read: {problem}", title=doc.title, problem=str(exc)
                    ),
                    source="knowledge",
                    document_id=doc.id,
                )
            return None
        with self.db.atomic():
            self.db.execute("delete from kb_chunks where doc_id = ?", [doc.id])
            for ord_, text in enumerate(chunks):
                self.db.execute(
                    "insert into kb_chunks (doc_id, ord, text) values (?,?,?)", [doc.id, ord_, text]
                )
            self.db.execute(
                "update kb_documents set status = 'indexing', chunks_total = ? where id = ?",
                [len(chunks), doc.id],
            )
        return self._get(doc.id)

    def _get(self, doc_id: int) -> KnowledgeDocument:
        row = next(iter(self.db.query("select * from kb_documents where id = ?", [doc_id])), None)
        if row is None:
            raise NexusArkError(notice("There is no document {doc_id} in the knowledge base.", doc_id=doc_id))
        return KnowledgeDocument(**{k: row[k] for k in KnowledgeDocument.model_fields})

    def _set(self, doc_id: int, **changes: object) -> None:
        changes["updated_at"] = iso(self.clock.now())
        assignments = ", ".join(f"{k} = ?" for k in changes)
        with self.db.atomic():
            self.db.execute(
                f"update kb_documents set {assignments} where id = ?", [*changes.values(), doc_id]
            )
