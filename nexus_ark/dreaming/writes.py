"""How a dream stage's valid answer is written to memory, each write with the source message ids it came
from and checked against them first (dreaming/grounding.py): what the grounding check refuses is counted,
and an answer with nothing left to write skips its stage (StageSkipped, with the reason)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nexus_ark.dreaming.extractive import NOT_NAMES, named_inside
from nexus_ark.dreaming.grounding import Grounding, GroundingReport, Refusal
from nexus_ark.dreaming.material import Line, Material
from nexus_ark.dreaming.names import People, conversation_people, never_a_name
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
from nexus_ark.sentences import sentences


class StageSkipped(Exception):
    """The stage's answer held nothing that may be written (the reason is recorded, with what the
    grounding check refused on the way)."""

    def __init__(self, reason: str, grounding: GroundingReport | None = None) -> None:
        super().__init__(reason)
        self.grounding = grounding


Apply = Callable[[MemoryStore, Any, Material], dict[str, Any]]


def _sources(ids: list[str], material: Material, fallback: list[str] | None = None) -> list[str]:
    """The cited ids that are really the day's messages; none valid: the fallback (the messages the
    persona read), so every write names where it came from."""
    known = set(material.source_ids)
    cited = [i for i in dict.fromkeys(ids) if i in known]
    return cited or fallback or [f"msg:{i}" for i in material.shown_ids] or material.source_ids


def cited_ids(ids: list[str], material: Material) -> list[str]:
    """Only the ids the model cited that are the pass's messages (none: the check reads them all)."""
    known = set(material.source_ids)
    return [i for i in dict.fromkeys(ids) if i in known]


def grounding_check(material: Material) -> Grounding:
    """The check set by the dream; a stage applied on its own (a test) gets one on words alone."""
    if material.grounding is None:
        material.grounding = Grounding(material.texts, None, known={material.persona, *material.speakers})
    return material.grounding


def _written_from(cited: list[str], supporting: list[str], material: Material) -> list[str]:
    """Where a write came from: what the model cited, else the messages that support it."""
    return cited or supporting or _sources([], material)


def insight_stage(stage: str) -> Apply:
    def apply(memory: MemoryStore, draft: InsightDraft, material: Material) -> dict[str, Any]:
        check, report = grounding_check(material), GroundingReport()
        cited = cited_ids(draft.source_ids, material)
        higher = stage != "insight"  # the week's and month's rest on the period's episodes too
        # Every sentence of it: one true sentence must not carry an invented one ("Daichi wants help moving.
        # He will bring you a birthday gift.").
        support: list[str] | None = []
        claims = sentences(draft.insight, flat=True) or [draft.insight]
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


def _add_to_entity(
    memory: MemoryStore, name: str, note: str, material: Material, sources: list[str], *, person: bool = False
) -> bool:
    existing = memory.components.entity(name)
    if existing is not None and note in existing.text:
        return False  # already known: nothing new to write
    text = note if existing is None else f"{existing.text}\n({material.day.isoformat()}) {note}"
    if person:
        memory.components.write_person(name, text, sources)
    else:
        memory.components.write_entity(name, text, sources)
    return True


def people_in(
    material: Material,
    lines: list[Line] | None = None,
    roles: dict[int, str] | None = None,
    imported: set[int] | None = None,
) -> People:
    """The conversation's own people in the pass's messages (or in `lines`): the person and the persona
    under every name the day gives them."""
    lines = material.messages if lines is None else lines
    roles = material.roles if roles is None else roles
    return conversation_people(
        lines,
        roles,
        persona_names=[material.persona] + [sp for mid, _, sp, _ in lines if roles.get(mid) == "assistant"],
        user_name=material.user_name,
        trusted=material.imported if imported is None else imported,
    )


def _not_an_entity(name: str, mentioned: list[str], material: Material, memory: MemoryStore) -> str:
    """Why a proposed name is no entity to remember ('' when it is one)."""
    if not mentioned:  # never said that day: the model's invention (an insight's title, a stranger)
        return "not named in the day's messages"
    if name.casefold() == material.persona.casefold():
        return "the persona itself"
    if name.casefold() in NOT_NAMES or never_a_name(name):
        return "a common word, not a name"
    who = people_in(material).who(name)
    if who == "persona":
        return "the persona itself"
    if who == "speaker":
        return "a speaker of the conversation, not an outside entity"
    # A capitalized word that only opens sentences ("Back from a night shift") is no name; a name memory
    # knows already is one however it is written.
    if memory.components.entity(name) is None and not named_inside(
        name, [text for _, _, _, text in material.messages]
    ):
        return "only opens sentences: a common word, not a name"
    return ""


def write_entities(memory: MemoryStore, updates: EntityUpdates, material: Material) -> dict[str, Any]:
    check, report = grounding_check(material), GroundingReport()
    people = people_in(material)
    check.known |= people.words  # "Cal" of Calvin needs no source: the day calls him so
    written: list[str] = []
    for note in updates.entities:
        name = " ".join(note.name.split())
        mentioned = _said_in_messages(name, material)
        person = people.who(name) == "person"
        if person and people.person_name:
            # What the day says about the person is what the persona knows about the person: it rests on
            # the person's own messages (where their name is said matters less than what they said).
            mentioned = [f"msg:{m}" for m, r in material.roles.items() if r == "user"] or mentioned
            name = people.person_name
        if name in written:
            continue
        if person:
            why = "" if people.person_name else "the person, whose name the day does not say"
        else:
            why = _not_an_entity(name, mentioned, material, memory)
        if why:
            report.checked += 1
            report.refused += 1
            report.refusals.append(Refusal(stage="entities", text=name, why=why))
            continue
        cited = [i for i in cited_ids(note.source_ids, material) if i in mentioned] or mentioned
        text, _ = check.keep_supported("entities", note.text, cited, report=report)
        if text and _add_to_entity(memory, name, text, material, cited, person=person):
            written.append(name)
    if not written:
        raise StageSkipped(
            notice("no entity in the answer was named and supported in the day's conversation"), report
        )
    return {"entities_updated": written, "grounding": report.model_dump()}


def write_episode(memory: MemoryStore, draft: EpisodeDraft, material: Material) -> dict[str, Any]:
    check, report = grounding_check(material), GroundingReport()
    cited = cited_ids(draft.source_ids, material)
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


def write_questions(memory: MemoryStore, drafts: QuestionDrafts, material: Material) -> dict[str, Any]:
    check, report = grounding_check(material), GroundingReport()
    known = {q.question.casefold().strip() for q in memory.components.open_questions(include_resolved=True)}
    added = []
    for d in drafts.questions:
        text = " ".join(d.question.split())
        if text.casefold() in known:
            continue
        cited = cited_ids(d.source_ids, material)
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


def goal_changes(term: GoalTerm) -> Apply:
    stage = f"{term}_goals"

    def apply(memory: MemoryStore, changes: GoalChanges, material: Material) -> dict[str, Any]:
        c = memory.components
        check, report = grounding_check(material), GroundingReport()
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


def write_nothing(memory: MemoryStore, answer: Any, material: Material) -> dict[str, Any]:
    return {}
