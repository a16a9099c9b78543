"""The stages of a dream: what each asks of the persona, the shape of its answer, and how a valid answer
is written to memory (with its source message ids). A stage's write and the job's note that the stage is
done commit in one transaction (dreaming/dream.py), so a crash redoes a stage whole or not at all."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from nexus_ark.dreaming.extractive import NOT_NAMES, central, episode_summary, named, named_inside, quote
from nexus_ark.dreaming.grounding import Grounding, GroundingReport, Refusal, sentences
from nexus_ark.dreaming.material import Material, day_messages
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
    """The stage's answer held nothing that may be written (the reason is recorded, with what the
    grounding check refused on the way)."""

    def __init__(self, reason: str, grounding: GroundingReport | None = None) -> None:
        super().__init__(reason)
        self.grounding = grounding


# Why a stage is not asked of a model below the reflection capability (providers.base.Capabilities.reflects).
NEEDS_REFLECTION = notice("reflection needs a larger model")

Apply = Callable[[MemoryStore, Any, Material], dict[str, Any]]


@dataclass(frozen=True)
class Stage:
    name: str
    level: int  # the lowest dream level that runs it
    schema: type[BaseModel] | None  # None: the stage only uses tools (consolidation)
    task: str
    apply: Apply
    # Below the reflection capability: what the stage writes without the model (None: nothing, skipped
    # with NEEDS_REFLECTION).
    faithful: Callable[[MemoryStore, Material], dict[str, Any]] | None = None


def _sources(ids: list[str], material: Material, fallback: list[str] | None = None) -> list[str]:
    """The cited ids that are really the day's messages; none valid: the fallback (the messages the
    persona read), so every write names where it came from."""
    known = set(material.source_ids)
    cited = [i for i in dict.fromkeys(ids) if i in known]
    return cited or fallback or [f"msg:{i}" for i in material.shown_ids] or material.source_ids


def _cited(ids: list[str], material: Material) -> list[str]:
    """Only the ids the model cited that are the pass's messages (none: the check reads them all)."""
    known = set(material.source_ids)
    return [i for i in dict.fromkeys(ids) if i in known]


def _grounding(material: Material) -> Grounding:
    """The check set by the dream; a stage applied on its own (a test) gets one on words alone."""
    if material.grounding is None:
        material.grounding = Grounding(material.texts, None, known={material.persona, *material.speakers})
    return material.grounding


def _written_from(cited: list[str], supporting: list[str], material: Material) -> list[str]:
    """Where a write came from: what the model cited, else the messages that support it."""
    return cited or supporting or _sources([], material)


def _insight_stage(stage: str) -> Apply:
    def apply(memory: MemoryStore, draft: InsightDraft, material: Material) -> dict[str, Any]:
        check, report = _grounding(material), GroundingReport()
        cited = _cited(draft.source_ids, material)
        higher = stage != "insight"  # the week's and month's rest on the period's episodes too
        # Every sentence of it: one true sentence must not carry an invented one ("Daichi wants help moving.
        # He will bring you a birthday gift.").
        support: list[str] | None = []
        claims = sentences(draft.insight) or [draft.insight]
        check.prefetch(claims)
        for claim in claims:
            ids = check.check(stage, claim, cited, with_context=higher, report=report)
            if ids is None:
                support = None
                break
            support += [i for i in ids if i not in support]  # type: ignore[operator]
        for said in (draft.trigger_topic, draft.strategy, draft.log_entry):
            if (
                support is not None
                and check.check(stage, said, cited, names_only=True, with_context=higher, report=report)
                is None
            ):
                support = None
        if support is None:
            raise StageSkipped(
                notice("refused: {why}", why=report.refusals[-1].why if report.refusals else ""), report
            )
        insight = Insight(
            trigger_topic=draft.trigger_topic.strip(),
            insight=draft.insight.strip(),
            strategy=draft.strategy.strip(),
            log_entry=draft.log_entry.strip(),
            source_ids=_written_from(cited, support, material),
        )
        memory.components.add_insight(insight)
        return {**insight.model_dump(exclude={"created_at"}), "grounding": report.model_dump()}

    return apply


def _said_in_messages(name: str, material: Material) -> list[str]:
    """The pass's messages that say `name` (not the period's context: an insight's title is no entity)."""
    folded = name.casefold()
    return [f"msg:{mid}" for mid, _, _, text in material.messages if folded in text.casefold()]


def _add_to_entity(memory: MemoryStore, name: str, note: str, material: Material, sources: list[str]) -> bool:
    existing = memory.components.entity(name)
    if existing is not None and note in existing.text:
        return False  # already known: nothing new to write
    text = note if existing is None else f"{existing.text}\n({material.day.isoformat()}) {note}"
    memory.components.write_entity(name, text, sources)
    return True


