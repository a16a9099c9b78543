"""Builds the messages sent to the model from named sections, each with a token budget.

Layout, chosen so the llama.cpp KV cache of one turn stays a prefix of the next (only new tokens are
evaluated):

    system message   soul, core memory, notepad, goals, latest dream strategy   (stable: edited rarely)
                     episodes of the days before the conversation in the prompt  (changes about once a day)
                     the running summary of the older turns                     (changes when compressed)
    earlier turns    the conversation, oldest first                              (grows at the end)
    notes            a second system message: how you feel now, recalled         (changes every turn)
                     memories, entities, documents
    newest user msg  the user's text, alone

Everything that changes every turn comes after the earlier turns: putting it in the first system message
would invalidate the cached conversation after it at every turn. It is a system message of its own, not a
preface of the person's words: placed there, the bundled 135M model took the notes for part of what the
person said and copied their labels into its replies (issue 32). A template that refuses a system message
after the first (Gemma's; a Go template of Ollama's that would lift it to the top, losing the cache) gets
the notes in front of the person's words as before (agent.chat_template). Episodes sit at the end of the
system message: they change only when the oldest message in the prompt moves to another day.

Budgets are shares of the window left after the reply (context size - max_tokens). A section that needs
less than its share leaves the rest to the conversation; the stable sections share their pool among
themselves (a long soul may use an empty notepad's share). A section over its budget is cut by rank (the
lowest-ranked items go first) and a single text is cut at a sentence boundary, never mid-sentence; every cut
is logged. A stable section that would lose more than half of itself is refused instead, with a message
naming what to shorten: a persona silently missing most of its soul is worse than an error. The user's own
text is never cut: if it does not fit, the backend says so (the message is kept, as with any model error).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from nexus_ark.agent.token_budget import Counter, cut_text, fit_items
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.room_keys import is_room_key
from nexus_ark.notices import notice
from nexus_ark.personas.cards import soul_for_prompt
from nexus_ark.personas.store import Persona
from nexus_ark.prompts.chat import (
    FALLBACK_SOUL,
    GOAL_ITEMS,
    NOTES_INTRO,
    PERSON_LINE,
    PERSON_UNKNOWN,
    SECTION_HEADINGS,
)
from nexus_ark.prompts.rooms import NOTE_LINE
from nexus_ark.providers.base import ChatMessage, estimate_tokens

log = logging.getLogger(__name__)

# Messages whose text was cut short still belong to the conversation; failed ones with no text do not.
_PROMPT_STATUSES = {"complete", "stopped", "interrupted", "error"}
# Tokens a chat template adds around each message (role markers); the llama.cpp backend reserves the same.
MESSAGE_OVERHEAD = 8
# A stable section may be cut to no less than this share of itself; below it the person is asked to act.
MIN_STABLE_KEEP = 0.5

STABLE_SECTIONS = ("soul", "core_memory", "notepad", "goals", "strategy")
CHANGING_SECTIONS = ("episodes", "feelings", "recalled", "entities", "knowledge")
# The changing sections that ride on the notes message right before the person's newest words.
NOTE_SECTIONS = ("feelings", "recalled", "entities", "knowledge")
# The running summary of the turns compression took out of the prompt (agent/compression.py): right
# before the conversation it stands for. It is paid from the conversation's room, at most half of it.
SECTION_ORDER = (*STABLE_SECTIONS, *CHANGING_SECTIONS, "summary", "conversation")
SUMMARY_MAX_SHARE = 0.5

# Shares of the window left after the reply. What the sections do not use goes to the conversation,
# which always has at least the rest (here 25 %).
BUDGET_SHARES: dict[str, float] = {
    "soul": 0.28,
    "core_memory": 0.10,
    "notepad": 0.06,
    "goals": 0.03,
    "strategy": 0.02,
    "episodes": 0.06,
    "feelings": 0.02,
    "recalled": 0.08,
    "entities": 0.04,
    "knowledge": 0.06,
}

# What a person edits to shorten a stable section (named in the error): as a sentence starts, and within it.
_WHAT_TO_SHORTEN: dict[str, tuple[str, str]] = {
    "soul": ("persona.md", "persona.md"),
    "core_memory": (notice("The core memory"), notice("the core memory")),
    "notepad": (notice("The notepad"), notice("the notepad")),
    "goals": (notice("The goals"), notice("the goals")),
    "strategy": (notice("The latest dream strategy"), notice("the latest dream strategy")),
}


class EpisodeNote(BaseModel):
    date: str  # YYYY-MM-DD
    text: str


class MemoryContext(BaseModel):
    """What the memory components put into one prompt (gathered by agent.prompt_inputs)."""

    core_memory: str = ""
    notepad: str = ""
    # Already chosen and in rank order (priority): 3 short-term, 2 long-term.
    goals_short: list[str] = Field(default_factory=list)
    goals_long: list[str] = Field(default_factory=list)
    strategy: str = ""
    episodes: list[EpisodeNote] = Field(default_factory=list)  # oldest first
    # "How you feel now": empty until the drives fill it; the section is left out when empty.
    feelings: str = ""
    recalled: list[str] = Field(default_factory=list)  # best first
    entities: list[str] = Field(default_factory=list)  # best first, only ones that match the message
    knowledge: list[str] = Field(default_factory=list)  # best first, only chunks that match the message
    # The running summary of the turns before the conversation in the prompt (empty: none compressed).
    summary: str = ""


class SectionReport(BaseModel):
    name: str
    tokens: int
    cut: bool = False


class BuiltPrompt(BaseModel):
    messages: list[ChatMessage]
    sections: list[SectionReport]
    # Things the person should know that did not stop the build (e.g. recall fell back to keywords).
    warnings: list[str] = Field(default_factory=list)

    def section(self, name: str) -> SectionReport | None:
        return next((s for s in self.sections if s.name == name), None)


class PromptTooLargeError(NexusArkError):
    """The stable sections alone do not fit the model's context."""


