"""What a dream costs with the bundled model, per level, and how often its answers validate first time.

The conversation of tests/data/dream_days.jsonl (five days, written for Nexus Ark) is imported into a fresh
persona through the memory importer; then a level-1, a level-2 and a level-3 dream run on its last day
(each a fresh copy of the memory, so every level dreams the same material), on the bundled model through
llama.cpp as the internal model, --repeats times each. Reported per level: wall seconds (median, min, max),
stages done / skipped, structured answers valid at the first try out of those asked.

    .venv/bin/python -m bench.dream [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path

from nexus_ark.clock import SystemClock
from nexus_ark.dreaming.dream import Dreamer
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.paths import bundled_model_path, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

CONVERSATION = Path(__file__).resolve().parents[1] / "tests" / "data" / "dream_days.jsonl"
DAY = date(2026, 11, 20)


def run(repeats: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="nexus-bench-dream-"))
    shutil.copytree(shipped_personas_dir() / "aria", folder / "personas" / "aria")
    persona = PersonaStore(folder / "personas").load("aria")  # the shipped Aria, soul and settings
    seed_db = folder / "seed.db"
    memory = MemoryStore(seed_db)
    import_jsonl(CONVERSATION, on_store(memory), {"Aria"})
    memory.close()
    backend = LlamaCppBackend(bundled_model_path(), n_ctx=persona.settings.model.context_size)
    backend.ensure_ready()
    levels: dict[str, dict] = {}
    for level in (1, 2, 3):
        runs = []
        for i in range(repeats):
            db = folder / f"l{level}-{i}.db"
            shutil.copy(seed_db, db)
            store = MemoryStore(db)
            result = Dreamer(persona, store, backend, SystemClock()).run(level=level, day=DAY)
            store.close()
            runs.append(result)
            print(
                f"level {level} run {i + 1}: {result.seconds} s, {result.stages}", file=sys.stderr, flush=True
            )
        seconds = [r.seconds for r in runs]
        levels[str(level)] = {
            "seconds_median": round(statistics.median(seconds), 2),
            "seconds_min": min(seconds),
            "seconds_max": max(seconds),
            "stages": len(runs[0].stages),
            "stages_done": sum(s == "done" for r in runs for s in r.stages.values()) / repeats,
            "first_try_valid": sum(r.first_try_valid for r in runs),
            "answers": sum(r.answers for r in runs),
            "skipped_reasons": sorted({s for r in runs for s in r.stages.values() if s != "done"}),
        }
    backend.close()
    shutil.rmtree(folder, ignore_errors=True)
    return {"model": "SmolLM2-135M-Instruct Q4_1 (bundled)", "repeats": repeats, "levels": levels}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args.repeats)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
