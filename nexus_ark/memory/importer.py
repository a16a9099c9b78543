"""`memory import`: conversation turns from JSON Lines, every good line kept, every bad one named.

The writing half (`TurnWriter`) is shared with the ChatGPT importer (chatgpt_import.py): turns are
written in batches, each batch to messages and archive items in one transaction, and a turn whose
source_id is already there is skipped, so any import can be re-run, also after it was killed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from pydantic import BaseModel, ValidationError, field_validator

from nexus_ark.clock import checked_time
from nexus_ark.config import unreadable_json
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.messages import DEFAULT_ROOM
from nexus_ark.notices import notice

if TYPE_CHECKING:
    from nexus_ark.memory.store import MemoryStore

BATCH = 500

# How an importer writes: it hands a function of the memory to whoever owns the memory, which runs it on its
# own thread and returns the result (app.personas.writer: the persona's queue). The file is read and parsed on
# the caller's thread; only each batch's transaction waits in the persona's line.
WriteGate = Callable[[Callable[["MemoryStore"], Any]], Any]


def on_store(store: MemoryStore) -> WriteGate:
    """Write straight to `store` (its owner is the caller: tests, benchmarks, a store nobody else uses)."""
    return lambda change: change(store)


class TurnLine(BaseModel):
    id: str
    speaker: str
    text: str
    timestamp: str

    @field_validator("timestamp")
    @classmethod
    def _iso(cls, value: str) -> str:
        checked_time(value)  # a year-1 time stored once broke every later turn: refused here, named
        return value


class ImportReport(BaseModel):
    imported: int = 0
    skipped_duplicates: int = 0
    errors: list[str] = []


def record_import(activity: ActivityLog, report: ImportReport, path: Path, fmt: str) -> None:
    """The import in the persona's activity timeline (a re-run that found everything there is not news)."""
    if report.imported or report.errors:
        activity.imported(
            notice(
                "{count} messages imported from {file} ({format})",
                count=report.imported,
                file=path.name,
                format=fmt,
            ),
            file=str(path),
            format=fmt,
            imported=report.imported,
            already_there=report.skipped_duplicates,
            problems=len(report.errors),
        )


_SURROGATE = re.compile("[\ud800-\udfff]")
# The longest JSONL line taken: a message is a few KB; a 10 MB line cost ~8 s of indexing on the persona's
# queue for text no prompt can hold. Longer lines are refused in words and the rest of the file goes on.
MAX_LINE_BYTES = 1_000_000


class ImportedTurn(BaseModel):
    """One turn on its way into memory, whatever file it came from."""

    source_id: str
    speaker: str
    role: Literal["user", "assistant"]
    text: str
    created_at: str
    room: str = DEFAULT_ROOM
    meta: dict[str, Any] | None = None

    @field_validator("source_id", "speaker", "text", "created_at", "room")
    @classmethod
    def _utf8(cls, value: str) -> str:
        # JSON may escape half of a UTF-16 pair ("\ud800") that no UTF-8 text can hold: SQLite's driver
        # refused it mid-batch, losing the batch. It becomes U+FFFD, as a broken byte does in a reader;
        # the same for the same input, so a re-run still finds the turn by its source_id.
        return _SURROGATE.sub("\ufffd", value)