# -- rendering ----------------------------------------------------------------------------------------
def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {i}" for i in items)


def _render(name: str, body: str) -> str:
    if not body.strip():
        return ""
    heading = SECTION_HEADINGS.get(name)
    if heading is None:
        return body.strip()
    return f"{heading}\n{body.strip()}"


def _goal_items(memory: MemoryContext) -> list[str]:
    short, long = GOAL_ITEMS["short"], GOAL_ITEMS["long"]
    return [short.format(goal=g) for g in memory.goals_short] + [
        long.format(goal=g) for g in memory.goals_long
    ]


# -- the builder ------------------------------------------------------------------------------------
def _allot(needs: dict[str, int], shares: dict[str, int]) -> dict[str, int]:
    """Each section gets what it needs up to its share; the pool's spare goes to those that need more,
    in section order (the soul first)."""
    grant = {n: min(needs[n], shares[n]) for n in needs}
    spare = sum(shares.values()) - sum(grant.values())
    for n in needs:
        extra = min(needs[n] - grant[n], spare)
        if extra > 0:
            grant[n] += extra
            spare -= extra
    return grant


def _log_cut(name: str, before: int, after: int) -> None:
    log.info("prompt section %s cut from %d to %d tokens to fit its budget", name, before, after)


def person_line(persona: Persona) -> str:
    """Who the persona is talking with, in its language: the person's name, or that it is not known."""
    lang = "ja" if persona.settings.language == "ja" else "en"
    if persona.user_name:
        return PERSON_LINE[lang].format(user=persona.user_name, name=persona.settings.name)
    return PERSON_UNKNOWN[lang]


def speaker_line(message: StoredMessage, language: str = "en", person: str = "") -> str:
    """How a message reaches the model: a line heard in a room from another persona with its name, a note
    a member passed this persona (agent/room_turn.py), the person's and the persona's own as said. In a
    room the person's lines carry the person's name (`person`, Persona.user_name) where it is known: the
    others' lines carry theirs, and a small model took an unnamed line for its own (it answered with its
    own name, as if talking to the person)."""
    if message.role != "user":
        return message.content
    if sender := message.meta.get("note_from"):
        return NOTE_LINE["ja" if language == "ja" else "en"].format(name=sender, text=message.content)
    name = message.meta.get("name")
    if not name and person and is_room_key(message.room) and message.speaker == "user":
        name = person
    return f"{name}: {message.content}" if name else message.content


