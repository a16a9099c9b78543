"""Recall in Japanese and in mixed Japanese/English chat: the check issue 7 (item 13) asked for.

Four conversations written for this project (bench/data/recall_ja, CC0): a long-running companion chat over
several days with names, places, food, plans and feelings scattered through it; every question's evidence is
one turn, and most questions are paraphrases that share few or no words with their evidence (each is marked
"direct" or "paraphrase" in gold.jsonl). `*-tune` sets were used to tune the fusion; `*-heldout` sets were
written alongside them but looked at only to check the result.

Each set is imported into a fresh memory.db through the same code as `nexus-ark memory import`, embedded with
the bundled e5 model, and every question is searched in the three modes of `Archive.search`: hybrid (the
app's), fts (keyword rankings only) and vector (the e5 ranking only). recall@k = share of questions whose
evidence turn is among the top k hits.

    .venv/bin/python -m bench.memory_recall_ja [--sets ja-tune,mixed-tune] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import Embedder, default_embedder

DATA = Path(__file__).resolve().parent / "data" / "recall_ja"
SETS = ("ja-tune", "mixed-tune", "ja-heldout", "mixed-heldout")
MODES = ("hybrid", "fts", "vector")
KS = (1, 5, 10)


def evaluate_set(folder: Path, workdir: Path, embedder: Embedder) -> dict[str, dict[int, list[float]]]:
    """recall@k of each question (in queries.jsonl order) for each mode: {mode: {k: [0.0 or 1.0, ...]}}."""
    store = MemoryStore(workdir / f"{folder.name}.db")
    try:
        report = import_jsonl(folder / "turns.jsonl", on_store(store), set())
        if report.errors:
            raise ValueError(f"{folder}: bad lines: {report.errors}")
        store.archive.embed_pending(embedder)
        gold = {g["id"]: g for g in map(json.loads, (folder / "gold.jsonl").read_text("utf-8").splitlines())}
        scores: dict[str, dict[int, list[float]]] = {m: {k: [] for k in KS} for m in MODES}
        for line in (folder / "queries.jsonl").read_text("utf-8").splitlines():
            q = json.loads(line)
            evidence = gold[q["id"]]["evidence"]
            vector = embedder.embed_query(q["query"])
            for mode in MODES:
                hits = store.archive.search(q["query"], embedder, k=max(KS), mode=mode, query_vector=vector)
                ids = [h.source_id for h in hits]
                for k in KS:
                    scores[mode][k].append(sum(e in ids[:k] for e in evidence) / len(evidence))
        return scores
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--json")
    args = parser.parse_args()
    embedder = default_embedder()
    table: dict[str, dict[str, float]] = {}
    print("| set | questions | search | recall@1 | recall@5 | recall@10 |")
    print("|---|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets.split(","):
            scores = evaluate_set(args.data / name, Path(tmp), embedder)
            for mode in MODES:
                row = {f"@{k}": statistics.mean(scores[mode][k]) for k in KS}
                table[f"{name}/{mode}"] = row
                n = len(scores[mode][10])
                print(f"| {name} | {n} | {mode} | " + " | ".join(f"{row[f'@{k}']:.3f}" for k in KS) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
