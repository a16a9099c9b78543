"""The four drives on the injectable clock: curves, decay, thresholds, the dominant drive, and what a
recomputation records (drive_history, the drives table, the timeline)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.clock import FixedClock, iso
from nexus_ark.errors import ConfigError, NexusArkError
from nexus_ark.memory.components import EmotionEntry, Goal, OpenQuestion
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind import state
from nexus_ark.mind.drives import (
    DRIVES,
    DriveInputs,
    EmotionInput,
    GoalInput,
    QuestionInput,
    boredom,
    compute,
    curiosity,
    devotion,
    goal_pull,
    question_decay,
)
from nexus_ark.mind.narrative import feelings, internal_state
from nexus_ark.personas.model import AutonomySettings
from nexus_ark.personas.store import PersonaStore
from nexus_ark.runtime.autonomy import decide

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
THRESHOLDS = dict.fromkeys(DRIVES, 0.6)


def q(priority: float, days_old: float, qid: int = 1) -> QuestionInput:
    return QuestionInput(
        id=qid, question=f"question {qid}", priority=priority, created_at=NOW - timedelta(days=days_old)
    )


def test_boredom_follows_the_log_curve_and_saturates():
    assert boredom(0) == 0
    assert boredom(24) == pytest.approx(0.15 * math.log(25), abs=1e-9)  # 0.48 after a day
    assert 0.48 < boredom(24) < 0.49
    assert boredom(1) < boredom(6) < boredom(24) < boredom(24 * 7)
    assert boredom(24 * 365) == 1.0


def test_curiosity_saturates_and_old_questions_weigh_less_but_never_vanish():
    assert curiosity([], NOW) == 0
    one = curiosity([q(0.8, 0)], NOW)
    assert one == pytest.approx(1 - math.exp(-0.4))
    assert curiosity([q(0.8, 0, 1), q(0.8, 0, 2)], NOW) > one
    assert curiosity([q(1.0, 0, i) for i in range(50)], NOW) > 0.99
    assert question_decay(0) == pytest.approx(1.0)
    assert question_decay(7) == pytest.approx(0.3 + 0.7 / math.e)
    assert question_decay(365) == pytest.approx(0.3, abs=1e-6)
    assert curiosity([q(0.8, 30)], NOW) < curiosity([q(0.8, 1)], NOW)


def test_goal_pull_rises_while_a_goal_waits_and_falls_with_lower_priority():
    fresh = GoalInput(id="g", goal="write a poem", priority=1, last_progress=NOW)
    assert goal_pull(None, NOW) == 0
    assert goal_pull(fresh, NOW) == pytest.approx(0.5)
    stale = fresh.model_copy(update={"last_progress": NOW - timedelta(days=3)})
    assert goal_pull(stale, NOW) == pytest.approx(0.5 + 0.5 * (1 - math.exp(-1)))
    assert goal_pull(stale.model_copy(update={"priority": 4}), NOW) == pytest.approx(
        goal_pull(stale, NOW) / 2
    )


def test_devotion_weighs_negative_emotions_more_and_relaxes():
    sad = EmotionInput(time=NOW, label="sadness", value=-0.6)
    glad = EmotionInput(time=NOW, label="joy", value=1.0)
    calm = EmotionInput(time=NOW, label="neutral", value=0.0)
    assert devotion([sad], NOW) == pytest.approx(0.3)
    assert devotion([glad], NOW) == pytest.approx(0.1)
    assert devotion([calm], NOW) == 0
    assert devotion([sad], NOW + timedelta(hours=12)) == pytest.approx(0.15)  # half-life 12 h
    assert devotion([sad], NOW + timedelta(hours=80)) == 0  # out of the window
    assert devotion([sad] * 10, NOW) == 1.0


def test_dominant_is_furthest_past_its_threshold_and_none_when_all_are_still():
    quiet = compute(DriveInputs(now=NOW), THRESHOLDS)
    assert quiet.dominant is None
    assert all(d.level == 0 for d in quiet.drives.values())
    busy = compute(
        DriveInputs(
            now=NOW,
            last_interaction=NOW - timedelta(hours=2),
            questions=[q(1.0, 0, 1), q(1.0, 0, 2), q(1.0, 0, 3)],
            emotions=[EmotionInput(time=NOW, label="sadness", value=-0.6, snippet="I failed the exam")],
        ),
        THRESHOLDS,
    )
    assert busy.dominant == "curiosity"  # 1 - e^-1.5 = 0.78 beats boredom 0.16 and devotion 0.3
    assert busy.drives["curiosity"].over and not busy.drives["devotion"].over
    assert busy.drives["curiosity"].inputs["top_question"] == "question 1"
    assert "question 1" in busy.narrative


def test_a_drive_past_its_own_threshold_acts_though_another_is_higher():
    # Issue 23, defect 19: devotion 0.29 over its 0.20 stayed silent while curiosity 0.39, under its 0.60,
    # was "strongest". The dominant drive is the one furthest past its own threshold.
    thresholds = THRESHOLDS | {"devotion": 0.2}
    report = compute(
        DriveInputs(
            now=NOW,
            questions=[q(0.9886, 0)],  # curiosity 1 - e^(-0.4943) = 0.39
            emotions=[EmotionInput(time=NOW - timedelta(minutes=35), label="tired", value=-0.4)],
        ),
        thresholds,
    )
    assert report.drives["curiosity"].level == pytest.approx(0.39, abs=0.005)
    assert report.drives["devotion"].level == pytest.approx(0.29, abs=0.005)
    assert report.dominant == "devotion"
    decision = decide(
        report, AutonomySettings(), NOW, last_sent=None, sent_today=0, typing=False, paused=False
    )
    assert decision.send and decision.drive == "devotion"
    assert "devotion 0.29 ≥ 0.20" in decision.reason
    assert "Strongest drive against its threshold: devotion" in internal_state(report, "en")


def test_with_none_past_its_threshold_the_nearest_one_is_dominant_and_waits():
    thresholds = THRESHOLDS | {"curiosity": 0.9, "boredom": 0.5}
    report = compute(
        DriveInputs(
            now=NOW, last_interaction=NOW - timedelta(hours=20), questions=[q(1.0, 0, i) for i in (1, 2)]
        ),
        thresholds,
    )
    # curiosity 0.63 is higher, but 0.27 short of its 0.90; boredom 0.46 is 0.04 short of its 0.50.
    assert report.drives["curiosity"].level > report.drives["boredom"].level
    assert report.dominant == "boredom"
    decision = decide(
        report, AutonomySettings(), NOW, last_sent=None, sent_today=0, typing=False, paused=False
    )
    assert not decision.send and decision.drive == "boredom" and "below its threshold 0.50" in decision.reason


def test_devotion_speaks_of_the_person_seeming_down_not_of_their_joy():
    # A low mood earlier, then a cheerful (or misread) message: devotion rose for the low mood, and says so.
    report = compute(
        DriveInputs(
            now=NOW,
            emotions=[
                EmotionInput(time=NOW - timedelta(hours=2), label="tired", value=-0.4, snippet="so tired"),
                EmotionInput(time=NOW, label="joy", value=1.0, snippet="Hi Aria!"),
            ],
        ),
        THRESHOLDS | {"devotion": 0.2},
    )
    assert report.dominant == "devotion"
    assert report.narrative == 'You seemed to feel tired lately ("so tired"); I want to be there for you.'
    assert "joy" not in report.narrative
    ja = compute(
        report_inputs := DriveInputs(
            now=NOW,
            emotions=[
                EmotionInput(time=NOW - timedelta(hours=2), label="tired", value=-0.4, snippet="疲れた"),
                EmotionInput(time=NOW, label="joy", value=1.0, snippet="こんにちは"),
            ],
        ),
        THRESHOLDS | {"devotion": 0.2},
        "ja",
    )
    assert ja.narrative == "最近のあなたは疲れを感じていたようだ（「疲れた」）。そばで支えたい。"
    # Only glad messages: devotion is small, and it shares the gladness rather than offering support.
    glad = compute(
        DriveInputs(now=NOW, emotions=[EmotionInput(time=NOW, label="joy", value=1.0, snippet="I won!")]),
        THRESHOLDS | {"devotion": 0.05},
    )
    assert glad.narrative == 'You seemed to feel joy lately ("I won!"); I want to share in it.'
    assert report_inputs.emotions[0].label == "tired"


def test_feelings_list_only_drives_at_or_above_point_four_strongest_first():
    report = compute(
        DriveInputs(
            now=NOW,
            last_interaction=NOW - timedelta(days=3),  # boredom 0.64
            questions=[q(0.5, 0)],  # curiosity 0.22
            top_goal=GoalInput(id="g", goal="finish the scarf", priority=1, last_progress=NOW),  # 0.5
        ),
        THRESHOLDS,
    )
    lines = feelings(report, "en").splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("- boredom 0.64:") and "3 days since we last talked" in lines[0]
    assert lines[1].startswith("- goal drive 0.50:") and "finish the scarf" in lines[1]
    assert feelings(compute(DriveInputs(now=NOW), THRESHOLDS), "en") == ""


def test_narratives_speak_the_personas_language():
    inputs = DriveInputs(now=NOW, last_interaction=NOW - timedelta(minutes=90))
    ja = compute(inputs, THRESHOLDS, "ja")
    en = compute(inputs, THRESHOLDS, "en")
    assert ja.dominant == en.dominant == "boredom"
    assert "最後に話してから2時間" in ja.narrative
    assert "2 hours since we last talked" in en.narrative
    full = internal_state(ja, "ja")
    assert "退屈 0.14 / 0.60" in full and "最も強い動機: 退屈" in full


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def memory(tmp_path: Path, clock: FixedClock):
    store = MemoryStore(tmp_path / "m.db", clock)
    yield store
    store.close()


def test_recompute_reads_memory_and_records_history_with_inputs(memory: MemoryStore, clock: FixedClock):
    msg = memory.messages.add(speaker="user", role="user", content="I failed my exam today")
    memory.components.log_emotion(
        EmotionEntry(
            timestamp=iso(NOW), emotion="sadness", value=-0.6, snippet="I failed my exam", message_id=msg
        )
    )
    memory.components.add_question(OpenQuestion(question="Which exam was it?", priority=0.9))
    memory.components.put_goal(Goal(term="short", goal="Cheer Mika up", priority=1))

    clock.advance(6 * 3600)
    report = state.recompute(memory, clock.now(), trigger="manual")
    assert report.drives["boredom"].level == pytest.approx(boredom(6), abs=1e-4)
    assert report.drives["devotion"].level == pytest.approx(0.3 * 0.5**0.5, abs=1e-4)
    assert report.drives["devotion"].inputs["latest_message_id"] == msg
    assert report.drives["goal_achievement"].inputs["goal"] == "Cheer Mika up"

    points = state.history(memory)
    assert len(points) == 1
    assert points[0].levels == {n: report.drives[n].level for n in DRIVES}
    assert points[0].inputs["curiosity"]["top_question"] == "Which exam was it?"
    assert points[0].trigger == "manual" and points[0].dominant == report.dominant
    stored = {d.name: d.level for d in memory.components.drives()}
    assert stored == {n: report.drives[n].level for n in DRIVES}
    assert [e.kind for e in memory.activity.query(kinds=["drives"])] == ["drives"]


def test_threshold_crossing_is_in_the_timeline_and_quiet_recomputations_are_not(
    memory: MemoryStore, clock: FixedClock
):
    memory.messages.add(speaker="user", role="user", content="good night")
    state.recompute(memory, clock.now(), trigger="interaction")  # first: recorded
    clock.advance(600)
    state.recompute(memory, clock.now(), trigger="interaction")  # nothing crossed
    assert len(memory.activity.query(kinds=["drives"])) == 1
    clock.advance(3 * 86400)  # boredom 0.64 > 0.6
    report = state.recompute(memory, clock.now(), trigger="autonomy")
    entries = memory.activity.query(kinds=["drives"])
    assert len(entries) == 2 and entries[-1].data["crossed"] == ["boredom"]
    assert report.drives["boredom"].over
    assert len(state.history(memory)) == 3


def test_per_persona_thresholds_are_used_and_bad_ones_refused_with_the_field(tmp_path: Path):
    personas = PersonaStore(tmp_path / "personas")
    persona = personas.create("Aria")
    toml = persona.folder / "persona.toml"
    text = toml.read_text(encoding="utf-8")
    assert "[drives]\nboredom = 0.6" in text  # a new persona's file lists the thresholds to edit
    toml.write_text(text.replace("[drives]\nboredom = 0.6", "[drives]\nboredom = 0.3"), encoding="utf-8")
    assert personas.load(persona.slug).settings.drives.boredom == 0.3
    report = compute(
        DriveInputs(now=NOW, last_interaction=NOW - timedelta(hours=8)),
        personas.load(persona.slug).settings.drives.thresholds(),
    )
    assert report.drives["boredom"].over  # 0.35 >= 0.3
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("boredom = 0.3", "boredom = 1.5"), encoding="utf-8"
    )
    with pytest.raises(ConfigError) as err:
        personas.load(persona.slug)
    assert "drives.boredom" in str(err.value) and "persona.toml" in str(err.value)


def test_goal_edits_keep_notes_and_refuse_empty_text(memory: MemoryStore):
    goal = memory.components.put_goal(Goal(term="short", goal="Learn to bake bread"))
    memory.components.add_progress(goal.id, "found a recipe", ["msg:3"])
    done = memory.components.set_goal_status(goal.id, "completed", "baked the first loaf")
    assert done.progress_notes == ["found a recipe", "baked the first loaf"]
    assert done.source_ids == ["msg:3"]
    assert memory.components.goals("short") == []
    with pytest.raises(NexusArkError, match="empty"):
        memory.components.put_goal(goal.model_copy(update={"goal": "  "}))
    with pytest.raises(NexusArkError, match="empty"):
        memory.components.add_progress(goal.id, "")
    assert memory.components.goal(goal.id).goal == "Learn to bake bread"


def test_user_resolves_and_deletes_open_questions(memory: MemoryStore):
    a = memory.components.add_question(
        OpenQuestion(question="Does Mika like rain?", context="she mentioned it")
    )
    b = memory.components.add_question(OpenQuestion(question="What is Mika's cat called?"))
    memory.components.resolve_question(a, by="user")
    assert memory.components.delete_question(b)
    assert memory.components.open_questions() == []
    (resolved,) = memory.components.open_questions(include_resolved=True)
    assert resolved.resolved_by == "user" and resolved.context == "she mentioned it"


def test_the_chat_prompt_says_how_the_persona_feels_when_a_drive_reaches_point_four(memory: MemoryStore):
    from nexus_ark.agent.prompt_inputs import gather_inputs

    def context(language: str) -> str:
        return gather_inputs(
            memory, "hello", [], [], lookback_days=0, now=NOW, recall_k=3, language=language
        ).feelings

    memory.messages.add(
        speaker="user", role="user", content="see you", created_at=iso(NOW - timedelta(days=9))
    )
    assert context("en") == "", (
        "the user is writing now: a week away does not make the persona bored mid-talk"
    )
    for i in range(3):
        memory.components.add_question(
            OpenQuestion(question=f"What is Mika's plan number {i}?", priority=0.9)
        )
    en, ja = context("en"), context("ja")
    assert en.startswith("- curiosity 0.74:") and "What is Mika's plan number 0?" in en
    assert ja.startswith("- 好奇心 0.74:") and "気になっていることが3つある" in ja


def test_a_turn_moves_the_drives_and_tells_the_window(tmp_path: Path):
    from nexus_ark.app import NexusApp
    from nexus_ark.providers.scripted import ScriptedBackend

    clock = FixedClock(NOW)
    app = NexusApp(
        tmp_path / "data", clock=clock, backend_factory=lambda config: ScriptedBackend(["I hear you."])
    )
    app.open()
    try:
        seen: list[tuple[str, dict]] = []
        app.events.subscribe("*", lambda topic, payload: seen.append((topic, payload)))
        runtime = app.personas.runtime("aria")
        list(runtime.send("I failed my driving test and I feel awful."))
        assert runtime.queue.wait_idle(60)  # the after-turn work
        (point,) = state.history(app.personas.memory("aria"))
        assert point.trigger == "interaction" and point.levels["boredom"] == 0.0
        topics = [t for t, _ in seen]
        assert topics.index("drives_changed") < topics.index("turn_done")
        report = dict(seen)["drives_changed"]["report"]
        assert report.drives["devotion"].inputs["latest_snippet"].startswith("I failed my driving test")
    finally:
        app.close()


def test_the_persona_sets_and_moves_its_goals_with_tools_and_the_goal_drive_follows(
    memory: MemoryStore, clock: FixedClock
):
    from nexus_ark.agent.memory_tools import MemoryTools
    from nexus_ark.providers.base import ToolCall

    box = MemoryTools(memory, None).toolbox()
    said = box.run(
        ToolCall(id="1", name="set_goal", arguments={"goal": "Learn Mika's exam date", "term": "short"})
    )
    goal_id = said.split()[1]
    assert memory.components.goal(goal_id).goal == "Learn Mika's exam date"
    assert state.current(memory, clock.now()).drives["goal_achievement"].level == pytest.approx(0.5)
    assert "no goal 'sh_nope'" in box.run(
        ToolCall(id="2", name="update_goal", arguments={"goal_id": "sh_nope"})
    )
    box.run(ToolCall(id="3", name="update_goal", arguments={"goal_id": goal_id, "note": "asked her today"}))
    done = box.run(
        ToolCall(
            id="4", name="update_goal", arguments={"goal_id": goal_id, "status": "completed", "note": "3 Dec"}
        )
    )
    assert done.startswith(f"goal {goal_id} is completed")
    assert memory.components.goal(goal_id).progress_notes == ["asked her today", "3 Dec"]
    assert state.current(memory, clock.now()).drives["goal_achievement"].level == 0
    assert "error" in box.run(ToolCall(id="5", name="set_goal", arguments={"goal": " ", "term": "short"}))


def test_the_schedules_quarter_hourly_looks_record_history_only_when_a_drive_moved(
    memory: MemoryStore, clock: FixedClock
):
    memory.messages.add(speaker="user", role="user", content="Bye for now!", created_at=iso(clock.now()))
    state.recompute(memory, clock.now(), trigger="interaction")
    clock.advance(12 * 3600)
    state.recompute(memory, clock.now(), trigger="schedule")  # half a day away: boredom moved, recorded
    for _ in range(4):  # an hour more of quarter-hourly looks: boredom moves 0.01 in all, nothing recorded
        clock.advance(15 * 60)
        state.recompute(memory, clock.now(), trigger="schedule")
    assert [p.trigger for p in state.history(memory)] == ["interaction", "schedule"]
    assert memory.components.drives()[0].updated_at == iso(clock.now())  # the current levels always update
    clock.advance(12 * 3600)
    state.recompute(memory, clock.now(), trigger="schedule")
    assert [p.trigger for p in state.history(memory)] == ["interaction", "schedule", "schedule"]