def build_prompt(
    persona: Persona,
    history: Sequence[StoredMessage],
    user_text: str,
    memory: MemoryContext | None = None,
    *,
    count: Counter = estimate_tokens,
    context_size: int | None = None,
    max_tokens: int | None = None,
) -> BuiltPrompt:
    """The messages for one turn and what each section cost. `count` is the model's tokenizer (an
    estimate by default); context_size and max_tokens default to the persona's model settings."""
    memory = memory or MemoryContext()
    settings = persona.settings
    context_size = context_size if context_size is not None else settings.model.context_size
    max_tokens = max_tokens if max_tokens is not None else settings.model.max_tokens
    # The window left for the prompt; the system message's own template markers come off it too.
    available = max(0, context_size - max_tokens - MESSAGE_OVERHEAD)
    shares = {n: int(available * s) for n, s in BUDGET_SHARES.items()}
    reports: dict[str, SectionReport] = {}
    window = _Window(context_size, max_tokens)
    stable = _stable_sections(persona, memory, shares, count, window, reports)
    changing = _changing_sections(memory, shares, count, reports)
    notes = "\n\n".join(p for n in NOTE_SECTIONS if (p := changing[n]))
    if notes:
        notes = f"{NOTES_INTRO}\n\n{notes}"

    # The conversation: the newest turns that fit in what is left, the new message always.
    used = sum(r.tokens for r in reports.values())
    limit = settings.conversation.history_messages
    turns = [
        ChatMessage(
            role="assistant" if m.role == "assistant" else "user",
            content=speaker_line(m, settings.language, persona.user_name),
        )
        for m in history
        if m.role in ("user", "assistant") and m.status in _PROMPT_STATUSES and m.content.strip()
    ][-limit:]
    own = count(user_text) + MESSAGE_OVERHEAD + (count(NOTES_INTRO) + MESSAGE_OVERHEAD if notes else 0)
    room = available - used - own
    summary = _summary_section(memory.summary.strip(), room, count, reports)
    room -= reports["summary"].tokens
    system_parts = (*(stable[n] for n in STABLE_SECTIONS), changing["episodes"], summary)
    system = "\n\n".join(p for p in system_parts if p)
    kept_turns = _newest_turns(turns, room, count)
    dropped = len(turns) - len(kept_turns)
    conversation_tokens = own + sum(count(t.content) + MESSAGE_OVERHEAD for t in kept_turns)
    if dropped:
        log.info("prompt section conversation cut: %d of %d earlier messages left out", dropped, len(turns))
    reports["conversation"] = SectionReport(name="conversation", tokens=conversation_tokens, cut=dropped > 0)

    messages = [
        ChatMessage(role="system", content=system),
        *kept_turns,
        *([ChatMessage(role="system", content=notes)] if notes else []),
        ChatMessage(role="user", content=user_text),
    ]
    return BuiltPrompt(messages=messages, sections=[reports[n] for n in SECTION_ORDER])


@dataclass(frozen=True, slots=True)
class _Window:
    """The model's context and the reply's share of it (named in a stable section's refusal)."""

    context_size: int
    max_tokens: int


def _stable_sections(
    persona: Persona,
    memory: MemoryContext,
    shares: dict[str, int],
    count: Counter,
    window: _Window,
    reports: dict[str, SectionReport],
) -> dict[str, str]:
    """The stable sections rendered: single texts cut at sentence boundaries, goals by rank; one that
    would lose more than half of itself is refused (PromptTooLargeError)."""
    settings = persona.settings
    soul = soul_for_prompt(persona.soul.strip(), settings.name, settings.language)
    soul = soul or FALLBACK_SOUL.format(name=settings.name)
    texts = {
        "soul": f"{soul}\n\n{person_line(persona)}",
        "core_memory": memory.core_memory.strip(),
        "notepad": memory.notepad.strip(),
        "strategy": memory.strategy.strip(),
    }
    goals = _goal_items(memory)
    rendered = {n: _render(n, t) for n, t in texts.items()}
    rendered["goals"] = _render("goals", _bullets(goals))
    needs = {n: count(rendered[n]) if rendered[n] else 0 for n in STABLE_SECTIONS}
    grants = _allot(needs, {n: shares[n] for n in STABLE_SECTIONS})
    stable: dict[str, str] = {}
    for name in STABLE_SECTIONS:
        need, grant = needs[name], grants[name]
        if need <= grant:
            stable[name] = rendered[name]
            reports[name] = SectionReport(name=name, tokens=need)
            continue
        if grant < need * MIN_STABLE_KEEP:
            raise _too_large(name, need, grant, window)
        heading = SECTION_HEADINGS.get(name)
        head_cost = count(heading) + 1 if heading else 0
        if name == "goals":
            kept, _ = fit_items(goals, grant - head_cost, count)
            stable[name] = _render(name, _bullets(kept))
        else:
            stable[name] = _render(name, cut_text(texts[name], grant - head_cost, count))
        tokens = count(stable[name]) if stable[name] else 0
        _log_cut(name, need, tokens)
        reports[name] = SectionReport(name=name, tokens=tokens, cut=True)
    return stable


