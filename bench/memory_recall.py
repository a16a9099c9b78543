"""Recall on LoCoMo (../shared/data/locomo-dev): import each conversation's turns into a fresh persona
memory, ask its questions, and score recall@1/5/10 per category and overall: the app's hybrid search
next to an FTS5-only and a vector-only run of the same code.

recall@k for a question = share of its evidence turn ids among the top k hits (LoCoMo's evidence).

    .venv/bin/python -m bench.memory_recall [--data ../shared/data/locomo-dev] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

REPO = Path(__file__).resolve().parent.parent
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = ("hybrid", "fts", "vector")
KS = (1, 5, 10)


def evaluate(conv: Path, workdir: Path) -> tuple[dict, float]:
    store = MemoryStore(workdir / f"{conv.name}.db")
    embedder = default_embedder()
    started = time.perf_counter()
    import_jsonl(conv / "turns.jsonl", on_store(store), set())
    store.archive.embed_pending(embedder)
    import_s = time.perf_counter() - started
    gold = {g["id"]: g for g in map(json.loads, (conv / "gold.jsonl").read_text().splitlines())}
    scores: dict = {m: defaultdict(lambda: defaultdict(list)) for m in MODES}
    for line in (conv / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        g = gold[q["id"]]
        vector = embedder.embed_query(q["query"])
        for mode in MODES:
            hits = store.archive.search(q["query"], embedder, k=10, mode=mode, query_vector=vector)
            ids = [h.source_id for h in hits]
            for k in KS:
                value = sum(e in ids[:k] for e in g["evidence"]) / len(g["evidence"])
                scores[mode][k]["overall"].append(value)
                scores[mode][k][CATEGORIES[g["category"]]].append(value)
    store.close()
    return scores, import_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo-dev")
    parser.add_argument("--json")
    args = parser.parse_args()
    merged: dict = {m: defaultdict(lambda: defaultdict(list)) for m in MODES}
    convs = sorted(p for p in args.data.iterdir() if (p / "turns.jsonl").exists())
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            scores, import_s = evaluate(conv, Path(tmp))
            print(f"{conv.name}: imported and embedded in {import_s:.1f} s")
            for mode in MODES:
                for k in KS:
                    for cat, values in scores[mode][k].items():
                        merged[mode][k][cat].extend(values)
    cats = ["overall", *CATEGORIES.values()]
    n = {c: len(merged["hybrid"][10][c]) for c in cats}
    print(f"\nLoCoMo dev ({', '.join(c.name for c in convs)}), {n['overall']} questions")
    print("| search | k | " + " | ".join(f"{c} (n={n[c]})" for c in cats) + " |")
    print("|---|---:|" + "---:|" * len(cats))
    table = {}
    for mode in MODES:
        for k in KS:
            row = {c: statistics.mean(merged[mode][k][c]) if merged[mode][k][c] else 0.0 for c in cats}
            table[f"{mode}@{k}"] = row
            print(f"| {mode} | {k} | " + " | ".join(f"{row[c]:.3f}" for c in cats) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
