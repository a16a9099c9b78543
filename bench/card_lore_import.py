"""How long `persona import` takes for big lorebooks (issue 23, defect 5): the whole import_card (read,
check, plan, persona folder, memory) on a temporary data folder, for JSON cards made here:

- same-name: N entries that all have one name (each copy is named "Same (2)", "Same (3)"...);
- at-cap-small: entries of ~220 characters of varied words up to the lore cap (cards.MAX_LORE_CHARS);
- at-cap-1kb: entries of ~1,000 characters up to the cap.

    .venv/bin/python -m bench.card_lore_import [--same 10000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import string
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nexus_ark.app import NexusApp
from nexus_ark.cards_io import import_card
from nexus_ark.clock import FixedClock
from nexus_ark.personas.cards import MAX_LORE_CHARS, lore_text, read_card_file
from tests.cards_maker import v3_card


def _card(entries: list[dict[str, Any]]) -> dict[str, Any]:
    card = v3_card()
    card["data"]["character_book"] = {"entries": entries}
    return card


def _fill(chars: int) -> list[dict[str, Any]]:
    """Entries of about `chars` characters of varied words each (a full-text index costs more for varied
    text than for repeated text), as many as fit under the cap (keys line included)."""
    rnd = random.Random(chars)
    words = [
        "".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(2, 9))) for _ in range(3000)
    ]
    entries: list[dict[str, Any]] = []
    total = 0
    while True:
        text = " ".join(rnd.choice(words) for _ in range(chars // 3))[:chars]
        entry = {"keys": [f"k{len(entries)}"], "content": text}
        size = len(entry["content"]) + len(f"\nKeys: k{len(entries)}")
        if total + size > MAX_LORE_CHARS:
            return entries
        entries.append(entry)
        total += size


def _time_import(folder: Path, name: str, card: dict[str, Any]) -> dict[str, Any]:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    book = read_card_file(path).data.character_book
    chars = sum(len(lore_text(e)) for e in book.entries) if book else 0
    with NexusApp(folder / f"data-{name}", clock=FixedClock(datetime(2026, 5, 23, tzinfo=UTC))) as app:
        started = time.perf_counter()
        done = import_card(app, path)
        seconds = time.perf_counter() - started
    return {"case": name, "entries": done.lore_in_memory, "lore_chars": chars, "seconds": round(seconds, 2)}


def run(same: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        one_name = [{"keys": ["same"], "content": "c", "name": "Same"}] * same
        return [
            _time_import(folder, "same-name", _card(one_name)),
            _time_import(folder, "at-cap-small", _card(_fill(220))),
            _time_import(folder, "at-cap-1kb", _card(_fill(1_000))),
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--same", type=int, default=10_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = run(args.same)
    for row in results:
        entries, chars = row["entries"], row["lore_chars"]
        print(f"{row['case']:>13}: {entries:>6} entries, {chars:>9,} chars, {row['seconds']} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
