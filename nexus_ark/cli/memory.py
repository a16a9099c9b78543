"""`nexus-ark memory import | search`: the scripting and evaluation face of a persona's memory."""

from __future__ import annotations

import argparse
import json
import sys
import time
import unicodedata
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.archive import SearchHit, SearchMode
from nexus_ark.memory.backups import backup
from nexus_ark.memory.chatgpt_import import ChatGPTImportReport, import_chatgpt
from nexus_ark.memory.db import database_error, sqlite
from nexus_ark.memory.importer import ImportReport, import_jsonl, on_store, record_import
from nexus_ark.memory.portability import export_memory, import_memory
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.imported import read_unread_feelings
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona


def run_memory_command(app: NexusApp, args: argparse.Namespace) -> int:
    persona = app.personas.load(args.persona)
    try:
        if args.memory_command == "search":
            _check_times(args)
            store = app.personas.open_memory(persona.slug, read_only=True)  # a search writes nothing
            try:
                return _search(app, store, args)
            finally:
                store.close()
        # A write runs on the persona's queue, on its owner connection, like every other write (issue 22).
        name = f"memory {args.memory_command}"
        return app.personas.change_memory(
            persona.slug, name, lambda store: _write_command(app, store, args, persona)
        )
    except sqlite.Error as exc:  # a damaged or unwritable file: say which, and what to do
        raise database_error(exc, persona.memory_path) from exc


def _check_times(args: argparse.Namespace) -> None:
    for flag in ("since", "until"):
        value = getattr(args, flag)
        if value is None:
            continue
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise NexusArkError(
                f"--{flag} {value!r} is not a date or time in ISO-8601 form.",
                hint="Write it like 2026-11-21 or 2026-11-21T18:30 (local time) or 2026-11-21T09:30Z.",
            ) from None


def _write_command(app: NexusApp, store: MemoryStore, args: argparse.Namespace, persona: Persona) -> int:
    """Commands that change memory run on the persona's owner connection (this process owns it)."""
    if args.memory_command == "import":
        return _import(app, store, args, persona)
    if args.memory_command == "export":
        path = export_memory(store, args.folder, persona.settings.name)
        if path.parent != args.folder:  # the folder held files: none of them is overwritten
            print(
                f"note: {args.folder} is not empty: the export went into a new folder in it.", file=sys.stderr
            )
        print(f"exported to {path.parent} (memory.md, entities/, conversations.md, memory.json)")
        return 0
    if args.memory_command == "restore":
        rows = import_memory(store, args.folder)
        embedded = _embed(app, store)
        print(f"restored {rows} rows and embedded {embedded} items")
        return 0
    if args.memory_command == "backup":
        print(backup(store, app.layout.backups_dir / persona.slug))
        return 0
    return _knowledge(app, store, args)


def _import(app: NexusApp, store: MemoryStore, args: argparse.Namespace, persona: Persona) -> int:
    """Exit code 0, or 1 when some lines or conversations were skipped (each named on stderr). A ChatGPT
    export that cannot be read at all raises (exit code 2); what earlier runs imported stays either way."""
    started = time.perf_counter()
    report: ImportReport
    if args.format == "chatgpt":
        report = import_chatgpt(args.file, on_store(store))  # on the queue already
        for error in report.errors:  # each says what happened to its conversation
            print(error, file=sys.stderr)
    else:
        names = {persona.slug, persona.settings.name}
        # Speakers that are names: the person's name marks the person's lines (issue 32).
        user_name = getattr(args, "user_name", None) or persona.user_name
        report = import_jsonl(args.file, on_store(store), names, user_name)
        for error in report.errors:
            print(f"skipped {error}", file=sys.stderr)
    record_import(store.activity, report, args.file, args.format)
    if report.imported:  # how the person felt, as a live turn reads it: the drives need it
        try:
            read_unread_feelings(store, app.models.emotions)
        except NexusArkError as exc:
            print(f"warning: feelings not read: {exc}", file=sys.stderr)

    def progress(done: int, total: int) -> None:
        print(f"\rembedding {done}/{total}", end="", file=sys.stderr, flush=True)

    embedded = _embed(app, store, progress)
    if embedded:
        print(file=sys.stderr)
    seconds = time.perf_counter() - started
    if isinstance(report, ChatGPTImportReport):
        print(
            f"imported {report.imported} messages from {report.conversations} conversations "
            f"({report.skipped_duplicates} already there, {report.skipped_conversations} conversations "
            f"skipped, {report.other_branches} messages on other branches left out) and embedded "
            f"{embedded} items in {seconds:.1f} s"
        )
    else:
        print(
            f"imported {report.imported} turns ({report.skipped_duplicates} already there, "
            f"{len(report.errors)} bad lines) and embedded {embedded} items in {seconds:.1f} s"
        )
    return 1 if report.errors else 0


