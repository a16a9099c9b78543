"""`memory import`: conversation turns from JSON Lines, every good line kept, every bad one named."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError, field_validator

from nexus_ark.memory.archive import Archive
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.messages import MessageStore

BATCH = 500


class TurnLine(BaseModel):
    id: str
    speaker: str
    text: str
    timestamp: str

    @field_validator("timestamp")
    @classmethod
    def _iso(cls, value: str) -> str:
        datetime.fromisoformat(value)
        return value


class ImportReport(BaseModel):
    imported: int = 0
    skipped_duplicates: int = 0
    errors: list[str] = []


def import_jsonl(
    path: Path, messages: MessageStore, archive: Archive, persona_names: set[str]
) -> ImportReport:
    """Each line {"id", "speaker", "text", "timestamp"} becomes a message (its id kept as source_id) and an
    archive item. Lines already imported (same source_id) are skipped, so an import can be re-run."""
    report = ImportReport()
    known = {r[0] for r in archive.db.execute("select source_id from items where source_id is not null")}
    batch: list[TurnLine] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        report.errors.append(f"{path}: cannot read: {exc}")
        return report
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line = TurnLine.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            report.errors.append(f"{path}:{number}: not JSON ({exc.msg})")
            continue
        except ValidationError as exc:
            fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
            report.errors.append(f"{path}:{number}: {fields}")
            continue
        if line.id in known:
            report.skipped_duplicates += 1
            continue
        known.add(line.id)
        batch.append(line)
        if len(batch) >= BATCH:
            _flush(batch, messages, archive, persona_names, report)
    _flush(batch, messages, archive, persona_names, report)
    return report


def _flush(
    batch: list[TurnLine], messages: MessageStore, archive: Archive, names: set[str], report: ImportReport
) -> None:
    if not batch:
        return
    lowered = {n.lower() for n in names}
    for line in batch:
        role = "assistant" if line.speaker.lower() in lowered else "user"
        messages.add(
            speaker=line.speaker, role=role, content=line.text, source_id=line.id, created_at=line.timestamp
        )
    index_turns(
        archive, [Turn(speaker=t.speaker, text=t.text, created_at=t.timestamp, source_id=t.id) for t in batch]
    )
    report.imported += len(batch)
    batch.clear()
