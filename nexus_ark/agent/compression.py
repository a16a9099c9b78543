"""Rolling compression: the oldest turns of a long conversation become a running summary.

When the turns the prompt would carry pass `compress_at` of the room the conversation has in the prompt (or
fill `history_messages`, so the next turn would drop one), the oldest turns outside the recent window are
summarised by the internal model. The summary is rolling: summary_n = summarise(summary_{n-1} + the next
oldest turns), so earlier turns are never summarised twice. The recent window stays verbatim; the messages
stay in the database whatever happens (memory.summaries stores the summary with the ids it covers, as an
archive item recall can find, with a "compression" entry in the timeline).

Turns older than the prompt's message window that no summary covers yet (a long history imported, or a
summary voided because a message in it was forgotten) are caught up: each step is one internal-model call
over a bounded chunk of the oldest of them (the backlog), and ChatSession.compress_if_due runs steps until
everything older than the recent window is covered, giving way between steps (and inside one) when the
person sends. A summary voided by forgetting (memory.summaries) is rebuilt from the messages that remain,
up to the newest message it covered (`rebuild_to`), even when nothing else is due.

It runs after the reply is shown (ChatSession.after_turn), never on the user's path. A model that fails
costs nothing but the compression: the conversation stays as it was, the failure is logged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nexus_ark.agent.prompt import MESSAGE_OVERHEAD
from nexus_ark.agent.token_budget import cut_text
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.summaries import ConversationSummary, Summaries
from nexus_ark.personas.store import Persona
from nexus_ark.prompts import LANGUAGE_NAMES
from nexus_ark.prompts.upkeep import SUMMARY_INSTRUCTION, SUMMARY_NONE_YET, SUMMARY_REQUEST, USER_LABEL
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams, context_window
from nexus_ark.sentences import trim_to_sentence

log = logging.getLogger(__name__)

Counter = Callable[[str], int]

# Messages that count as the conversation in the prompt (agent.prompt keeps the same ones).
PROMPT_STATUSES = {"complete", "stopped", "interrupted", "error"}
# The newest messages always stay verbatim (two exchanges), whatever their size.
MIN_RECENT = 4
# A summary's size: at most this many tokens, and at most a quarter of the conversation's room.
SUMMARY_MAX_TOKENS = 300
SUMMARY_MIN_TOKENS = 48
# Room left in the internal model's context for its instruction and answer when sizing a step.
INSTRUCTION_RESERVE = 256


@dataclass
class CompressionResult:
    summary: ConversationSummary
    covered: list[int]  # the messages this step added to the summary
    seconds: float
    prompt_tokens: int  # what the internal model read (its tokenizer)
    output_tokens: int  # what it wrote (streamed pieces)


def in_prompt(message: StoredMessage) -> bool:
    return (
        message.role in ("user", "assistant")
        and message.status in PROMPT_STATUSES
        and bool(message.content.strip())
    )


def turn_tokens(message: StoredMessage, count: Counter) -> int:
    return count(message.content) + MESSAGE_OVERHEAD if in_prompt(message) else 0


def summary_budget(room: int) -> int:
    return max(SUMMARY_MIN_TOKENS, min(SUMMARY_MAX_TOKENS, room // 4))


def is_due(
    line: Sequence[StoredMessage], room: int, *, compress_at: float, history_messages: int, count: Counter
) -> bool:
    """Whether the turns after the running summary pass `compress_at` of the conversation's room in
    tokens, or fill the message window (the next turn would drop the oldest one unsummarised)."""
    load = sum(turn_tokens(m, count) for m in line)
    return load > compress_at * room or len(line) >= history_messages


def plan(
    line: Sequence[StoredMessage],
    room: int,
    *,
    compress_at: float,
    history_messages: int,
    count: Counter,
    step_budget: int,
    backlog: Sequence[StoredMessage] = (),
    rebuild_to: int | None = None,
) -> list[StoredMessage]:
    """The oldest messages to summarise now, bounded by what the internal model can read in one step.

    `line`: the turns after the running summary that the prompt's message window holds, oldest first.
    `backlog`: older turns after the summary that the window no longer holds, oldest first (a prefix of
    them is enough: a step never reads past it). While there is a backlog, the step takes its oldest turns.
    Otherwise all but the recent window (the newest turns within half of the trigger, so the next
    compression is not due at once; at least MIN_RECENT of them, at most half the message window). A
    chunk ends after a reply where it can, so the prompt goes on with the person's message.
    `rebuild_to`: a voided summary is being rebuilt: the chunk stops at that message (and may reach into
    the recent window: those turns were summarised before)."""
    if backlog:
        older = list(backlog)
    else:
        keep_tokens = compress_at * room / 2
        keep_at_most = max(MIN_RECENT, history_messages // 2)
        kept, used, shown = 0, 0, 0
        for message in reversed(line):
            cost = turn_tokens(message, count)
            if shown >= MIN_RECENT and (used + cost > keep_tokens or kept >= keep_at_most):
                break
            kept += 1
            used += cost
            shown += 1 if cost else 0
        older = list(line[: len(line) - kept])
    if rebuild_to is not None:
        older = [m for m in (older if backlog else line) if m.id <= rebuild_to]
    chunk: list[StoredMessage] = []
    total = 0
    for message in older:
        cost = turn_tokens(message, count)
        if chunk and total + cost > step_budget:
            break
        chunk.append(message)
        total += cost
    if rebuild_to is None or (chunk and chunk[-1].id < rebuild_to):
        while len(chunk) > 1 and chunk[-1].role == "user":
            chunk.pop()
    return chunk


def _instruction(persona: Persona, budget: int) -> str:
    name = persona.settings.name
    words = max(30, int(budget * 0.6))
    language = LANGUAGE_NAMES["ja" if persona.settings.language == "ja" else "en"]
    return SUMMARY_INSTRUCTION.format(name=name, language=language, words=words)


def _transcript(persona: Persona, messages: Sequence[StoredMessage], budget: int, count: Counter) -> str:
    name = persona.settings.name
    lines = []
    for m in messages:
        if not in_prompt(m):
            continue
        text = m.content.strip()
        if count(text) > budget:  # one huge message: its beginning stands for it
            text = cut_text(text[: budget * 4], budget, count) or text[: budget * 2]
        lines.append(f"{USER_LABEL if m.role == 'user' else name}: {text}")
    return "\n".join(lines)


def summarise(
    internal: ChatBackend,
    persona: Persona,
    previous: str,
    messages: Sequence[StoredMessage],
    *,
    budget: int,
    count: Counter,
    step_budget: int,
    cancel: threading.Event | None = None,
) -> tuple[str, int, int]:
    """The updated summary (cut to `budget` tokens at a sentence), the tokens read and written.
    Raises what the backend raises; an empty or cancelled answer is a failure too (never half a summary),
    and an answer the token limit cut keeps its whole sentences only (none: a failure)."""
    request = [
        ChatMessage(role="system", content=_instruction(persona, budget)),
        ChatMessage(
            role="user",
            content=SUMMARY_REQUEST.format(
                previous=previous.strip() or SUMMARY_NONE_YET,
                transcript=_transcript(persona, messages, step_budget, count),
            ),
        ),
    ]
    params = GenerationParams(max_tokens=budget + 32, temperature=0.2, top_p=0.9, repeat_penalty=1.1)
    pieces: list[str] = []
    finish = None
    for chunk in internal.stream_chat(request, params, cancel):
        if chunk.finish_reason == "cancelled":
            raise InterruptedError("compression was cancelled; it runs again after the next reply")
        if chunk.text:
            pieces.append(chunk.text)
        finish = chunk.finish_reason or finish
    text = "".join(pieces).strip()
    for label in ("Updated summary:", "Summary:"):  # small models like to label their answer
        if text.startswith(label):
            text = text[len(label) :].strip()
    if finish == "length":  # the limit stopped it mid-sentence: the unfinished sentence is not kept
        text, _cut = trim_to_sentence(text)
        if text.endswith("…"):
            raise ValueError(f"{internal.describe()} wrote no whole sentence before the token limit")
    text = cut_text(text, budget, count)
    if not text:
        raise ValueError(f"{internal.describe()} returned an empty summary")
    read = sum(internal.count_tokens(m.content) + MESSAGE_OVERHEAD for m in request)
    return text, read, len(pieces)


def _window_due(persona: Persona, line: Sequence[StoredMessage], room: int, count: Counter) -> bool:
    """is_due with the persona's own share and message window."""
    settings = persona.settings.conversation
    return is_due(
        line, room, compress_at=settings.compress_at, history_messages=settings.history_messages, count=count
    )