def _hit_json(hit: SearchHit) -> dict:
    return {
        "source_id": hit.source_id,
        "kind": hit.kind,
        "text": hit.text,
        "score": round(hit.score, 6),
        "timestamp": hit.timestamp,
    }


def _embed(app: NexusApp, store: MemoryStore, progress: Callable[[int, int], None] | None = None) -> int:
    """Vectors for what is new; when the embedder cannot be had, the items stay pending (keyword search
    finds them now, vectors follow when it works again) and the command says so instead of failing."""
    try:
        return store.archive.embed_pending(app.models.embedder(), progress=progress)
    except NexusArkError as exc:
        print(f"\nwarning: not embedded now (keyword search still finds everything): {exc}", file=sys.stderr)
        return 0


def _searcher(app: NexusApp, store: MemoryStore, mode: SearchMode) -> Callable[..., list[SearchHit]]:
    """search(query) for the chosen mode. Hybrid falls back to keywords, with a warning, when the
    embedder is down; --mode vector has nothing to fall back to and fails with the reason."""
    embedder = app.models.embedder() if mode != "fts" else None
    warned = False

    def search(query: str, **options: Any) -> list[SearchHit]:
        nonlocal warned
        try:
            return store.archive.search(query, embedder, mode=mode, **options)
        except NexusArkError as exc:
            if mode != "hybrid":
                raise
            if not warned:
                print(f"warning: searching by keywords only: {exc}", file=sys.stderr)
                warned = True
            return store.archive.search(query, None, mode="fts", **options)

    return search


def _search(app: NexusApp, store: MemoryStore, args: argparse.Namespace) -> int:
    search = _searcher(app, store, args.mode)
    options = {"k": args.k, "kinds": args.kind, "since": args.since, "until": args.until}
    if args.queries:
        if not args.json:
            raise NexusArkError("--queries writes JSON lines: add --json.")
        failures = 0
        with open(args.queries, encoding="utf-8") as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    item = json.loads(raw)
                    qid, query = item["id"], item["query"]
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    print(f"skipped {args.queries}:{number}: {exc}", file=sys.stderr)
                    failures += 1
                    continue
                hits = search(query, **options)
                print(json.dumps({"id": qid, "hits": [_hit_json(h) for h in hits]}, ensure_ascii=False))
        return 1 if failures else 0
    if not args.query:
        raise NexusArkError("Give a QUERY to search for, or --queries FILE.jsonl.")
    hits = search(args.query, **options)
    for hit in hits:
        if args.json:
            print(json.dumps(_hit_json(hit), ensure_ascii=False))
        else:
            print(f"{hit.score:.4f}\t{hit.kind}\t{hit.source_id or ''}\t{hit.timestamp[:16]}\t{hit.text}")
    return 0


def _knowledge(app: NexusApp, store: MemoryStore, args: argparse.Namespace) -> int:
    kb = store.knowledge
    ids = [_document_id(target) for target in args.targets] if args.action == "remove" else []
    added: set[int] = set()
    if args.action == "add":
        for target in args.targets:
            doc = kb.add(Path(target))
            added.add(doc.id)
            print(f"added {doc.id}\t{one_field(doc.title)}", file=sys.stderr)

        def progress(title: str, done: int, total: int) -> None:
            print(f"\rindexing {title}: {done}/{total}", end="", file=sys.stderr, flush=True)

        kb.ingest_pending(app.models.embedder(), progress=progress)
        print(file=sys.stderr)
    elif args.action == "remove":
        for doc_id in ids:
            kb.remove(doc_id)
    failed = 0
    for doc in kb.documents():
        detail = doc.error or f"{doc.chunks_done}/{doc.chunks_total} chunks"
        print("\t".join(one_field(str(f)) for f in (doc.id, doc.status, doc.title, detail)))
        # Only what this command added decides its exit code: an old broken document is listed, not blamed.
        failed += doc.status == "error" and doc.id in added
    return 1 if failed else 0


def _document_id(target: str) -> int:
    if not target.isdigit():
        raise NexusArkError(
            notice(
                "{value!r} is not a document id: `memory kb list` shows them.", value=one_field(target)[:40]
            )
        )
    return int(target)


def one_field(text: str) -> str:
    """A tab-separated field on one line: tabs, newlines and other control characters become spaces."""
    return " ".join(
        "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text).split()
    )