def _too_large(name: str, need: int, grant: int, window: _Window) -> PromptTooLargeError:
    subject, what = _WHAT_TO_SHORTEN[name]
    context_size, max_tokens = window.context_size, window.max_tokens
    return PromptTooLargeError(
        notice(
            "{subject} is {need:,} tokens; the model's context is {context:,} ({room:,} after the "
            "reply's {reply:,}), and {what} may use {grant:,} of it: shorten {what}.",
            subject=subject,
            need=need,
            context=context_size,
            room=context_size - max_tokens,
            reply=max_tokens,
            what=what,
            grant=grant,
        ),
        hint=notice(
            "Or use a model with a larger context (context_size in persona.toml), or lower max_tokens there."
        ),
    )


def _changing_sections(
    memory: MemoryContext, shares: dict[str, int], count: Counter, reports: dict[str, SectionReport]
) -> dict[str, str]:
    """The changing sections rendered: lists cut by rank (best first), the feelings as one text."""
    changing: dict[str, str] = {}
    episode_items = [f"{e.date}: {e.text.strip()}" for e in reversed(memory.episodes) if e.text.strip()]
    lists = {
        "episodes": episode_items,  # newest first: the nearest days matter most
        "recalled": memory.recalled,
        "entities": memory.entities,
        "knowledge": memory.knowledge,
    }
    for name in CHANGING_SECTIONS:
        heading = SECTION_HEADINGS[name]
        budget = shares[name] - count(heading) - 1
        if name == "feelings":
            full = memory.feelings.strip()
            body = cut_text(full, budget, count) if full else ""
            cut = body != full
        else:
            items = [i.strip() for i in lists[name] if i.strip()]
            kept, cut = fit_items(items, budget, count) if items else ([], False)
            if name == "episodes":
                kept.reverse()  # shown in date order
            body = _bullets(kept)
        changing[name] = _render(name, body)
        tokens = count(changing[name]) if changing[name] else 0
        if cut:
            full_cost = count(_render(name, memory.feelings if name == "feelings" else _bullets(lists[name])))
            _log_cut(name, full_cost, tokens)
        reports[name] = SectionReport(name=name, tokens=tokens, cut=cut)
    return changing


def _summary_section(summary_text: str, room: int, count: Counter, reports: dict[str, SectionReport]) -> str:
    """The running summary, rendered: it stands for the oldest turns, so it is paid from the
    conversation's room before them, at most SUMMARY_MAX_SHARE of it."""
    summary = _render("summary", summary_text)
    summary_cut = False
    if summary:
        cap = int(max(0, room) * SUMMARY_MAX_SHARE)
        if count(summary) > cap:
            summary_cut = True
            body = cut_text(summary_text, cap - count(SECTION_HEADINGS["summary"]) - 1, count)
            _log_cut("summary", count(summary), count(_render("summary", body)) if body else 0)
            summary = _render("summary", body)
    summary_tokens = count(summary) if summary else 0
    reports["summary"] = SectionReport(name="summary", tokens=summary_tokens, cut=summary_cut)
    return summary


def _newest_turns(turns: Sequence[ChatMessage], room: int, count: Counter) -> list[ChatMessage]:
    """The newest turns that fit in `room`, in their order (ranked by recency: the oldest go first)."""
    kept: list[ChatMessage] = []
    for turn in reversed(turns):
        cost = count(turn.content) + MESSAGE_OVERHEAD
        if cost > room:
            break
        kept.append(turn)
        room -= cost
    kept.reverse()
    return kept


def build_messages(
    persona: Persona,
    history: Sequence[StoredMessage],
    user_text: str,
    memory: MemoryContext | None = None,
) -> list[ChatMessage]:
    """The messages alone, counted with an estimate (see build_prompt)."""
    return build_prompt(persona, history, user_text, memory).messages
