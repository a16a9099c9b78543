"""`memory import --format chatgpt`: a ChatGPT data export (conversations.json, or the export's .zip)
becomes a persona's earlier conversations.

What is imported, and why:
- The export keeps every version of a conversation as a tree (`mapping`): a regenerated reply or an edited
  question makes a node with several children. The branch the person last saw runs from the root to
  `current_node`; only that main line is imported. Messages on other branches are skipped and counted
  (`other_branches`): Nexus Ark's own conversations have no branches yet, and a regenerated reply the
  person rejected is not something the persona should remember saying.
- Only what was said in the visible chat: user and assistant text. System prompts, hidden messages
  (`metadata.is_visually_hidden_from_conversation`, e.g. custom instructions), tool calls and their
  results (assistant messages to a `recipient` other than "all", author "tool"), browsing displays,
  code-interpreter input and reasoning summaries are skipped. Non-text parts of a multimodal message
  become a short marker such as "[image]".
- The person's turns are the user's; the answers are ChatGPT's (speaker "ChatGPT", so recall reads
  "ChatGPT: ..."), never the persona's: it did not say them and must not remember saying them.
- Each conversation goes to its own room, `chatgpt:<conversation id>`: recall searches every room, so
  the facts are found, but the window shows the default room's history, which stays the persona's own
  conversation instead of filling up with years of another assistant's turns. A room per conversation
  also keeps the archive's neighbouring-turn context inside one conversation.
- Messages are keyed `chatgpt:<conversation id>:<message id>` (source_id), so a re-run, or a run after a
  kill, writes nothing twice (the writing is importer.TurnWriter's, shared with the JSONL import).
- Times: a message's own create_time; a message without one gets a time between its neighbours' (or
  after the conversation's create_time), so conversation order is kept.

The file is read as a stream, one conversation at a time: chatgpt_stream.py.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from nexus_ark.clock import checked_epoch, iso
from nexus_ark.memory.chatgpt_stream import (
    EXPORT_HINT,
    Broken,
    ExportText,
    ExportUnreadable,
    Unreadable,
    elements,
    open_export,
)
from nexus_ark.memory.importer import ImportedTurn, ImportReport, TurnWriter, WriteGate
from nexus_ark.notices import Notice, notice

# Who said the assistant's turns. They were stored as the persona's own ("aria: ..."), so recall and the
# prompt showed another assistant's answers as things the persona remembered saying (issue 23, defect 20).
CHATGPT = "ChatGPT"
# Content types whose parts are what was said; everything else (code sent to a tool, browsing results,
# reasoning summaries, ...) is the assistant's machinery, not the conversation.
SPOKEN = {"text", "multimodal_text"}
MARKERS = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[audio]",
    "video_container_asset_pointer": "[video]",
}


# The export's JSON, as far as the import reads it. Unknown fields are ignored (pydantic's default), and
# everything not needed to find and order the messages is optional: the format changes without notice.
class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Author(_Loose):
    role: str
    name: str | None = None


class Content(_Loose):
    content_type: str
    parts: list[Any] | None = None


class ExportMessage(_Loose):
    id: str | None = None
    author: Author
    create_time: float | None = None
    content: Content | None = None
    metadata: dict[str, Any] = {}
    recipient: str | None = "all"

    @field_validator("metadata", mode="before")
    @classmethod
    def _null_metadata(cls, value: Any) -> Any:
        return {} if value is None else value


class Node(_Loose):
    id: str | None = None
    message: ExportMessage | None = None
    parent: str | None = None
    children: list[str] = []


class Conversation(_Loose):
    title: str | None = None
    create_time: float | None = None
    update_time: float | None = None
    mapping: dict[str, Node]
    current_node: str | None = None
    conversation_id: str | None = None
    id: str | None = None


class ChatGPTImportReport(ImportReport):
    conversations: int = 0  # read whole (imported now, or already there)
    skipped_conversations: int = 0
    other_branches: int = 0  # messages on branches other than the one last shown, not imported
    stopped: bool = False  # asked to stop: what came before is kept, a re-run goes on from there


# bytes of conversations.json read, its size in bytes, conversations read: after each conversation
Progress = Callable[[int, int, int], None]


class _BadConversation(Exception):
    pass


def import_chatgpt(
    path: Path,
    write: WriteGate,
    *,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> ChatGPTImportReport:
    """Import every readable conversation of the export at `path` into the memory `write` writes to;
    name each one that is not (in report.errors) and go on. Raises ExportUnreadable when
    the file cannot be read at all. ChatGPT's answers are stored as ChatGPT's (speaker CHATGPT), never as
    the persona's: it did not say them.
    `stop` set: ends after the conversation being read (report.stopped); nothing is written twice when
    the same export is imported again, so a stopped import is finished by importing it again."""
    report = ChatGPTImportReport()
    writer = TurnWriter(write, report)
    seen = 0
    try:
        stream, size = open_export(path)
        with stream:
            text = ExportText(stream)
            for index, raw in enumerate(elements(text), start=1):
                seen = index
                _import_one(path, index, raw, writer, report)
                if progress is not None:
                    progress(text.bytes_read, size, report.conversations)
                if stop is not None and stop.is_set():
                    report.stopped = True
                    break
    except Broken as exc:
        writer.flush()  # what came before the break is good: keep it
        if seen == 0:
            raise ExportUnreadable(
                notice("{path} is not a ChatGPT export: {problem}", path=str(path), problem=str(exc)),
                hint=EXPORT_HINT,
            ) from None
        report.errors.append(
            notice(
                "{path}: the file breaks after conversation {seen}: {problem}; the conversations before it "
                "were read, anything after it was not (was the file cut short?)",
                path=str(path),
                seen=seen,
                problem=str(exc),
            )
        )
    writer.flush()
    return report


def _import_one(path: Path, index: int, raw: Any, writer: TurnWriter, report: ChatGPTImportReport) -> None:
    label = _label(index, raw)
    try:
        if isinstance(raw, Unreadable):
            raise _BadConversation(raw.problem)
        if not isinstance(raw, dict):
            raise _BadConversation(f"is a JSON {type(raw).__name__}, not a conversation object")
        try:
            conversation = Conversation.model_validate(raw)
        except ValidationError as exc:
            fields = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'conversation'}: {e['msg']}" for e in exc.errors()
            )
            raise _BadConversation(fields) from None
        turns, other = _turns(conversation)
        for problem in _time_problems(conversation):  # the message is kept, its time taken from around it
            report.errors.append(
                notice(
                    "{path}: conversation {label}: {problem}", path=str(path), label=label, problem=problem
                )
            )
    except _BadConversation as exc:
        report.skipped_conversations += 1
        report.errors.append(
            notice(
                "{path}: conversation {label}: {problem}; skipped",
                path=str(path),
                label=label,
                problem=str(exc),
            )
        )
        return
    report.conversations += 1
    report.other_branches += other
    for turn in turns:
        writer.add(turn)


def _label(index: int, raw: Any) -> str:
    """How a conversation is named in messages: its position, title and id, as far as they can be read."""
    if not isinstance(raw, dict):
        return f"{index}"
    title, cid = raw.get("title"), raw.get("conversation_id") or raw.get("id")
    named = [f"{title!r}" if isinstance(title, str) else None, f"id {cid}" if isinstance(cid, str) else None]
    details = ", ".join(n for n in named if n)
    return f"{index} ({details})" if details else f"{index}"


def _turns(conversation: Conversation) -> tuple[list[ImportedTurn], int]:
    """The main line's spoken messages as turns, and how many spoken messages lie on other branches."""
    cid = conversation.conversation_id or conversation.id
    if not cid:
        raise _BadConversation("has neither conversation_id nor id, so a re-run could not recognise it")
    path = _main_line(conversation)
    on_path = {key for key, _ in path}
    other = sum(
        1 for key, node in conversation.mapping.items() if key not in on_path and _spoken(node.message)
    )
    kept = [(key, node.message) for key, node in path if node.message and _spoken(node.message)]
    times = _times([m.create_time for _, m in kept], conversation.create_time, conversation.update_time)
    if kept and times is None:
        raise _BadConversation("has no time at all (neither the conversation nor a message has one)")
    room = f"chatgpt:{cid}"
    meta = {"imported_from": "chatgpt", "conversation": conversation.title or ""}
    turns = [
        ImportedTurn(
            source_id=f"chatgpt:{cid}:{message.id or key}",
            speaker="user" if message.author.role == "user" else CHATGPT,
            role="user" if message.author.role == "user" else "assistant",
            text=_spoken(message) or "",
            created_at=iso(datetime.fromtimestamp(when, UTC)),
            room=room,
            meta=meta,
        )
        for (key, message), when in zip(kept, times or [], strict=True)
    ]
    return turns, other


