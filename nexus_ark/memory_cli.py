"""`nexus-ark memory import | search`: the scripting and evaluation face of a persona's memory."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.archive import SearchHit
from nexus_ark.memory.importer import import_jsonl
from nexus_ark.memory.portability import backup, export_memory, import_memory


def run_memory_command(app: NexusApp, args: argparse.Namespace) -> int:
    persona = app.personas.load(args.persona)
    store = app.open_memory(args.persona)
    try:
        if args.memory_command == "import":
            return _import(app, store, args, {persona.slug, persona.settings.name})
        if args.memory_command == "export":
            path = export_memory(store, args.folder, persona.settings.name)
            print(f"exported to {path.parent} (memory.md, entities/, conversations.md, memory.json)")
            return 0
        if args.memory_command == "restore":
            rows = import_memory(store, args.folder)
            embedded = store.archive.embed_pending(app.embedder())
            print(f"restored {rows} rows and embedded {embedded} items")
            return 0
        if args.memory_command == "backup":
            print(backup(store, app.layout.backups_dir / persona.slug))
            return 0
        if args.memory_command == "kb":
            return _knowledge(app, store, args)
        return _search(app, store, args)
    finally:
        store.close()


def _import(app: NexusApp, store, args: argparse.Namespace, names: set[str]) -> int:
    started = time.perf_counter()
    report = import_jsonl(args.file, store.messages, store.archive, names)
    for error in report.errors:
        print(f"skipped {error}", file=sys.stderr)
    embedder = app.embedder()

    def progress(done: int, total: int) -> None:
        print(f"\rembedding {done}/{total}", end="", file=sys.stderr, flush=True)

    embedded = store.archive.embed_pending(embedder, progress=progress)
    if embedded:
        print(file=sys.stderr)
    seconds = time.perf_counter() - started
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


def _search(app: NexusApp, store, args: argparse.Namespace) -> int:
    embedder = app.embedder() if args.mode != "fts" else None
    options = {"k": args.k, "kinds": args.kind, "since": args.since, "until": args.until, "mode": args.mode}
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
                hits = store.archive.search(query, embedder, **options)
                print(json.dumps({"id": qid, "hits": [_hit_json(h) for h in hits]}, ensure_ascii=False))
        return 1 if failures else 0
    if not args.query:
        raise NexusArkError("Give a QUERY to search for, or --queries FILE.jsonl.")
    hits = store.archive.search(args.query, embedder, **options)
    for hit in hits:
        if args.json:
            print(json.dumps(_hit_json(hit), ensure_ascii=False))
        else:
            print(f"{hit.score:.4f}\t{hit.kind}\t{hit.source_id or ''}\t{hit.timestamp[:16]}\t{hit.text}")
    return 0


def _knowledge(app: NexusApp, store, args: argparse.Namespace) -> int:
    kb = store.knowledge
    if args.action == "add":
        for target in args.targets:
            doc = kb.add(Path(target))
            print(f"added {doc.id}\t{doc.title}", file=sys.stderr)

        def progress(title: str, done: int, total: int) -> None:
            print(f"\rindexing {title}: {done}/{total}", end="", file=sys.stderr, flush=True)

        kb.ingest_pending(app.embedder(), progress=progress)
        print(file=sys.stderr)
    elif args.action == "remove":
        for target in args.targets:
            kb.remove(int(target))
    failed = 0
    for doc in kb.documents():
        detail = doc.error or f"{doc.chunks_done}/{doc.chunks_total} chunks"
        print(f"{doc.id}\t{doc.status}\t{doc.title}\t{detail}")
        failed += doc.status == "error"
    return 1 if failed and args.action == "add" else 0