def _not_an_entity(name: str, mentioned: list[str], material: Material, memory: MemoryStore) -> str:
    """Why a proposed name is no entity to remember ('' when it is one)."""
    if not mentioned:  # never said that day: the model's invention (an insight's title, a stranger)
        return "not named in the day's messages"
    if name.casefold() == material.persona.casefold():
        return "the persona itself"
    if name.casefold() in NOT_NAMES:
        return "a common word, not a name"
    # A capitalized word that only opens sentences ("Back from a night shift") is no name; a name memory
    # knows already is one however it is written.
    if memory.components.entity(name) is None and not named_inside(
        name, [text for _, _, _, text in material.messages]
    ):
        return "only opens sentences: a common word, not a name"
    return ""


def _entities(memory: MemoryStore, updates: EntityUpdates, material: Material) -> dict[str, Any]:
    check, report = _grounding(material), GroundingReport()
    written: list[str] = []
    for note in updates.entities:
        name = " ".join(note.name.split())
        if name in written:
            continue
        mentioned = _said_in_messages(name, material)
        why = _not_an_entity(name, mentioned, material, memory)
        if why:
            report.checked += 1
            report.refused += 1
            report.refusals.append(Refusal(stage="entities", text=name, why=why))
            continue
        cited = [i for i in _cited(note.source_ids, material) if i in mentioned] or mentioned
        text, _ = check.keep_supported("entities", note.text, cited, report=report)
        if text and _add_to_entity(memory, name, text, material, cited):
            written.append(name)
    if not written:
        raise StageSkipped(
            notice("no entity in the answer was named and supported in the day's conversation"), report
        )
    return {"entities_updated": written, "grounding": report.model_dump()}


def _episode(memory: MemoryStore, draft: EpisodeDraft, material: Material) -> dict[str, Any]:
    check, report = _grounding(material), GroundingReport()
    cited = _cited(draft.source_ids, material)
    summary, support = check.keep_supported("episode", draft.summary, cited, report=report)
    if not summary:
        raise StageSkipped(notice("no sentence of the episode was supported by the day's messages"), report)
    check.prefetch(draft.key_events)
    events = [
        e.strip()
        for e in draft.key_events
        if e.strip() and check.check("episode", e, cited, report=report) is not None
    ]
    episode = Episode(
        date=material.day.isoformat(),
        summary=summary,
        key_events=events,
        emotional_tone=draft.emotional_tone.strip(),
        source_ids=_written_from(cited, support, material),
    )
    _put_episode(memory, episode, material)
    return {**episode.model_dump(), "grounding": report.model_dump()}


def _put_episode(memory: MemoryStore, episode: Episode, material: Material) -> None:
    """A later pass of a day adds to the day's episode instead of replacing what was dreamt before."""
    before = next((e for e in memory.components.episodes(since=episode.date) if e.date == episode.date), None)
    if material.after_id is not None and before is not None:
        episode = episode.model_copy(
            update={
                "summary": f"{before.summary} {episode.summary}",
                "key_events": [
                    *before.key_events,
                    *(e for e in episode.key_events if e not in before.key_events),
                ],
                "source_ids": list(dict.fromkeys([*before.source_ids, *episode.source_ids])),
            }
        )
    memory.components.put_episode(episode)


def _questions(memory: MemoryStore, drafts: QuestionDrafts, material: Material) -> dict[str, Any]:
    check, report = _grounding(material), GroundingReport()
    known = {q.question.casefold().strip() for q in memory.components.open_questions(include_resolved=True)}
    added = []
    for d in drafts.questions:
        text = " ".join(d.question.split())
        if text.casefold() in known:
            continue
        cited = _cited(d.source_ids, material)
        support = check.check("questions", text, cited, report=report)
        if support is None or any(
            check.check("questions", said, cited, names_only=True, report=report) is None
            for said in (d.topic, d.context)
            if said.strip()
        ):
            continue  # a question the day never raised is not the person's to answer
        known.add(text.casefold())
        question = OpenQuestion(
            question=text,
            topic=d.topic.strip(),
            context=d.context.strip(),
            priority=d.priority,
            source_ids=_written_from(cited, support, material),
        )
        question.id = memory.components.add_question(question)
        added.append(
            question.model_dump(include={"id", "question", "topic", "context", "priority", "source_ids"})
        )
    return {"open_questions": added, "grounding": report.model_dump()}


def _goal_changes(term: GoalTerm) -> Apply:
    stage = f"{term}_goals"

    def apply(memory: MemoryStore, changes: GoalChanges, material: Material) -> dict[str, Any]:
        c = memory.components
        check, report = _grounding(material), GroundingReport()
        active = {g.id: g for g in c.goals(term, "active")}
        done: list[dict[str, Any]] = []
        existing = {g.goal.casefold() for g in active.values()}
        for new in changes.new:
            if new.goal.strip().casefold() in existing:
                continue
            support = check.check(stage, new.goal, [], with_context=True, report=report)
            if support is None:
                continue
            goal = c.put_goal(
                Goal(
                    term=term,
                    goal=new.goal.strip(),
                    priority=new.priority,
                    related_values=new.related_values,
                    source_ids=support or _sources([], material),
                )
            )
            done.append({"id": goal.id, "term": term, "change": "created", "goal": goal.goal})
        for note in changes.progress:
            if note.goal_id in active:
                support = check.check(stage, note.note, [], with_context=True, report=report)
                if support is None:
                    continue
                c.add_progress(note.goal_id, note.note, support or _sources([], material))
                done.append({"id": note.goal_id, "term": term, "change": "progress", "note": note.note})
        for status, ids in (("completed", changes.complete), ("abandoned", changes.abandon)):
            for goal_id in ids:
                if goal_id in active:
                    c.set_goal_status(goal_id, status)  # type: ignore[arg-type]
                    done.append({"id": goal_id, "term": term, "change": status, "goal": active[goal_id].goal})
                    del active[goal_id]
        return {"goals": done, "grounding": report.model_dump()}

    return apply


