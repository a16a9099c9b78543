"""The stages of a dream: what each asks of the persona, the shape of its answer, and how a valid answer
is written to memory (with its source message ids). A stage's write and the job's note that the stage is
done commit in one transaction (dreaming/dream.py), so a crash redoes a stage whole or not at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from nexus_ark.dreaming.material import Material
from nexus_ark.dreaming.schemas import (
    EntityUpdates,
    EpisodeDraft,
    GoalChanges,
    InsightDraft,
    QuestionDrafts,
)
from nexus_ark.memory.components import Episode, Goal, GoalTerm, Insight, OpenQuestion
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice


class StageSkipped(Exception):
    """The stage's answer held nothing that may be written (the reason is recorded)."""


@dataclass(frozen=True)
class Stage:
    name: str
    level: int  # the lowest dream level that runs it
    schema: type[BaseModel] | None  # None: the stage only uses tools (consolidation)
    task: str
    apply: Callable[[MemoryStore, Any, Material], dict[str, Any]]


def _sources(ids: list[str], material: Material, fallback: list[str] | None = None) -> list[str]:
    """The cited ids that are really the day's messages; none valid: the fallback (the messages the
    persona read), so every write names where it came from."""
    known = set(material.source_ids)
    cited = [i for i in dict.fromkeys(ids) if i in known]
    return cited or fallback or [f"msg:{i}" for i in material.shown_ids] or material.source_ids


def _insight(memory: MemoryStore, draft: InsightDraft, material: Material) -> dict[str, Any]:
    insight = Insight(
        trigger_topic=draft.trigger_topic.strip(),
        insight=draft.insight.strip(),
        strategy=draft.strategy.strip(),
        log_entry=draft.log_entry.strip(),
        source_ids=_sources(draft.source_ids, material),
    )
    memory.components.add_insight(insight)
    return insight.model_dump(exclude={"created_at"})


def _entities(memory: MemoryStore, updates: EntityUpdates, material: Material) -> dict[str, Any]:
    written = []
    lowered = material.text.casefold()
    for note in updates.entities:
        name = " ".join(note.name.split())
        if name in written:
            continue
        # A name that was never said that day is the model's invention: not written.
        if len(name) < 2 or name.casefold() not in lowered:
            continue
        mentioned = [
            f"msg:{line.split(']')[0].removeprefix('[msg:')}"
            for line in material.text.splitlines()
            if line.startswith("[msg:") and name.casefold() in line.casefold()
        ]
        existing = memory.components.entity(name)
        note_text = " ".join(note.text.split())
        text = note_text if existing is None else f"{existing.text}\n({material.day.isoformat()}) {note_text}"
        if existing is not None and note_text in existing.text:
            continue  # already known: nothing new to write
        memory.components.write_entity(name, text, _sources(note.source_ids, material, mentioned))
        written.append(name)
    if not written:
        raise StageSkipped(notice("no entity in the answer was named in the day's conversation"))
    return {"entities_updated": written}


def _episode(memory: MemoryStore, draft: EpisodeDraft, material: Material) -> dict[str, Any]:
    episode = Episode(
        date=material.day.isoformat(),
        summary=draft.summary.strip(),
        key_events=[e.strip() for e in draft.key_events if e.strip()],
        emotional_tone=draft.emotional_tone.strip(),
        source_ids=_sources(draft.source_ids, material),
    )
    memory.components.put_episode(episode)
    return episode.model_dump()


def _questions(memory: MemoryStore, drafts: QuestionDrafts, material: Material) -> dict[str, Any]:
    known = {q.question.casefold().strip() for q in memory.components.open_questions(include_resolved=True)}
    added = []
    for d in drafts.questions:
        text = " ".join(d.question.split())
        if text.casefold() in known:
            continue
        known.add(text.casefold())
        question = OpenQuestion(
            question=text,
            topic=d.topic.strip(),
            context=d.context.strip(),
            priority=d.priority,
            source_ids=_sources(d.source_ids, material),
        )
        question.id = memory.components.add_question(question)
        added.append(
            question.model_dump(include={"id", "question", "topic", "context", "priority", "source_ids"})
        )
    return {"open_questions": added}


