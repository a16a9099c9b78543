"""What the memory components put into one prompt (agent.prompt lays it out and budgets it).

Per the memory design: core memory, notepad, goals (3 short-term, 2 long-term) and the latest dream strategy
always; the episodes of the N days before the oldest message in the prompt; recalled archive items; entity
memory and knowledge-base chunks only when they match the user's text. Reads only: a dry run on a read-only
connection gathers the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta

from nexus_ark.agent.prompt import EpisodeNote, MemoryContext
from nexus_ark.clock import EARLIEST_YEAR, LATEST_YEAR
from nexus_ark.memory.archive import SearchHit
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind import state as drive_state
from nexus_ark.mind.narrative import feelings

SHORT_GOALS = 3
LONG_GOALS = 2
ENTITY_K = 3
KNOWLEDGE_K = 3
# Kinds with a section of their own: a general recall hit of these kinds would say the same thing twice
# (core memory, goals) or would not have been asked for (entities, documents, which must match).
_OWN_SECTIONS = {"core", "entity", "kb_chunk"}


def _day(stamp: str) -> date | None:
    """The date a stored time names; None for none, or for one out of the years kept (an older version
    let a year-1 date in, and a lookback of days before it overflowed Python's dates: every turn failed)."""
    try:
        day = date.fromisoformat(stamp[:10])
    except ValueError:
        return None
    return day if EARLIEST_YEAR <= day.year <= LATEST_YEAR else None


def episode_window(history: Sequence[StoredMessage], lookback_days: int, today: date) -> tuple[str, str]:
    """[first, last] dates (inclusive) of the episodes to show: the `lookback_days` days before the oldest
    message the prompt may hold (today when there is none). That day itself is in the prompt verbatim."""
    oldest = next((d for m in history if (d := _day(m.created_at)) is not None), None) or today
    return (oldest - timedelta(days=lookback_days)).isoformat(), (oldest - timedelta(days=1)).isoformat()


def _mentioned(name: str, text: str) -> bool:
    return len(name) >= 2 and name.casefold() in text.casefold()


def _named(hit: SearchHit, speakers: Mapping[str, str]) -> str:
    """A recalled message as the prompt shows it: "user: I adopted a dog" becomes "Ken: I adopted a dog"
    when the person's name is known, and the persona's folder name its own name, so a small model reading
    its memories knows who said what (stored items keep their labels: the name may change later)."""
    if hit.kind != "message" or not hit.speaker or hit.speaker not in speakers:
        return hit.text
    label = f"{hit.speaker}: "
    if not hit.text.startswith(label):
        return hit.text
    return f"{speakers[hit.speaker]}: {hit.text[len(label) :]}"


def gather_inputs(
    memory: MemoryStore,
    text: str,
    history: Sequence[StoredMessage],
    hits: Sequence[SearchHit],
    *,
    lookback_days: int,
    now: datetime,
    recall_k: int,
    language: str = "en",
    speakers: Mapping[str, str] | None = None,
) -> MemoryContext:
    """`hits` are the archive's answers to `text` (best first; the caller searched, with or without an
    embedder). Messages already in the prompt and items with a section of their own are left out.
    `speakers` names stored speaker labels in recalled messages ("user" → the person's name)."""
    components = memory.components
    short = [g.goal for g in components.goals("short")[:SHORT_GOALS]]
    long = [g.goal for g in components.goals("long")[:LONG_GOALS]]

    episodes: list[EpisodeNote] = []
    if lookback_days > 0:
        first, last = episode_window(history, lookback_days, now.date())
        episodes = [
            EpisodeNote(date=e.date, text=e.summary)
            for e in components.episodes(since=first)
            if e.date <= last
        ]
    shown_days = {f"{e.date}:" for e in episodes}

    # A message is indexed under "msg:<id>", or under the id it was imported with.
    in_prompt = {f"msg:{m.id}" for m in history} | {m.source_id for m in history if m.source_id}
    shown_goals = [f": {g}" for g in (*short, *long)]
    recalled: list[str] = []
    for hit in hits:
        if hit.source_id in in_prompt or hit.kind in _OWN_SECTIONS:
            continue
        if hit.kind == "episode" and hit.text[:11] in shown_days:
            continue
        if hit.kind == "goal" and any(hit.text.endswith(g) for g in shown_goals):
            continue
        recalled.append(_named(hit, speakers or {}))
        if len(recalled) == recall_k:
            break

    # Entities: named in the message, then those whose text shares its informative words (keywords, not
    # meaning: nearest vectors always return something, and these are shown only when they really match).
    entities: list[str] = [f"{e.name}: {e.text}" for e in components.entities() if _mentioned(e.name, text)]
    for hit in memory.archive.search(text, None, k=ENTITY_K, kinds=["entity"], mode="fts"):
        if hit.text not in entities:
            entities.append(hit.text)
    knowledge = [
        h.text for h in memory.archive.search(text, None, k=KNOWLEDGE_K, kinds=["kb_chunk"], mode="fts")
    ]

    return MemoryContext(
        core_memory=components.core_memory(),
        notepad=components.notepad(),
        goals_short=short,
        goals_long=long,
        strategy=components.latest_strategy(),
        episodes=episodes,
        # "How you feel now": the drives at or above 0.4, computed for this moment (nothing is written).
        feelings=feelings(drive_state.current(memory, now, language=language, talking=True), language),
        recalled=recalled,
        entities=entities[:ENTITY_K],
        knowledge=knowledge,
    )