class TurnWriter:
    """Batched, idempotent writing of imported turns (messages are unique by source_id, migration m005).

    Call add() for each turn in conversation order and flush() at the end. A turn found in only one of
    messages and items (a database from before batches) gets the other."""

    def __init__(self, write: WriteGate, report: ImportReport) -> None:
        self.write = write
        self.report = report

        def seen(store: MemoryStore) -> tuple[set[str], set[str]]:
            db = store.db
            return (
                {r[0] for r in db.execute("select source_id from messages where source_id is not null")},
                {r[0] for r in db.execute("select source_id from items where source_id is not null")},
            )

        self._in_messages, self._in_items = write(seen)
        self._batch: list[ImportedTurn] = []

    def done(self, source_id: str) -> bool:
        """Whether this turn is already fully in memory."""
        return source_id in self._in_messages and source_id in self._in_items

    def add(self, turn: ImportedTurn) -> None:
        if self.done(turn.source_id):
            self.report.skipped_duplicates += 1
            return
        self._batch.append(turn)
        if len(self._batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the batch to messages and items in one transaction: a kill leaves all of it or none."""
        if self._batch:
            self.write(self._write_batch)
            self._batch.clear()

    def _write_batch(self, store: MemoryStore) -> None:
        turns: list[Turn] = []
        with store.db.atomic():
            for turn in self._batch:
                if self.done(turn.source_id):
                    self.report.skipped_duplicates += 1  # the same id twice in one batch
                    continue
                if turn.source_id not in self._in_messages:
                    store.messages.add(
                        speaker=turn.speaker,
                        role=turn.role,
                        content=turn.text,
                        room=turn.room,
                        source_id=turn.source_id,
                        meta=turn.meta,
                        created_at=turn.created_at,
                    )
                if turn.source_id not in self._in_items:
                    turns.append(
                        Turn(
                            speaker=turn.speaker,
                            text=turn.text,
                            created_at=turn.created_at,
                            source_id=turn.source_id,
                            room=turn.room,
                        )
                    )
                self._in_messages.add(turn.source_id)
                self._in_items.add(turn.source_id)
                self.report.imported += 1
            # index_turns links a run's first turn to the newest item of its own room, so each room's
            # run is indexed on its own (a batch may end one conversation and start the next).
            for _, run in groupby(turns, key=lambda t: t.room):
                index_turns(store.archive, list(run))


def speaker_role(speaker: str, persona_names: set[str], user_name: str = "") -> Literal["user", "assistant"]:
    """Whose turn a line is: the person's where its speaker is `user_name` (the person's name, issue 32:
    conversations whose speakers are names), the persona's where it is one of the persona's names, else
    the person's (as before: a line from anyone else is something the persona heard)."""
    said = speaker.strip().casefold()
    if user_name.strip() and said == user_name.strip().casefold():
        return "user"
    return "assistant" if said in {n.casefold() for n in persona_names} else "user"


def _lines(fh: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Each line's bytes and its length; a line over MAX_LINE_BYTES is measured, not kept (b"" with its
    size), so one line of a gigabyte never sits in memory whole."""
    while raw := fh.readline(MAX_LINE_BYTES + 1):
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield raw, len(raw)
            continue
        size = len(raw)
        while (more := fh.readline(1 << 20)) and not more.endswith(b"\n"):
            size += len(more)
        size += len(more)
        yield b"", size


def import_jsonl(path: Path, write: WriteGate, persona_names: set[str], user_name: str = "") -> ImportReport:
    """Each line {"id", "speaker", "text", "timestamp"} becomes a message (its id kept as source_id) and an
    archive item. Lines already imported (same source_id) are skipped, so an import can be re-run, also after
    it was killed: each batch of lines is written to messages and items in one transaction. A line whose
    speaker is `user_name` is the person's, one whose speaker is a persona name the persona's."""
    report = ImportReport()
    try:
        fh = path.open("rb")
    except OSError as exc:
        report.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return report
    writer = TurnWriter(write, report)
    with fh:
        # Bytes, split at \n only: one bad byte costs its line, not the file, and a U+2028 inside a JSON
        # string (valid JSON) does not end a line as str.splitlines() would make it.
        for number, (raw, size) in enumerate(_lines(fh), start=1):
            if size > MAX_LINE_BYTES:
                report.errors.append(
                    notice(
                        "{path}:{line}: the line is {size:,} bytes, over the {limit:,} a message may have; "
                        "this line was skipped",
                        path=str(path),
                        line=number,
                        size=size,
                        limit=MAX_LINE_BYTES,
                    )
                )
                continue
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
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                report.errors.append(f"{path}:{number}: not JSON ({exc.msg})")
                continue
            except (RecursionError, ValueError) as exc:
                report.errors.append(
                    notice(
                        "{path}:{line}: {problem}; this line was skipped",
                        path=str(path),
                        line=number,
                        problem=unreadable_json(exc),
                    )
                )
                continue
            try:
                line = TurnLine.model_validate(value)
            except ValidationError as exc:
                fields = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
                )
                report.errors.append(f"{path}:{number}: {fields}")
                continue
            writer.add(
                ImportedTurn(
                    source_id=line.id,
                    speaker=line.speaker,
                    role=speaker_role(line.speaker, persona_names, user_name),
                    text=line.text,
                    created_at=line.timestamp,
                )
            )
    writer.flush()
    return report