def _goal_changes(term: GoalTerm) -> Callable[[MemoryStore, GoalChanges, Material], dict[str, Any]]:
    def apply(memory: MemoryStore, changes: GoalChanges, material: Material) -> dict[str, Any]:
        c = memory.components
        active = {g.id: g for g in c.goals(term, "active")}
        sources = _sources([], material)
        done: list[dict[str, Any]] = []
        existing = {g.goal.casefold() for g in active.values()}
        for new in changes.new:
            if new.goal.strip().casefold() in existing:
                continue
            goal = c.put_goal(
                Goal(
                    term=term,
                    goal=new.goal.strip(),
                    priority=new.priority,
                    related_values=new.related_values,
                    source_ids=sources,
                )
            )
            done.append({"id": goal.id, "term": term, "change": "created", "goal": goal.goal})
        for note in changes.progress:
            if note.goal_id in active:
                c.add_progress(note.goal_id, note.note, sources)
                done.append({"id": note.goal_id, "term": term, "change": "progress", "note": note.note})
        for status, ids in (("completed", changes.complete), ("abandoned", changes.abandon)):
            for goal_id in ids:
                if goal_id in active:
                    c.set_goal_status(goal_id, status)  # type: ignore[arg-type]
                    done.append({"id": goal_id, "term": term, "change": status, "goal": active[goal_id].goal})
                    del active[goal_id]
        return {"goals": done}

    return apply


def _nothing(memory: MemoryStore, answer: Any, material: Material) -> dict[str, Any]:
    return {}


STAGES: tuple[Stage, ...] = (
    Stage(
        "insight",
        1,
        InsightDraft,
        "Reflect on this day's conversation and write your dream diary: the topic that stayed with you, "
        "what you understood about the person, how you will act on it next time, and a diary line.",
        _insight,
    ),
    Stage(
        "entities",
        1,
        EntityUpdates,
        "Which people, places, things or ideas named in this day's conversation are worth remembering? "
        "For one or two of them: name, exactly as it was written in the conversation; text, what you now "
        "know about it; source_ids, the [msg:N] ids that mention it.",
        _entities,
    ),
    Stage(
        "episode",
        1,
        EpisodeDraft,
        "Write this day's episode for your memory: what happened, in two or three sentences, its key "
        "events and the mood of the day.",
        _episode,
    ),
    Stage(
        "questions",
        1,
        QuestionDrafts,
        "Note up to two things from this day's conversation you would like to ask the person about next "
        "time, each with its topic, why it came to mind and how much it matters (0 to 1). None is fine.",
        _questions,
    ),
    Stage(
        "week",
        2,
        InsightDraft,
        "Look back over the last seven days: what patterns do you notice in your conversations and in the "
        "person's days? trigger_topic: the pattern in a few words; insight: what it means; strategy: how "
        "you will act in the week ahead; log_entry: a short diary entry.",
        _insight,
    ),
    Stage(
        "short_goals",
        2,
        GoalChanges,
        "Adjust your short-term goals for the coming week. new: at most two new goals that follow from "
        "the week (goal, priority 1 = most important). progress: notes on existing goals (goal_id as "
        "listed in brackets, note). complete / abandon: ids of goals reached or no longer fitting. Use "
        "only the ids listed.",
        _goal_changes("short"),
    ),
    Stage(
        "values",
        3,
        InsightDraft,
        "Look back over the last month and re-examine your values: what matters to you in this "
        "relationship now, and has it changed? trigger_topic: the value in a few words; insight: what you "
        "understood; strategy: how you will live by it; log_entry: a short diary entry.",
        _insight,
    ),
    Stage(
        "long_goals",
        3,
        GoalChanges,
        "Revise your long-term goals in the light of your values. new: at most two (goal, priority, "
        "related_values). progress: notes by goal_id. complete / abandon: goal ids. Use only the ids "
        "listed.",
        _goal_changes("long"),
    ),
    Stage(
        "consolidate",
        1,
        None,
        "Tidy your memory: search it for memories about this day's topics that are outdated, duplicated or "
        "contradicted, and move those aside with archive_memory (giving the item id and a reason). Never "
        "archive your core memory. When you are done, say what you did in one sentence.",
        _nothing,
    ),
)


# Each stage's name in a sentence for the person (the timeline): in English the name as stored, in a window
# translated.
_STAGE_WORDS = {
    "insight": notice("insight"),
    "entities": notice("entities"),
    "episode": notice("episode"),
    "questions": notice("questions"),
    "week": notice("week"),
    "short_goals": notice("short_goals"),
    "values": notice("values"),
    "long_goals": notice("long_goals"),
    "consolidate": notice("consolidate"),
}


def stages_for(level: int) -> list[Stage]:
    return [s for s in STAGES if s.level <= level]


def stage_word(name: str) -> str:
    """A stage's name in a sentence for the person: a notice; a name this version does not know as it is."""
    return _STAGE_WORDS.get(name, name)