def _nothing(memory: MemoryStore, answer: Any, material: Material) -> dict[str, Any]:
    return {}


# -- below the reflection capability: the day in its own words (dreaming/extractive.py) ---------------
def _quoted_episode(memory: MemoryStore, material: Material) -> dict[str, Any]:
    """The day's most central messages, quoted (a later pass: chosen again from the whole day so far)."""
    check, report = _grounding(material), GroundingReport()
    through = max(material.message_ids) if material.message_ids else None
    day = day_messages(memory, material.day, through_id=through)
    chosen = central(day, check.embedder)
    check.prefetch([f"{line[2]}: {quote(line[3])}" for line in chosen])
    picked = [
        line
        for line in chosen
        # An earlier pass's message was checked when it was dreamt.
        if f"msg:{line[0]}" not in check.texts
        or check.check("episode", f"{line[2]}: {quote(line[3])}", [f"msg:{line[0]}"], report=report)
        is not None
    ]
    if not picked:
        raise StageSkipped(notice("no message of the day could be quoted"), report)
    episode = Episode(
        date=material.day.isoformat(),
        summary=episode_summary(picked),
        key_events=[],
        emotional_tone=_tone(memory, [mid for mid, *_ in day]),
        source_ids=[f"msg:{mid}" for mid, *_ in picked],
    )
    memory.components.put_episode(episode)
    return {**episode.model_dump(), "grounding": report.model_dump()}


def _tone(memory: MemoryStore, ids: list[int]) -> str:
    """The day's mood as the emotion detector read the person's messages (not a model's guess): the
    commonest feeling other than neutral, else neutral; '' when nothing was read."""
    if not ids:
        return ""
    marks = ",".join("?" * len(ids))
    labels = [
        r[0]
        for r in memory.db.execute(
            f"select emotion from emotion_log where message_id in ({marks})", ids
        ).fetchall()
    ]
    if not labels:
        return ""
    felt = Counter(label for label in labels if label != "neutral")
    return felt.most_common(1)[0][0] if felt else "neutral"


def _quoted_entities(memory: MemoryStore, material: Material) -> dict[str, Any]:
    """Names said in the pass's messages, each with the sentences that say them, quoted."""
    check, report = _grounding(material), GroundingReport()
    skip = {material.persona, *material.speakers}
    written = []
    found = named(material.messages, skip, memory.components.entity_names())
    check.prefetch([f'{speaker}: "{quote(sentence)}"' for m in found.values() for _, speaker, sentence in m])
    for name, mentions in found.items():
        lines, sources = [], []
        for mid, speaker, sentence in mentions:
            said = f'{speaker}: "{quote(sentence)}"'
            if check.check("entities", said, [f"msg:{mid}"], report=report) is not None:
                lines.append(f"({material.day.isoformat()}) {said}")
                sources.append(f"msg:{mid}")
        existing = memory.components.entity(name)
        new = [line for line in lines if existing is None or line not in existing.text]
        if new:
            text = "\n".join(new) if existing is None else f"{existing.text}\n" + "\n".join(new)
            memory.components.write_entity(name, text, sources)
            written.append(name)
    if not written:
        raise StageSkipped(notice("no name was said in the day's conversation"), report)
    return {"entities_updated": written, "grounding": report.model_dump()}


STAGES: tuple[Stage, ...] = (
    Stage(
        "insight",
        1,
        InsightDraft,
        "Reflect on this day's conversation and write your dream diary: the topic that stayed with you, "
        "what you understood about the person, how you will act on it next time, and a diary line.",
        _insight_stage("insight"),
    ),
    Stage(
        "entities",
        1,
        EntityUpdates,
        "Which people, places, things or ideas named in this day's conversation are worth remembering? "
        "For one or two of them: name, exactly as it was written in the conversation; text, what you now "
        "know about it; source_ids, the [msg:N] ids that mention it.",
        _entities,
        _quoted_entities,
    ),
    Stage(
        "episode",
        1,
        EpisodeDraft,
        "Write this day's episode for your memory: what happened, in two or three sentences, its key "
        "events and the mood of the day.",
        _episode,
        _quoted_episode,
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
        _insight_stage("week"),
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
        _insight_stage("values"),
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