def compress(
    memory: MemoryStore,
    persona: Persona,
    internal: ChatBackend,
    line: Sequence[StoredMessage],
    room: int,
    *,
    channel: str,
    count: Counter,
    force: bool = False,
    cancel: threading.Event | None = None,
    backlog: Sequence[StoredMessage] = (),
    rebuild_to: int | None = None,
) -> CompressionResult | None:
    """One compression step if it is due (or `force`): the running summary of `channel` extended with the
    oldest turns after it (`backlog`, then `line`: see plan). It is due when the window's turns pass the
    share, when there is a backlog, or when a voided summary waits to be rebuilt (`rebuild_to`). None when
    nothing was due or there was nothing to compress; raises what the model or the database raises."""
    settings = persona.settings.conversation
    if not (force or backlog or rebuild_to is not None or _window_due(persona, line, room, count)):
        return None
    summaries = Summaries(memory.db, memory.archive, memory.activity, memory.messages.clock)
    previous = summaries.current(channel)
    budget = summary_budget(room)
    internal_ctx = context_window(internal, persona.settings.model.context_size)
    step_budget = max(256, internal_ctx - budget - INSTRUCTION_RESERVE - (previous.tokens if previous else 0))
    chunk = plan(
        line,
        room,
        compress_at=settings.compress_at,
        history_messages=settings.history_messages,
        count=count,
        step_budget=step_budget,
        backlog=backlog,
        rebuild_to=rebuild_to,
    )
    if not chunk:
        return None
    started = time.perf_counter()
    text, read, written = summarise(
        internal,
        persona,
        previous.text if previous else "",
        chunk,
        budget=budget,
        count=count,
        step_budget=step_budget,
        cancel=cancel,
    )
    covered = [m.id for m in chunk]
    summary = summaries.add(
        channel,
        text,
        covered,
        previous=previous,
        model=internal.model_id,
        tokens=count(text),
        speaker=persona.settings.name,
        rebuilt=rebuild_to is not None,
    )
    seconds = time.perf_counter() - started
    log.info(
        "compressed messages %d-%d into the running summary (%d tokens) in %.2f s",
        covered[0],
        covered[-1],
        summary.tokens,
        seconds,
    )
    return CompressionResult(
        summary=summary, covered=covered, seconds=seconds, prompt_tokens=read, output_tokens=written
    )
