"""What a dream reflects on: the day's conversation with message ids, and for the higher levels the week's
or month's episodes, insights and goals. Read once at the start of a dream; each stage gets the same text
first in its prompt, so a local model reuses the evaluated prefix from one stage to the next."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from nexus_ark.clock import stored_time
from nexus_ark.memory.store import MemoryStore
from nexus_ark.prompts.dreaming import (
    ACTIVE_GOALS,
    CONVERSATION_ON,
    CONVERSATION_SINCE,
    LEFT_OUT,
    NO_CONVERSATION,
    NO_GOALS,
    PERIOD_DAYS,
    PERIOD_INSIGHTS,
)

Counter = Callable[[str], int]
MESSAGE_CHARS = 600  # one long message must not crowd out the rest of the day


Line = tuple[int, str, str, str]  # (id, local time HH:MM, speaker, text)


@dataclass
class Material:
    day: date
    text: str
    message_ids: list[int] = field(default_factory=list)  # the pass's messages of the day, oldest first
    shown_ids: list[int] = field(default_factory=list)  # those in `text` (the budget may leave some out)
    speakers: set[str] = field(default_factory=set)
    messages: list[Line] = field(default_factory=list)  # the pass's messages, as in message_ids
    context: str = ""  # levels 2 and 3: the period's episodes, insights and goals
    after_id: int | None = None  # a later pass: the messages up to this id were dreamt before
    persona: str = ""  # the persona's name (never an entity of its own; needs no source)
    user_name: str = ""  # what the persona calls the person (Persona.user_name; "" = not told)
    # Each message's role ("user": the person's; "assistant": the persona's, another member's, ChatGPT's)
    # and whether it was imported (not written by the persona's own model).
    roles: dict[int, str] = field(default_factory=dict)
    imported: set[int] = field(default_factory=set)
    # What checks each written sentence against its sources (dreaming/grounding.py); set by the dream.
    grounding: Any = None
    # The soul stage's context (dreaming/soul_stage.py SoulContext); set by the dream.
    soul: Any = None

    @property
    def texts(self) -> dict[str, str]:
        """Each message's words by its source id ("msg:N"), as the persona read them."""
        return {f"msg:{mid}": f"{speaker}: {text}" for mid, _, speaker, text in self.messages}

    @property
    def source_ids(self) -> list[str]:
        return [f"msg:{i}" for i in self.message_ids]


def local_day(stamp: str) -> date | None:
    """The local date of a stored time; None for none (or one out of the years kept: an older version's
    year-1 import)."""
    if (dt := stored_time(stamp)) is None:
        return None
    return dt.astimezone().date()  # a stored time without a zone was local already: the same date


def day_messages(
    memory: MemoryStore, day: date, *, after_id: int | None = None, through_id: int | None = None
) -> list[Line]:
    """(id, local time HH:MM, speaker, text) of the day's messages on the conversation's line, in every
    room: in a room of several personas another member speaks under its name (what this persona heard)."""
    lo, hi = (day - timedelta(days=1)).isoformat(), (day + timedelta(days=2)).isoformat()
    rows = memory.messages.said_between(lo, hi)
    out = []
    for mid, stamp, speaker, content in rows:
        if local_day(stamp) != day:
            continue
        if (after_id is not None and mid <= after_id) or (through_id is not None and mid > through_id):
            continue  # another pass's
        dt = datetime.fromisoformat(stamp)  # local_day read it: a usable time
        clock = (dt.astimezone() if dt.tzinfo else dt).strftime("%H:%M")
        out.append((int(mid), clock, speaker, content))
    return out


def latest_day(memory: MemoryStore, today: date) -> date | None:
    """The newest local date (up to today) with a message."""
    stamps = memory.messages.newest_times(200)
    days = [d for stamp in stamps if (d := local_day(stamp)) is not None and d <= today]
    return max(days) if days else None


def gather(
    memory: MemoryStore,
    day: date,
    level: int,
    count: Counter,
    budget: int,
    *,
    after_id: int | None = None,
    through_id: int | None = None,
) -> Material:
    """The material within `budget` tokens: the day's messages (the newest kept when they do not all fit,
    with a note saying how many earlier ones were left out), then for level 2 the week and for level 3
    the month. A later pass of the same day (`after_id`) reads only what came since the last one."""
    messages = day_messages(memory, day, after_id=after_id, through_id=through_id)
    lines = [
        f"[msg:{mid}] {clock} {speaker}: {' '.join(text.split())[:MESSAGE_CHARS]}"
        for mid, clock, speaker, text in messages
    ]
    context = _context(memory, day, level)
    room = budget - count(context) - 16
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = count(line) + 1
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    kept.reverse()
    shown = [mid for mid, *_ in messages[len(messages) - len(kept) :]] if kept else []
    head = CONVERSATION_ON.format(day=day.isoformat())
    if after_id is not None:
        head = CONVERSATION_SINCE.format(day=day.isoformat())
    if len(kept) < len(lines):
        head += LEFT_OUT.format(count=len(lines) - len(kept))
    body = "\n".join([head, *kept]) if messages else NO_CONVERSATION.format(day=day.isoformat())
    text = f"{context}\n\n{body}" if context else body
    roles, imported = memory.messages.roles_of([m[0] for m in messages])
    return Material(
        day=day,
        roles=roles,
        imported=imported,
        text=text,
        message_ids=[m[0] for m in messages],
        shown_ids=shown,
        speakers={m[2] for m in messages},
        messages=messages,
        context=context,
        after_id=after_id,
    )


def _context(memory: MemoryStore, day: date, level: int) -> str:
    """For levels 2 and 3: the period's episodes and insights and the goals with their ids."""
    if level < 2:
        return ""
    c = memory.components
    span = 30 if level >= 3 else 7
    since = (day - timedelta(days=span - 1)).isoformat()
    parts = []
    episodes = [e for e in c.episodes(since=since) if e.date <= day.isoformat()]
    if episodes:
        parts.append(
            PERIOD_DAYS.format(span=span) + "\n" + "\n".join(f"- {e.date}: {e.summary}" for e in episodes)
        )
    insights = [i for i in c.insights(limit=20) if i.created_at[:10] >= since]
    if insights:
        parts.append(
            PERIOD_INSIGHTS + "\n" + "\n".join(f"- {i.trigger_topic}: {i.insight}" for i in insights[:8])
        )
    for term in ("short", "long") if level >= 3 else ("short",):
        goals = c.goals(term, "active")
        listed = "\n".join(f"- [{g.id}] p{g.priority} {g.goal}" for g in goals) or NO_GOALS
        parts.append(ACTIVE_GOALS.format(term=term) + f"\n{listed}")
    return "\n\n".join(parts)
