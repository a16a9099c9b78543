"""Recall on LoCoMo (../shared/data/locomo-dev): import each conversation's turns into a fresh persona
memory, ask its questions, and score recall@1/5/10 per category and overall: the app's hybrid search
next to an FTS5-only and a vector-only run of the same code.

recall@k for a question = share of its evidence turn ids among the top k hits (LoCoMo's evidence).

    .venv/bin/python -m bench.memory_recall [--data ../shared/data/locomo-dev] [--json out.json]
    .venv/bin/python -m bench.memory_recall --cv [--variants a,b] [--misses out.jsonl]

`--cv`: cross-validation over the conversations. Every variant (VARIANTS: the search as it is, and the same
search with one idea turned off or set otherwise) runs on every conversation; each fold chooses the variant
best on the conversations it tunes on (overall recall@10, then @5) and reports it on the one held out.
The pooled table is the held-out folds' questions together: what a choice made without seeing a
conversation gives on it. Embeddings are cached on disk (the text's hash, the model id): a second run
embeds nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import pickle
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import Embedder, default_embedder

REPO = Path(__file__).resolve().parent.parent
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
CATS = ["overall", *CATEGORIES.values()]
MODES = ("hybrid", "fts", "vector")
KS = (1, 5, 10)
CACHE = Path(tempfile.gettempdir()) / "nexus_ark_bench_e5_cache.pkl"

# Variants for --cv: the search as it is ("app"), and with a setting changed ("module.NAME": value). The
# first is the baseline the pooled table shows beside the per-fold choice; a tie goes to the one listed
# first.
S = "nexus_ark.memory.archive.search."
SS = "nexus_ark.memory.archive.written_units."
VARIANTS: dict[str, dict[str, Any]] = {
    "before": {
        S + "FEEDBACK_HITS": 0,
        S + "SPEAKER_BOOST": 0.0,
        S + "DATE_BOOST": 0.0,
        S + "VECTOR_CANDIDATES": 150,
    },
    "500 candidates only": {S + "FEEDBACK_HITS": 0, S + "SPEAKER_BOOST": 0.0, S + "DATE_BOOST": 0.0},
    "speaker only": {S + "FEEDBACK_HITS": 0, S + "DATE_BOOST": 0.0},
    "feedback only": {S + "SPEAKER_BOOST": 0.0, S + "DATE_BOOST": 0.0},
    "300 candidates": {S + "VECTOR_CANDIDATES": 300},
    "feedback 3 hits": {S + "FEEDBACK_HITS": 3},
    "feedback 5 hits": {S + "FEEDBACK_HITS": 5},
    "feedback weight 0.5": {S + "FEEDBACK_WEIGHT": 0.5},
    "feedback weight 1.0": {S + "FEEDBACK_WEIGHT": 1.0},
    "speaker 0.3": {S + "SPEAKER_BOOST": 0.3},
    "app": {},
    "no date weight": {S + "DATE_BOOST": 0.0},
    "date weight 0.2": {S + "DATE_BOOST": 0.2},
    "date weight 1.0": {S + "DATE_BOOST": 1.0},
    # Session 19's start (issue 37): the lead-back from written units off (memory import writes none).
    "session start": {SS + "LEAD_WEIGHT": 0.0},
}

Scores = dict[str, dict[int, dict[str, list[float]]]]  # mode -> k -> category -> per-question recall


class CachedEmbedder(Embedder):
    """The bundled embedder with every vector kept on disk by its text's hash: a bench run embeds only what
    no earlier run did (the machine is shared; embedding a conversation took most of a run)."""

    def __init__(self, inner: Embedder, path: Path = CACHE) -> None:
        self.inner, self.path = inner, path
        self.model_id, self.dim = inner.model_id, inner.dim
        self.cache: dict[str, bytes] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self.dirty = False

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self.model_id}\0{kind}\0{text}".encode()).hexdigest()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key("p", t) for t in texts]
        missing = [(k, t) for k, t in zip(keys, texts, strict=True) if k not in self.cache]
        if missing:
            fresh = self.inner.embed_passages([t for _, t in missing])
            for (k, _), v in zip(missing, fresh, strict=True):
                self.cache[k] = np.asarray(v, np.float32).tobytes()
            self.dirty = True
        return (
            np.stack([np.frombuffer(self.cache[k], np.float32) for k in keys])
            if keys
            else np.zeros((0, self.dim), np.float32)
        )

    def embed_query(self, text: str) -> np.ndarray:
        k = self._key("q", text)
        if k not in self.cache:
            self.cache[k] = np.asarray(self.inner.embed_query(text), np.float32).tobytes()
            self.dirty = True
        return np.frombuffer(self.cache[k], np.float32)

    def save(self) -> None:
        if self.dirty:
            self.path.write_bytes(pickle.dumps(self.cache))
            self.dirty = False


@contextmanager
def patched(settings: dict[str, Any]) -> Iterator[None]:
    """Module constants set for one variant, restored after."""
    old = []
    for name, value in settings.items():
        module, attr = name.rsplit(".", 1)
        mod = importlib.import_module(module)
        old.append((mod, attr, getattr(mod, attr)))
        setattr(mod, attr, value)
    try:
        yield
    finally:
        for mod, attr, value in reversed(old):
            setattr(mod, attr, value)


def _empty() -> Scores:
    return {m: {k: defaultdict(list) for k in KS} for m in MODES}


def evaluate(
    conv: Path, workdir: Path, embedder: Embedder, modes: Sequence[str] = MODES, misses: list | None = None
) -> tuple[Scores, float]:
    store = MemoryStore(workdir / f"{conv.name}-{time.monotonic_ns()}.db")
    started = time.perf_counter()
    import_jsonl(conv / "turns.jsonl", on_store(store), set())
    store.archive.embed_pending(embedder)
    import_s = time.perf_counter() - started
    gold = {g["id"]: g for g in map(json.loads, (conv / "gold.jsonl").read_text().splitlines())}
    scores = _empty()
    for line in (conv / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        g = gold[q["id"]]
        vector = embedder.embed_query(q["query"])
        for mode in modes:
            hits = store.archive.search(q["query"], embedder, k=10, mode=mode, query_vector=vector)  # type: ignore[arg-type]
            ids = [h.source_id for h in hits]
            for k in KS:
                value = sum(e in ids[:k] for e in g["evidence"]) / len(g["evidence"])
                scores[mode][k]["overall"].append(value)
                scores[mode][k][CATEGORIES[g["category"]]].append(value)
            if misses is not None and mode == "hybrid":
                misses.append(
                    {"conv": conv.name, **q, **g, "found": [e for e in g["evidence"] if e in ids], "top": ids}
                )
    store.close()
    return scores, import_s


def merge(into: Scores, scores: Scores) -> None:
    for mode in scores:
        for k in KS:
            for cat, values in scores[mode][k].items():
                into[mode][k][cat].extend(values)


def mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 0.0


def print_table(
    title: str, rows: dict[str, dict[int, dict[str, list[float]]]]
) -> dict[str, dict[str, float]]:
    """rows: label -> k -> category -> values. Prints a Markdown table; returns the means."""
    first = next(iter(rows.values()))
    n = {c: len(first[10][c]) for c in CATS}
    print(f"\n{title}")
    print("| search | k | " + " | ".join(f"{c} (n={n[c]})" for c in CATS) + " |")
    print("|---|---:|" + "---:|" * len(CATS))
    table = {}
    for label, by_k in rows.items():
        for k in KS:
            row = {c: mean(by_k[k][c]) for c in CATS}
            table[f"{label}@{k}"] = row
            print(f"| {label} | {k} | " + " | ".join(f"{row[c]:.3f}" for c in CATS) + " |")
    return table


def key(scores: Scores) -> tuple[float, float]:
    return mean(scores["hybrid"][10]["overall"]), mean(scores["hybrid"][5]["overall"])


def cross_validate(convs: list[Path], tmp: Path, embedder: CachedEmbedder, variants: list[str]) -> dict:
    per: dict[str, dict[str, Scores]] = {}
    for name in variants:
        per[name] = {}
        with patched(VARIANTS[name]):
            for conv in convs:
                per[name][conv.name], _ = evaluate(conv, tmp, embedder, modes=("hybrid",))
                embedder.save()
        print(
            f"{name}: "
            + ", ".join(
                f"{c} @1/@5/@10 {mean(s['hybrid'][1]['overall']):.3f}/{mean(s['hybrid'][5]['overall']):.3f}"
                f"/{mean(s['hybrid'][10]['overall']):.3f}"
                for c, s in per[name].items()
            ),
            flush=True,
        )
    held, base = _empty(), _empty()
    for test in convs:
        tune = [c.name for c in convs if c != test]
        pooled_tune = {}
        for name in variants:
            scores = _empty()
            for c in tune:
                merge(scores, per[name][c])
            pooled_tune[name] = key(scores)
        chosen = max(variants, key=lambda v: (*pooled_tune[v], -variants.index(v)))
        print(f"fold: tune on {', '.join(tune)} -> {chosen}; held out {test.name}")
        merge(held, per[chosen][test.name])
        merge(base, per[variants[0]][test.name])
    rows = {f"baseline ({variants[0]})": base["hybrid"], "chosen per fold": held["hybrid"]}
    for name in variants:
        for conv in convs:
            rows[f"{name} on {conv.name}"] = per[name][conv.name]["hybrid"]
    return print_table("Held-out folds pooled, then each variant on each conversation (hybrid):", rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo-dev")
    parser.add_argument("--json")
    parser.add_argument("--cv", action="store_true", help="cross-validate the VARIANTS over conversations")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--misses", help="write each hybrid question's hits here (JSON Lines)")
    args = parser.parse_args()
    embedder = CachedEmbedder(default_embedder())
    convs = sorted(p for p in args.data.iterdir() if (p / "turns.jsonl").exists())
    with tempfile.TemporaryDirectory() as tmp:
        if args.cv:
            table = cross_validate(convs, Path(tmp), embedder, args.variants.split(","))
        else:
            merged = _empty()
            misses: list = []
            for conv in convs:
                scores, import_s = evaluate(conv, Path(tmp), embedder, misses=misses)
                embedder.save()
                print(f"{conv.name}: imported and embedded in {import_s:.1f} s")
                merge(merged, scores)
            if args.misses:
                Path(args.misses).write_text("".join(json.dumps(m) + "\n" for m in misses))
            names = ", ".join(c.name for c in convs)
            table = print_table(f"LoCoMo dev ({names})", {m: merged[m] for m in MODES})
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
