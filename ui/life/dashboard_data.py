"""What the introspection dashboard shows, read in one go on its worker thread (plain Python, no Qt), and
the small formatting helpers its panels share."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from nexus_ark.memory.components import EmotionEntry, Entity, Episode, Goal, Insight, OpenQuestion
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.drives import DriveReport
from nexus_ark.mind.state import DrivePoint, history
from ui.util.i18n import tr


@dataclass
class Snapshot:
    report: DriveReport
    history: list[DrivePoint] = field(default_factory=list)
    questions: list[OpenQuestion] = field(default_factory=list)
    emotions: list[EmotionEntry] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    insights: list[Insight] = field(default_factory=list)
    name: str = ""  # the persona's name, read with the rest
    # Why the latest dream did not reflect ("reflection needs a larger model"), and on which model; '' when
    # it did.
    held_back: str = ""
    held_back_model: str = ""
    dreams: list[DreamEntry] = field(default_factory=list)  # finished dreams, newest first


@dataclass
class DreamEntry:
    """A finished dream as the diary lists it: when, which day, and what it wrote. A dream on a model too
    small to reflect writes no insight, only the day's episode and people and things: the diary shows it
    all the same (it read "No dreams yet" right after Dream now)."""

    finished_at: str
    level: int
    date: str
    episode: str = ""  # the episode's summary, when this dream wrote one
    entities: list[str] = field(default_factory=list)
    questions: int = 0
    goals: int = 0
    reflected: bool = False  # it wrote an insight: the diary shows that entry instead


def read_snapshot(report: DriveReport, reader: MemoryStore) -> Snapshot:
    """Everything but the drives (computed by the app) from one read-only connection."""
    c = reader.components
    return Snapshot(
        report=report,
        history=history(reader),
        questions=c.open_questions(include_resolved=True),
        emotions=c.emotions(),
        goals=c.goals(status=None),
        entities=c.entities(),
        episodes=c.episodes(),
        insights=c.insights(limit=200),
        dreams=_dreams(reader),
        **_held_back(reader),
    )


def _dreams(reader: MemoryStore, limit: int = 100) -> list[DreamEntry]:
    """Finished dreams that wrote something (their result as stored: nexus_ark.dreaming DreamResult), newest
    first. A pass that was skipped (nothing new to dream of) is no dream."""
    out = []
    for finished_at, level, day, raw in reader.dream_jobs.finished_results(limit):
        try:
            result = json.loads(raw)
        except ValueError:
            continue  # written by another version, damaged: the rest of the diary still shows
        if not isinstance(result, dict) or result.get("skipped"):
            continue
        episode = result.get("episode") or {}
        out.append(
            DreamEntry(
                finished_at=str(finished_at or ""),
                level=int(level),
                date=str(day),
                episode=str(episode.get("summary", "")) if isinstance(episode, dict) else "",
                entities=[str(e) for e in result.get("entities_updated") or []],
                questions=len(result.get("open_questions") or []),
                goals=len(result.get("goals") or []),
                reflected=bool(result.get("insight") or result.get("insights")),
            )
        )
    return out


def _held_back(reader: MemoryStore) -> dict[str, str]:
    """The latest finished dream's reason for not reflecting (nexus_ark.dreaming: DreamResult.reflection)."""
    held = reader.dream_jobs.held_back()
    return {"held_back": held.reason, "held_back_model": held.model} if held is not None else {}


def timestamp(stamp: str) -> float:
    """Seconds since the epoch of a stored ISO time (a time without a zone is the person's local time)."""
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.timestamp()


def local_time(stamp: str | None) -> str:
    """A stored time as the person's local "YYYY-MM-DD HH:MM"."""
    if not stamp:
        return ""
    try:
        return datetime.fromtimestamp(timestamp(stamp)).strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):  # a time the platform cannot convert (a year-1 import)
        return stamp[:16].replace("T", " ")


def sources_text(source_ids: list[str]) -> str:
    """Where a memory came from, e.g. "from messages 12, 15" (other kinds of source as they are stored)."""
    if not source_ids:
        return tr("no recorded source")
    messages = [s.removeprefix("msg:") for s in source_ids if s.startswith("msg:")]
    others = [s for s in source_ids if not s.startswith("msg:")]
    parts = []
    if messages:
        parts.append(tr("from messages {ids}", ids=", ".join(messages)))
    if others:
        parts.append(tr("from {ids}", ids=", ".join(others)))
    return "; ".join(parts)