def _main_line(conversation: Conversation) -> list[tuple[str, Node]]:
    """The nodes from the root to current_node, root first (the branch the person last saw)."""
    mapping, current = conversation.mapping, conversation.current_node
    if not current:
        raise _BadConversation("has no current_node, so which branch was shown cannot be told")
    if current not in mapping:
        raise _BadConversation(f"its current_node {current!r} is not in its mapping")
    line: list[tuple[str, Node]] = []
    seen: set[str] = set()
    key: str | None = current
    while key is not None:
        if key in seen:
            raise _BadConversation(f"its mapping has a cycle: node {key!r} is its own ancestor")
        seen.add(key)
        node = mapping.get(key)
        if node is None:
            raise _BadConversation(f"node {line[-1][0]!r} names parent {key!r}, which is not in its mapping")
        line.append((key, node))
        key = node.parent
    line.reverse()
    return line


def _spoken(message: ExportMessage | None) -> str | None:
    """The text a person saw in the chat, or None for what is not part of it."""
    if message is None or message.author.role not in ("user", "assistant"):
        return None  # system prompts, tool results
    if message.metadata.get("is_visually_hidden_from_conversation"):
        return None
    if message.recipient not in (None, "all"):
        return None  # the assistant talking to a tool (code, browsing, image generation)
    content = message.content
    if content is None or content.content_type not in SPOKEN:
        return None
    parts = content.parts or []
    transcribed = any(isinstance(p, dict) and p.get("content_type") == "audio_transcription" for p in parts)
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, str):
            if part.strip():
                pieces.append(part)
        elif isinstance(part, dict):
            kind = part.get("content_type")
            if kind == "audio_transcription":
                text = part.get("text")
                if isinstance(text, str) and text.strip():
                    pieces.append(text)
            elif kind in MARKERS:
                if not (transcribed and MARKERS[kind] == "[audio]"):  # the words already say it
                    pieces.append(MARKERS[kind])
            else:
                pieces.append("[attachment]")
    text = "\n".join(pieces).strip()
    return text or None


