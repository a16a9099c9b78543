"""Recall when the message opens with a greeting: the chat turn's query vector made from the whole message
(as archive.search makes it) or from the message less its greeting (agent.recall.meaning_of, the text the
emotion head reads, so that one e5 pass serves both). Each LoCoMo dev question is asked as it is and
after three greetings; the keyword rankings read the whole message either way.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.recall_greeting [--data ../shared/data/locomo-dev]

The greetings are a template written for this check ("Hi Aria! ", "Good morning! ", "Hey <the
conversation's first speaker>, "): it says whether leaving the greeting out loses anything, not how much
real greeted questions gain. Embeddings come from bench.memory_recall's cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from bench.memory_recall import REPO, CachedEmbedder
from nexus_ark.agent.recall import meaning_of
from nexus_ark.memory.archive.vectors import clip_for_embedding
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

GREETINGS = ("", "Hi Aria! ", "Good morning! ", "Hey {speaker}, ")
VECTORS = {"whole message": clip_for_embedding, "less the greeting": meaning_of}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo-dev")
    args = parser.parse_args()
    embedder = CachedEmbedder(default_embedder())
    found: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for conv in sorted(p for p in args.data.iterdir() if (p / "turns.jsonl").exists()):
            store = MemoryStore(Path(tmp) / f"{conv.name}.db")
            import_jsonl(conv / "turns.jsonl", on_store(store), set())
            store.archive.embed_pending(embedder)
            first = json.loads((conv / "turns.jsonl").read_text().splitlines()[0])["speaker"]
            gold = {g["id"]: g for g in map(json.loads, (conv / "gold.jsonl").read_text().splitlines())}
            for line in (conv / "queries.jsonl").read_text().splitlines():
                question = json.loads(line)
                evidence = gold[question["id"]]["evidence"]
                for greeting in GREETINGS:
                    text = greeting.format(speaker=first) + question["query"]
                    for name, made_from in VECTORS.items():
                        vector = embedder.embed_query(made_from(text))
                        hits = store.archive.search(text, embedder, k=10, query_vector=vector)
                        ids = [h.source_id for h in hits]
                        for k in (5, 10):
                            share = sum(e in ids[:k] for e in evidence) / len(evidence)
                            found.setdefault((greeting, name, k), []).append(share)
            store.close()
            embedder.save()
    print("greeting before each question | query vector from | n | recall@5 | recall@10")
    for greeting in GREETINGS:
        for name in VECTORS:
            at5, at10 = found[(greeting, name, 5)], found[(greeting, name, 10)]
            shown = repr(greeting) if greeting else "(none)"
            print(
                f"{shown} | {name} | {len(at5)} | {statistics.fmean(at5):.3f} | {statistics.fmean(at10):.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
