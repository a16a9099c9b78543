"""A persona's whole memory out and back in: readable Markdown for people, JSON for the round trip.
Rotating backups of memory.db are memory/backups.py's."""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from nexus_ark.clock import time_problem
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.soul_rows import SoulVersions
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import clipped, notice
from nexus_ark.paths import WINDOWS_RESERVED

log = logging.getLogger(__name__)

# Tables in an order that respects their references. Vectors are not exported: they are derived from
# the text and rebuilt by embedding after an import.
TABLES = (
    "messages",
    "items",
    "core_memory",
    "notepad",
    "episodes",
    "entities",
    "insights",
    "goals",
    "reflection_meta",
    "drives",
    "open_questions",
    "emotion_log",
    "drive_history",
    "drive_daily",  # the days retention rolled drive_history up into: the plot before the last 14 days
    "dream_jobs",
    "kb_documents",
    "kb_chunks",
    "soul_versions",
    "soul_proposals",
    "activity",  # the timeline: what the persona did and why, and its older days in one line each
    "activity_daily",
)
FORMAT = "nexus-ark-memory"
VERSION = 1


def export_folder(folder: Path, persona_name: str, now: datetime) -> Path:
    """Where an export into `folder` goes: `folder` itself when it is new or empty, else a new subfolder
    in it named for the persona and the time ("Aria-memory-20261127-0930"), so no file already there is
    overwritten (an export once replaced the memory.md of another persona's export in the same folder)."""
    try:
        empty = not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))
    except OSError:
        empty = False  # unreadable: mkdir below says why
    if empty:
        return folder
    base = re.sub(r"[^\w]+", "-", persona_name).strip("-")[:40]
    stem = "-".join(p for p in (base, "memory", now.strftime("%Y%m%d-%H%M%S")) if p)
    target, n = folder / stem, 2
    while target.exists():
        target, n = folder / f"{stem}-{n}", n + 1
    return target


def export_memory(store: MemoryStore, folder: Path, persona_name: str = "") -> Path:
    """Write the memory as Markdown and memory.json into `folder`, or into a new subfolder of it when it
    holds files already (export_folder). Returns the memory.json written: its parent says where."""
    folder = export_folder(folder, persona_name, store.messages.clock.now().astimezone())
    folder.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"format": FORMAT, "version": VERSION, "persona": persona_name, "tables": {}}
    for table in TABLES:
        data["tables"][table] = list(store.db.query(f"select * from {table} order by rowid"))
    (folder / "memory.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    _write_markdown(store, folder, persona_name)
    return folder / "memory.json"


def import_memory(store: MemoryStore, folder: Path) -> int:
    """Load an export into an empty memory. Returns the number of rows written."""
    path = folder / "memory.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NexusArkError(
            notice("{path} is not a Nexus Ark memory export: {problem}", path=str(path), problem=str(exc))
        ) from exc
    if data.get("format") != FORMAT:
        raise NexusArkError(
            notice(
                "{path} is not a Nexus Ark memory export (format {format!r}).",
                path=str(path),
                format=data.get("format"),
            )
        )
    if data.get("version", 0) > VERSION:
        raise NexusArkError(
            notice(
                "{path} was exported by a newer Nexus Ark (version {version}).",
                path=str(path),
                version=data["version"],
            )
        )
    if store.db.execute("select count(*) from items").fetchone()[0] or store.messages.count():
        raise NexusArkError(
            notice(
                "{path} already holds memories; import into a new persona so nothing is mixed or lost.",
                path=str(store.path),
            )
        )
    _check_times(path, data["tables"])
    written = 0
    with store.db.atomic():
        # The soul's history comes with the memory; what the new persona recorded of its own soul so far
        # gives way (its persona.md now becomes a version again at the next open, if it differs).
        store.db.execute("delete from soul_proposals")
        store.db.execute("delete from soul_versions")
        # So does its timeline so far (its first entries): the imported one is the persona's life.
        store.db.execute("delete from activity")
        store.db.execute("delete from activity_daily")
        for table in TABLES:
            rows = data["tables"].get(table, [])
            for row in rows:
                cols = list(row)
                store.db.execute(
                    f"insert into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
                    [row[c] for c in cols],
                )
            written += len(rows)
    return written


_TIME_COLUMNS = ("created_at", "updated_at", "time", "timestamp", "read_at", "last_run")


