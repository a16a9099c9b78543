"""What archive/links.py costs a search at scale, interleaved on one memory.db (bench.memory_latency's
synthetic items and questions): A = the search without links.py's calls (as before issue 37's links), B =
as shipped (every link off), C = links.NAME_WEIGHT 0.2 (the one that reads more: the candidates' speakers),
S = session 19's start (A, and archive/sessions.py's lead-back from written units off: the whole search
before issue 37's second round). Each question runs all four, in a random order, so the machine's load
weighs on each alike.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.memory_links_latency [--size 100000]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.memory_latency import QUESTIONS, WORDS, grow, pct
from nexus_ark.memory.archive import links, sessions
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=120)
    args = parser.parse_args()
    embedder = default_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "scale.db")
        grow(store, store.archive.vec_table(embedder), embedder.model_id, 0, args.size, embedder.dim)
        rng = random.Random(3)
        queries = [
            QUESTIONS[i % len(QUESTIONS)] + " " + " ".join(rng.choice(WORDS) for _ in range(2))
            for i in range(args.queries)
        ]
        vectors = [embedder.embed_query(q) for q in queries]
        hooks = store.archive.recall.links
        shipped = (hooks.seeds, hooks.without_names, hooks.rankings)

        lead = sessions.LEAD_WEIGHT

        def use(variant: str) -> None:
            sessions.LEAD_WEIGHT = 0.0 if variant == "S" else lead
            if variant in ("A", "S"):  # instance attributes shadow the methods: what search did before
                hooks.seeds = lambda best, n: best[:n]  # type: ignore[method-assign]
                hooks.without_names = lambda query, vector, pool, embedder: vector  # type: ignore[method-assign]
                hooks.rankings = lambda *_: []  # type: ignore[method-assign]
            else:
                hooks.seeds, hooks.without_names, hooks.rankings = shipped  # type: ignore[method-assign]
            links.NAME_WEIGHT = 0.2 if variant == "C" else 0.0

        for query, vector in zip(queries[:6], vectors[:6], strict=True):  # warm up
            store.archive.search(query, embedder, k=10, query_vector=vector)
        times: dict[str, list[float]] = {"A": [], "B": [], "C": [], "S": []}
        for query, vector in zip(queries, vectors, strict=True):
            for variant in rng.sample(sorted(times), len(times)):
                use(variant)
                started = time.perf_counter()
                store.archive.search(query, embedder, k=10, query_vector=vector)
                times[variant].append(time.perf_counter() - started)
        use("B")
        store.close()
    print(f"{args.size:,} items, {args.queries} questions, search only (the query embedded beforehand):")
    labels = (
        ("S", "session start"),
        ("A", "without links.py"),
        ("B", "as shipped"),
        ("C", "NAME_WEIGHT 0.2"),
    )
    for variant, label in labels:
        t = times[variant]
        print(f"{variant} {label}: p50 {pct(t, 50):.1f} ms, p95 {pct(t, 95):.1f} ms")
    print(f"B / A p50: {pct(times['B'], 50) / pct(times['A'], 50):.2f}")
    print(f"B / S p50: {pct(times['B'], 50) / pct(times['S'], 50):.2f}")


if __name__ == "__main__":
    main()
