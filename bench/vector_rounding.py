"""Recall if the archive kept its float vectors in a smaller type (issue 23, defect 13: what 90 days take on
disk). An experiment, the app unchanged: after each bench set is embedded, every vector in the embeddings
table is rewritten as float16 or int8 (one scale a vector) would give it back, then the recall bench runs as
always (bench/memory_recall.py for LoCoMo, bench/memory_recall_ja.py for the Japanese and mixed sets). The
bits vec0 scans are made from the float32 vectors as before; only the re-scoring reads the rounded ones.

    .venv/bin/python -m bench.vector_rounding f32|f16|i8 locomo|ja
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from nexus_ark.memory.archive.vectors import ArchiveVectors


def rounded(vector: np.ndarray, kind: str) -> np.ndarray:
    if kind == "f16":
        return vector.astype(np.float16).astype(np.float32)
    if kind == "i8":
        scale = float(np.abs(vector).max()) / 127 or 1.0
        return (np.round(vector / scale).astype(np.int8).astype(np.float32) * scale).astype(np.float32)
    return vector


def main() -> None:
    kind, which = sys.argv[1], sys.argv[2]
    embed = ArchiveVectors.embed_pending

    def then_round(self: ArchiveVectors, embedder: Any, **kwargs: Any) -> int:
        done = embed(self, embedder, **kwargs)
        rows = self.db.execute("select id, vector from embeddings").fetchall()
        with self.db.atomic():
            for row_id, blob in rows:
                vector = rounded(np.frombuffer(blob, dtype=np.float32), kind)
                self.db.execute("update embeddings set vector = ? where id = ?", [vector.tobytes(), row_id])
        return done

    ArchiveVectors.embed_pending = then_round  # type: ignore[method-assign]
    if which == "locomo":
        from bench import memory_recall as bench
    else:
        from bench import memory_recall_ja as bench
    sys.argv = sys.argv[:1]
    bench.main()


if __name__ == "__main__":
    main()