def _check_times(path: Path, tables: dict[str, list[dict[str, Any]]]) -> None:
    """A memory.json from outside may hold a time a persona must never store (a year-1 date broke every
    later turn): refused whole, naming the table, the row and the value, before anything is written."""
    for table in TABLES:
        for number, row in enumerate(tables.get(table, []), start=1):
            for column in _TIME_COLUMNS:
                value = row.get(column) if isinstance(row, dict) else None
                if not isinstance(value, str):
                    continue
                try:
                    parsed = datetime.fromisoformat(value)
                except ValueError:
                    continue  # not a time this check can read: the database takes it as it did
                if problem := time_problem(parsed):
                    raise NexusArkError(
                        notice(
                            "{path}: table {table}, row {row}: {column} {value!r}: {problem}.",
                            path=str(path),
                            table=table,
                            row=number,
                            column=column,
                            value=clipped(value),
                            problem=problem,
                        ),
                        hint=notice("Nothing was restored."),
                    )


ENTITY_FILE_CHARS = 100  # far within the 255 bytes a file name may take, in UTF-8 too


def _entity_files(names: list[str]) -> list[str]:
    """A file name for each entity that every OS can create and no other entity takes: a lore entry named
    "con" was exported as entities/con.md (Windows refuses it), and "Mika" and "mika" wrote one file."""
    taken: set[str] = set()
    files = []
    for name in names:
        base = re.sub(r"[^\w\-]+", "_", name).strip("_")[:ENTITY_FILE_CHARS] or "entity"
        if base.casefold() in WINDOWS_RESERVED:
            base += "_"
        stem, n = base, 2
        while stem.casefold() in taken:  # Windows and macOS folders ignore case
            stem, n = f"{base}-{n}", n + 1
        taken.add(stem.casefold())
        files.append(f"{stem}.md")
    return files


def _write_markdown(store: MemoryStore, folder: Path, persona: str) -> None:
    c = store.components
    title = f" of {persona}" if persona else ""
    parts = [
        f"# Memory{title}\n",
        "## Core memory\n",
        c.core_memory() or "(empty)",
        "\n## Notepad\n",
        c.notepad() or "(empty)",
        "\n## Goals\n",
    ]
    for goal in c.goals(status=None):
        parts.append(f"- [{goal.status}] ({goal.term}-term, priority {goal.priority}) {goal.goal}")
    parts.append("\n## Episodes\n")
    for e in c.episodes():
        parts.append(f"### {e.date} ({e.emotional_tone})\n{e.summary}\n")
        parts.extend(f"- {k}" for k in e.key_events)
    parts.append("\n## Dream diary\n")
    for i in c.insights(limit=10_000):
        parts.append(
            f"### {i.created_at[:16]}: {i.trigger_topic}\n{i.insight}\n\n*Strategy:* {i.strategy}\n\n"
            f"> {i.log_entry}\n"
        )
    (folder / "memory.md").write_text("\n".join(parts) + "\n", encoding="utf-8")
    entities = folder / "entities"
    entities.mkdir(exist_ok=True)
    found = c.entities()
    for entity, file in zip(found, _entity_files([e.name for e in found]), strict=True):
        (entities / file).write_text(
            f"# {entity.name}\nUpdated: {entity.updated_at}\n\n{entity.text}\n", encoding="utf-8"
        )
    lines = ["# Conversations\n"]
    for m in store.messages.recent(limit=10_000_000):
        lines.append(f"**{m.speaker}** ({m.created_at[:16]}): {m.content}\n")
    (folder / "conversations.md").write_text("\n".join(lines), encoding="utf-8")
    _write_soul_versions(store, folder)


def _write_soul_versions(store: MemoryStore, folder: Path) -> None:
    """Every version of persona.md, byte for byte, as soul/NNNN-author.md, with an index of who and why."""
    versions = SoulVersions(store.db).all()
    if not versions:
        return
    soul = folder / "soul"
    soul.mkdir(exist_ok=True)
    index = ["# Soul history\n"]
    for v in versions:
        name = f"{v.id:04d}-{v.author}.md"
        (soul / name).write_bytes(v.text.encode("utf-8"))
        index.append(
            f"- [{name}]({name}) {v.created_at[:16]} {v.author}" + (f": {v.reason}" if v.reason else "")
        )
    (soul / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")
