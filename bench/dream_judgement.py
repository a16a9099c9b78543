"""What the bundled model's dreams keep of a real long conversation, printed to be judged by hand (issue 32).

LoCoMo conversations (../shared/data/locomo-dev/conv-*/turns.jsonl; CC BY-NC 4.0, Maharana et al. 2024)
are two friends talking over months. Each is imported as a person's conversation with the shipped Aria:
the first speaker is the person (`memory import --user-name NAME`, and the persona's user_name), the
other speaker's lines become Aria's (their speaker renamed to the persona's name; the words still call
her "Mel" or "Gina", as an imported chat with another name would). The person's messages are read for
feelings as `memory import` reads them; then each of the first --days days is dreamt at level 1 on the
bundled SmolLM2-135M (below the reflection capability: the extractive path) with the app's embedder.

Printed for each day: the day's messages (--show-day), then every record the dream wrote: the episode
(its quotes and its tone) and each entity it wrote or added to that day (the lines added), marked
[person] for the entity marked as the person. --json writes the records as JSON lines, one a record, with
`faithful` and `worth` left null for the judge to fill.

    .venv/bin/python -m bench.dream_judgement [--data ../shared/data/locomo-dev] [--conversations
        conv-26,conv-30] [--days 3] [--show-day] [--json records.jsonl] [--no-user-name] [--as-user] [--swap]

--no-user-name: the person's name is not told; --as-user: the person's turns have the speaker "user" (as
the chat stores them), so only what the words call them names them; --swap: the second speaker is the
person.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from nexus_ark.clock import FixedClock
from nexus_ark.dreaming.dream import Dreamer
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.mind.imported import read_unread_feelings
from nexus_ark.paths import bundled_model_path, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.embedders import default_embedder
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev"


def _turns(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _records(store: MemoryStore, day: str, before: dict[str, str]) -> list[dict[str, Any]]:
    """The episode of `day` and what each entity gained that day."""
    c = store.components
    records: list[dict[str, Any]] = []
    for episode in c.episodes(since=day):
        if episode.date == day:
            records.append({"kind": "episode", "text": episode.summary, "tone": episode.emotional_tone})
    person = c.person_entity()
    for entity in c.entities():
        old = before.get(entity.name, "")
        if entity.text != old:
            added = entity.text[len(old) :].strip() if entity.text.startswith(old) else entity.text
            records.append(
                {
                    "kind": "person" if entity.name == person else "entity",
                    "name": entity.name,
                    "text": added,
                }
            )
    return records


def run(
    data: Path,
    conversations: list[str],
    days: int,
    *,
    user_name: bool,
    swap: bool,
    show_day: bool,
    as_user: bool = False,
) -> list[dict[str, Any]]:
    folder = Path(tempfile.mkdtemp(prefix="nexus-bench-judgement-"))
    shutil.copytree(shipped_personas_dir() / "aria", folder / "personas" / "aria")
    aria = PersonaStore(folder / "personas").load("aria")
    embedder = default_embedder()
    detector = EmotionDetector()
    backend = LlamaCppBackend(bundled_model_path(), n_ctx=aria.settings.model.context_size)
    backend.ensure_ready()
    out: list[dict[str, Any]] = []
    try:
        for conv in conversations:
            turns = _turns(data / conv / "turns.jsonl")
            sessions = list(dict.fromkeys(t["id"].split(":")[0] for t in turns))[:days]
            turns = [t for t in turns if t["id"].split(":")[0] in sessions]
            speakers = list(dict.fromkeys(t["speaker"] for t in turns))
            person, other = (speakers[1], speakers[0]) if swap else (speakers[0], speakers[1])
            lines = [
                {**t, "speaker": aria.settings.name if t["speaker"] == other else t["speaker"]} for t in turns
            ]
            source = folder / f"{conv}.jsonl"
            source.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
            persona = replace(aria, user_name=person if user_name and not as_user else "")
            last = max(t["timestamp"] for t in turns)
            clock = FixedClock(datetime.fromisoformat(last).replace(hour=23, minute=30).astimezone())
            store = MemoryStore(folder / f"{conv}.db", clock)
            import_jsonl(source, on_store(store), {aria.slug, aria.settings.name}, persona.user_name)
            read_unread_feelings(store, detector)
            for day in sorted({t["timestamp"][:10] for t in turns}):
                if show_day:
                    print(f"\n=== {conv} {day}: the day ({person} is the person) ===")
                    for t in turns:
                        if t["timestamp"][:10] == day:
                            print(f"[{t['id']}] {t['speaker']}: {t['text']}")
                before = {e.name: e.text for e in store.components.entities()}
                result = Dreamer(persona, store, backend, clock, embedder=embedder).run(
                    level=1, day=date.fromisoformat(day)
                )
                print(f"\n--- {conv} {day}: what the dream wrote ({result.stages}) ---")
                for record in _records(store, day, before):
                    record.update({"conversation": conv, "day": day, "faithful": None, "worth": None})
                    out.append(record)
                    head = (
                        record["kind"]
                        if record["kind"] == "episode"
                        else f"{record['kind']} {record['name']}"
                    )
                    tone = f" (tone: {record['tone']})" if record["kind"] == "episode" else ""
                    print(f"* {head}{tone}:\n  {record['text'].replace(chr(10), chr(10) + '  ')}")
                refused = result.grounding.refusals
                if refused:
                    print(f"  ({len(refused)} refused: {[r.text for r in refused]})")
            store.close()
    finally:
        backend.close()
        shutil.rmtree(folder, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", default="conv-26,conv-30")
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument(
        "--show-day", action="store_true", help="print each day's messages before its records"
    )
    parser.add_argument("--json", type=Path, help="write the records here, one JSON line each, to judge")
    parser.add_argument("--no-user-name", action="store_true", help="the person's name is not told")
    parser.add_argument("--swap", action="store_true", help="the second speaker is the person")
    parser.add_argument(
        "--as-user",
        action="store_true",
        help='the person speaks as "user" (as the chat stores them), unnamed',
    )
    args = parser.parse_args()
    records = run(
        args.data,
        [c for c in args.conversations.split(",") if c],
        args.days,
        user_name=not args.no_user_name,
        swap=args.swap,
        show_day=args.show_day,
        as_user=args.as_user,
    )
    print(f"\n{len(records)} records", file=sys.stderr)
    if args.json:
        args.json.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