def _finite(value: float | None) -> float | None:
    """A time that can be kept; None for none, or one out of the years kept (clock.checked_epoch)."""
    if value is None or not math.isfinite(value):
        return None
    try:
        checked_epoch(value)
    except ValueError:
        return None
    return value


def _time_problems(conversation: Conversation) -> list[Notice]:
    """Each create_time or update_time given but refused (out of the years kept), in words; such a time is
    treated as missing, so its message is kept with a time from the messages around it."""
    given = [("create_time", conversation.create_time), ("update_time", conversation.update_time)]
    given += [
        (f"message {node.message.id or key}: create_time", node.message.create_time)
        for key, node in _main_line(conversation)
        if node.message is not None and _spoken(node.message)
    ]
    problems: list[Notice] = []
    for field, value in given:
        if value is None or not math.isfinite(value):
            continue
        try:
            checked_epoch(value)
        except ValueError as exc:
            problems.append(
                notice(
                    "{field}: {problem}; the time was taken from the messages around it",
                    field=field,
                    problem=str(exc),
                )
            )
    return problems


def _times(given: list[float | None], start: float | None, end: float | None) -> list[float] | None:
    """Each message's time: its own, else spread evenly between the known times around it (the
    conversation's create_time before the first, its update_time after the last), else a second after
    the one before. None when nothing at all is known."""
    known = [_finite(t) for t in given]
    start, end = _finite(start), _finite(end)
    anchors = [(i, t) for i, t in enumerate(known) if t is not None]
    if start is not None and (not anchors or start <= anchors[0][1]):
        anchors.insert(0, (-1, start))
    if not anchors:
        if not given:
            return []
        return None
    if end is not None and end >= anchors[-1][1] and anchors[-1][0] < len(known) - 1:
        anchors.append((len(known), end))
    out: list[float] = []
    for i, t in enumerate(known):
        if t is not None:
            out.append(t)
            continue
        before = next(((j, a) for j, a in reversed(anchors) if j < i), None)
        after = next(((j, a) for j, a in anchors if j > i), None)
        if before and after:
            (j0, t0), (j1, t1) = before, after
            out.append(t0 + (t1 - t0) * (i - j0) / (j1 - j0))
        elif before:
            out.append(before[1] + (i - before[0]))
        else:  # only later times are known: step back from the first one
            assert after is not None
            out.append(after[1] - (after[0] - i))
    return out
