"""How much of what a dream writes a person would call faithful to the conversation, per model (issue 21).

Conversations written for this bench (bench/data/faithfulness/conversations.jsonl: two people, two days
each; not tests/data, which the tests use) are imported, one memory per person, into a copy of the
shipped Aria, and each day is dreamt at level 1 on each model:

- bundled: SmolLM2-135M through llama.cpp, as the app runs it (below the reflection capability: the day
  in its own words, nothing asked of the model);
- bundled-asked: the same model asked to reflect anyway (Dreamer(reflect=True)), so the grounding
  check's effect on what a small model invents is seen;
- scripted: the deterministic ScriptedMind (nexus_ark/runtime/scripted_mind.py);
- gguf:PATH: any GGUF file through llama.cpp, as the app would run it (its capability record decides).

Every item a dream wrote (an episode sentence, a key event, an entity line, an insight, a question, a
goal) and every item the grounding check refused is looked up in the hand-labelled set
(bench/data/faithfulness/labels.jsonl: {"text", "faithful": true|false, "why"}); labels were written by
reading each item against the day's messages. Reported per model: items proposed, written, refused; the
share of written items labelled faithful; the share refused; of the refused, the share labelled
unfaithful (the check's precision). Items without a label are counted and printed (--unlabelled writes
them as JSON lines to label).

    .venv/bin/python -m bench.dream_faithfulness [--models bundled,bundled-asked,scripted] [--json out.json]
        [--unlabelled new.jsonl]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path
from typing import Any

from nexus_ark.clock import FixedClock
from nexus_ark.dreaming.dream import Dreamer, DreamResult
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.paths import bundled_model_path, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatBackend
from nexus_ark.providers.embedders import default_embedder
from nexus_ark.runtime.scripted_mind import ScriptedMind
from nexus_ark.sentences import sentences

DATA = Path(__file__).resolve().parent / "data" / "faithfulness"
CONVERSATIONS = DATA / "conversations.jsonl"
LABELS = DATA / "labels.jsonl"
MODELS = ("bundled", "bundled-asked", "scripted")


def _lines_by_person() -> dict[str, list[dict[str, Any]]]:
    people: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for raw in CONVERSATIONS.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        people[line["id"].split("-", 1)[0]].append(line)
    return people


def _items(result: DreamResult, store: MemoryStore) -> list[tuple[str, str]]:
    """(kind, text) of everything the dream wrote."""
    items: list[tuple[str, str]] = []
    if result.episode:
        parts = _episode_parts(result.episode["summary"], quoted=result.reflection is not None)
        items += [("episode", s) for s in parts]
        items += [("key event", e) for e in result.episode.get("key_events", [])]
    for name in result.entities_updated:
        entity = store.components.entity(name)
        if entity is not None:
            items += [("entity", f"{name}: {line}") for line in entity.text.splitlines()]
    items += [("insight", i["insight"]) for i in result.insights]
    items += [("question", q["question"]) for q in result.open_questions]
    items += [
        ("goal", g.get("goal") or g.get("note", "")) for g in result.goals if g["change"] != "completed"
    ]
    return items


_QUOTE = re.compile(r'(\w+): "(.+?)"(?= \w+: "|$)')


def _episode_parts(summary: str, quoted: bool) -> list[str]:
    """An extractive episode's quotes, or a written episode's sentences."""
    if quoted:
        return [f'{speaker}: "{words}"' for speaker, words in _QUOTE.findall(summary)]
    return sentences(summary, flat=True)


def _backend(model: str, n_ctx: int) -> ChatBackend:
    if model == "scripted":
        return ScriptedMind()
    from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

    # gguf:PATH: any GGUF file (a model that reflects, once downloaded); its capability record decides.
    path = Path(model.removeprefix("gguf:")) if model.startswith("gguf:") else bundled_model_path()
    backend = LlamaCppBackend(path, n_ctx=n_ctx)
    backend.ensure_ready()
    return backend


def run(models: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    labels = {
        (row := json.loads(raw))["text"]: row
        for raw in LABELS.read_text(encoding="utf-8").splitlines()
        if raw.strip()
    }
    folder = Path(tempfile.mkdtemp(prefix="nexus-bench-faithful-"))
    shutil.copytree(shipped_personas_dir() / "aria", folder / "personas" / "aria")
    persona = PersonaStore(folder / "personas").load("aria")
    embedder = default_embedder()
    report: dict[str, Any] = {}
    unlabelled: list[dict[str, Any]] = []
    for model in models:
        backend = _backend(model, persona.settings.model.context_size)
        tally = defaultdict(int)
        for person, lines in _lines_by_person().items():
            source = folder / f"{person}.jsonl"
            source.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
            days = sorted({x["timestamp"][:10] for x in lines})
            clock = FixedClock(datetime.fromisoformat(f"{days[-1]}T23:30:00").astimezone())
            store = MemoryStore(folder / f"{model}-{person}.db", clock)
            import_jsonl(source, on_store(store), {"Aria"})
            for day in days:
                reflect = True if model == "bundled-asked" else None
                dreamer = Dreamer(persona, store, backend, clock, embedder=embedder, reflect=reflect)
                result = dreamer.run(level=1, day=date.fromisoformat(day))
                written = _items(result, store)
                refused = [(r.stage, r.text) for r in result.grounding.refusals]
                for state, group in (("written", written), ("refused", refused)):
                    for kind, text in group:
                        label = labels.get(text)
                        tally[state] += 1
                        if label is None:
                            tally[f"{state}_unlabelled"] += 1
                            unlabelled.append(
                                {
                                    "text": text,
                                    "faithful": None,
                                    "why": "",
                                    "kind": kind,
                                    "model": model,
                                    "day": day,
                                    "state": state,
                                }
                            )
                        elif label["faithful"]:
                            tally[f"{state}_faithful"] += 1
                print(
                    f"{model} {person} {day}: {len(written)} written, {len(refused)} refused", file=sys.stderr
                )
            store.close()
        close = getattr(backend, "close", None)
        if close is not None:
            close()
        proposed = tally["written"] + tally["refused"]
        judged = tally["written"] - tally["written_unlabelled"]
        refused_judged = tally["refused"] - tally["refused_unlabelled"]
        report[model] = {
            "proposed": proposed,
            "written": tally["written"],
            "refused": tally["refused"],
            "written_faithful_share": round(tally["written_faithful"] / judged, 3) if judged else None,
            "refused_share": round(tally["refused"] / proposed, 3) if proposed else None,
            "refused_unfaithful_share": (
                round((refused_judged - tally["refused_faithful"]) / refused_judged, 3)
                if refused_judged
                else None
            ),
            "unlabelled": tally["written_unlabelled"] + tally["refused_unlabelled"],
        }
    shutil.rmtree(folder, ignore_errors=True)
    return report, unlabelled


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--unlabelled", type=Path, help="write the items without a label here, to label")
    args = parser.parse_args()
    report, unlabelled = run([m for m in args.models.split(",") if m])
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    if args.unlabelled:
        args.unlabelled.write_text(
            "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in unlabelled), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
