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
    archive item. Lines already imported (same source_id) are skipped, so an import can be re-run, also after
    it was killed: each batch of lines is written to messages and items in one transaction, and a line found
    in only one of them (a database from before batches) gets the other."""
    report = ImportReport()
    db = archive.db
    in_messages = {r[0] for r in db.execute("select source_id from messages where source_id is not null")}
    in_items = {r[0] for r in db.execute("select source_id from items where source_id is not null")}
    batch: list[TurnLine] = []
    try:
        fh = path.open("rb")
    except OSError as exc:
        report.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return report
    with fh:
        # Bytes, split at \n only: one bad byte costs its line, not the file, and a U+2028 inside a JSON
        # string (valid JSON) does not end a line as str.splitlines() would make it.
        for number, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                report.errors.append(
                    f"{path}:{number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                )
                continue
            if number == 1:
                text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
            if not text.strip():
                continue
            try:
                line = TurnLine.model_validate(json.loads(text))
            except json.JSONDecodeError as exc:
                report.errors.append(f"{path}:{number}: not JSON ({exc.msg})")
                continue
            except ValidationError as exc:
                fields = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
                )
                report.errors.append(f"{path}:{number}: {fields}")
                continue
            if line.id in in_messages and line.id in in_items:
                report.skipped_duplicates += 1
                continue
            batch.append(line)
            if len(batch) >= BATCH:
                _flush(batch, messages, archive, persona_names, report, in_messages, in_items)
    _flush(batch, messages, archive, persona_names, report, in_messages, in_items)
    return report


def _flush(
    batch: list[TurnLine],
    messages: MessageStore,
    archive: Archive,
    names: set[str],
    report: ImportReport,
    in_messages: set[str],
    in_items: set[str],
) -> None:
    """Write a batch to messages and items in one transaction: a kill leaves all of it or none."""
    if not batch:
        return
    lowered = {n.lower() for n in names}
    turns: list[Turn] = []
    with archive.db.atomic():
        for line in batch:
            if line.id in in_messages and line.id in in_items:
                report.skipped_duplicates += 1  # the same id twice in one batch
                continue
            if line.id not in in_messages:
                role = "assistant" if line.speaker.lower() in lowered else "user"
                messages.add(
                    speaker=line.speaker,
                    role=role,
                    content=line.text,
                    source_id=line.id,
                    created_at=line.timestamp,
                )
            if line.id not in in_items:
                turns.append(
                    Turn(speaker=line.speaker, text=line.text, created_at=line.timestamp, source_id=line.id)
                )
            in_messages.add(line.id)
            in_items.add(line.id)
            report.imported += 1
        index_turns(archive, turns)
    batch.clear()
