"""The float vectors the archive re-scores with, kept as float16 (since m019) against float32 (before) and
int8 (an experiment): recall and search speed (issue 23, defect 13: what 90 days take on disk).

Recall: the recall bench runs as always (bench/memory_recall.py for LoCoMo, bench/memory_recall_ja.py for
the Japanese and mixed sets), with the archive's vectors written as
- f16: the app as it is (float16 in `embeddings`, read back as float32);
- f32: as before m019 (float32 bytes, which this version still reads);
- i8: the float32 vector rounded as int8 with one scale a vector would give it back (kept as float32 bytes,
  so only the int8 rounding is measured).
Each mode stores its vectors through archive/vectors.py's one writer (vector_bytes) and reads them back the
app's way, so the bits vec0 scans are made from the vector as stored, as in the app.

    .venv/bin/python -m bench.vector_rounding f32|f16|i8 locomo|ja

Speed: synthetic items at each size (bench/memory_latency.py's: random unit vectors, Zipf-like words) with
float32 vectors, the same query vectors searched; then the embeddings table converted by migration m019's
own code, and the same searches again; twice each, alternating, on the same store (a loaded machine moves
between runs). The search is timed alone (hybrid: both keyword rankings, the bit scan and the re-scoring of
150 candidates; the query embedded beforehand).

    .venv/bin/python -m bench.vector_rounding speed [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import nexus_ark.memory.archive.vectors as archive_vectors


def rounded(vector: np.ndarray, kind: str) -> np.ndarray:
    if kind == "i8":
        scale = float(np.abs(vector).max()) / 127 or 1.0
        return (np.round(vector / scale).astype(np.int8).astype(np.float32) * scale).astype(np.float32)
    return np.asarray(vector, dtype=np.float32)


def recall(kind: str, which: str) -> None:
    if kind in ("f32", "i8"):
        archive_vectors.vector_bytes = lambda v: rounded(v, kind).tobytes()  # type: ignore[assignment]
    elif kind != "f16":
        raise SystemExit(f"unknown kind {kind!r}: f32, f16 or i8")
    if which == "locomo":
        from bench import memory_recall as bench
    else:
        from bench import memory_recall_ja as bench
    sys.argv = sys.argv[:1]
    bench.main()


def speed(argv: list[str]) -> None:
    from bench.memory_latency import QUESTIONS, WORDS, grow, pct
    from nexus_ark.memory.db import connect
    from nexus_ark.memory.migrations.steps_archive import m019_vectors_in_float16
    from nexus_ark.memory.store import MemoryStore
    from nexus_ark.providers.embedders import default_embedder

    parser = argparse.ArgumentParser(prog="bench.vector_rounding speed")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    embedder = default_embedder()
    rng = random.Random(7)
    queries = [
        QUESTIONS[i % len(QUESTIONS)] + " " + " ".join(rng.choice(WORDS) for _ in range(2))
        for i in range(args.queries)
    ]
    vectors = [embedder.embed_query(q) for q in queries]
    print("| items | float32: search p50 / p95 (ms) | float16: search p50 / p95 (ms) | f16 / f32 p50 |")
    print("|---:|---:|---:|---:|")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = MemoryStore(Path(tmp) / "speed.db")
            table = store.archive.vec_table(embedder)
            grow(store, table, embedder.model_id, 0, size, embedder.dim)  # float32 vectors, as before m019
            f32_db = Path(tmp) / "f32.db"
            copy = connect(f32_db)
            store.db.conn.backup(copy.conn)
            copy.conn.close()
            f16 = MemoryStore(Path(tmp) / "speed.db")
            started = time.perf_counter()
            with f16.db.atomic():
                m019_vectors_in_float16(f16.db)
            converted_s = time.perf_counter() - started
            f16.close()
            store.close()
            stores = {"f32": MemoryStore(f32_db), "f16": MemoryStore(Path(tmp) / "speed.db")}
            lengths = {
                k: s.db.execute("select avg(length(vector)) from embeddings").fetchone()[0]
                for k, s in stores.items()
            }
            assert lengths == {"f32": 4 * embedder.dim, "f16": 2 * embedder.dim}, lengths
            times: dict[str, list[float]] = {"f32": [], "f16": []}
            found: dict[str, list[list[int]]] = {"f32": [], "f16": []}
            for _ in range(2):
                for kind, s in stores.items():
                    s.archive.search(queries[0], embedder, k=10, query_vector=vectors[0])  # the mirror loads
                    found[kind] = []
                    for q, v in zip(queries, vectors, strict=True):
                        t0 = time.perf_counter()
                        hits = s.archive.search(q, embedder, k=10, query_vector=v)
                        times[kind].append(time.perf_counter() - t0)
                        found[kind].append([h.item_id for h in hits])
            same = sum(a == b for a, b in zip(found["f32"], found["f16"], strict=True))
            for s in stores.values():
                s.close()
        a, b = times["f32"], times["f16"]
        print(
            f"| {size:,} | {pct(a, 50):.1f} / {pct(a, 95):.1f} | {pct(b, 50):.1f} / {pct(b, 95):.1f} "
            f"| {pct(b, 50) / pct(a, 50):.2f} |   (the same top 10 for {same} of {len(queries)} queries; "
            f"m019 converted {size:,} vectors in {converted_s:.1f} s)",
            flush=True,
        )


def main() -> None:
    if sys.argv[1] == "speed":
        speed(sys.argv[2:])
    else:
        recall(sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()
