"""How memory.db grows over simulated days, and what it grows with (issue 23, defect 13).

`nexus-ark simulate` (the scripted mind, the injectable clock, the runtime the app uses) runs Aria for --days
days twice: with the person talking on ~60 % of the days (the simulation's default) and at rest (the person
talks on the first day only; the persona lives on: heartbeats, drives, dreams). Reported: memory.db's own
size (pages, without the write-ahead log) on the first and last day, the mean growth a day, the growth a day
once the retention window (memory/retention.DETAIL_DAYS) is full, where the bytes are at the end (dbstat, by
what the tables hold), and the space not holding rows (free pages, and room left inside pages). --keep DIR
keeps a copy of each run's memory.db as it was at the end (its pages copied as they were, by SQLite's backup
API): `select name, sum(pgsize) from dbstat group by name` on it gives every table and index.

    .venv/bin/python -m bench.growth [--days 90] [--persona aria|hikari] [--json out.json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path

from nexus_ark.memory.db import sqlite
from nexus_ark.memory.retention import DETAIL_DAYS
from nexus_ark.paths import shipped_personas_dir
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from nexus_ark.simulation import simulate

# What each table (or index, or FTS/vector shadow table) holds, by its name's start.
GROUPS = (
    ("timeline", ("activity",)),
    ("drive history", ("drive_",)),
    ("dreams", ("dream_jobs",)),
    (
        "conversation and recall",
        ("messages", "items", "embeddings", "vec_", "vector_log", "conversation_summaries", "emotion_log"),
    ),
)


def _group(name: str) -> str:
    for group, prefixes in GROUPS:
        if name.startswith(prefixes):
            return group
    return "other"


def run(days: int, talk_share: float, keep: Path | None = None, persona: str = "aria") -> dict:
    where: dict[str, int] = {}
    stored: dict[str, int] = {}

    def look(runtime: PersonaRuntime) -> None:
        db = runtime.memory.db
        rows = db.execute("select name, sum(pgsize) from dbstat group by name").fetchall()
        for name, size in rows:
            where[_group(name)] = where.get(_group(name), 0) + int(size)
        stored["messages"] = db.execute("select count(*) from messages").fetchone()[0]
        stored["unused"] = db.execute("select sum(unused) from dbstat").fetchone()[0]
        stored["free"] = (
            db.execute("pragma freelist_count").fetchone()[0] * db.execute("pragma page_size").fetchone()[0]
        )
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            copy = sqlite.connect(str(keep / f"memory-{persona}-{days}d-talk{talk_share:.1f}.db"))
            db.conn.backup(copy)
            copy.close()

    report = simulate(
        shipped_personas_dir() / persona,
        days,
        start=datetime(2026, 11, 23, tzinfo=UTC),
        talk_share=talk_share,
        at_end=look,
    )
    sizes = report.db_bytes
    settled = min(DETAIL_DAYS + 5, len(sizes) - 1)
    return {
        "days": days,
        "talk_share": talk_share,
        "user_messages": report.user_messages,
        "first_bytes": sizes[0],
        "last_bytes": sizes[-1],
        "growth_bytes": sizes[-1] - sizes[0],
        "bytes_per_day": round((sizes[-1] - sizes[0]) / max(1, len(sizes) - 1)),
        "bytes_per_day_after_window": round((sizes[-1] - sizes[settled]) / max(1, len(sizes) - 1 - settled)),
        "bytes_by_content": dict(sorted(where.items(), key=lambda kv: -kv[1])),
        "messages": stored["messages"],  # the person's, the persona's replies and what it wrote first
        "conversation_bytes_per_message": round(
            where.get("conversation and recall", 0) / max(1, stored["messages"])
        ),
        "free_page_bytes": stored["free"],  # pages on the free list (incremental vacuum gives them back)
        "unused_in_pages_bytes": stored["unused"],  # room inside pages that hold rows
        "seconds": report.seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="a folder for a copy of each run's memory.db at the end")
    parser.add_argument("--persona", default="aria", help="aria (English) or hikari (Japanese)")
    args = parser.parse_args()
    results = [run(args.days, share, args.keep, args.persona) for share in (0.6, 0.0)]
    for r in results:
        print(
            f"talk share {r['talk_share']:.1f}: {r['first_bytes']:,} -> {r['last_bytes']:,} bytes in "
            f"{r['days']} days ({r['user_messages']} messages from the person): "
            f"{r['bytes_per_day']:,} a day, "
            f"{r['bytes_per_day_after_window']:,} a day once the window is full; {r['seconds']} s; "
            f"{r['messages']} messages stored, conversation and recall "
            f"{r['conversation_bytes_per_message']:,} bytes a message; free pages {r['free_page_bytes']:,}, "
            f"unused inside pages {r['unused_in_pages_bytes']:,} bytes"
        )
        for group, size in r["bytes_by_content"].items():
            print(f"    {group:26s} {size:>10,}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
