"""The runtime on the injectable clock, with real SQLite and a scripted model (ScriptedMind): each persona's
work queue (the person first), scheduled jobs across restarts, planned events, writing first within every
rule, and a 30-day simulation."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.event_queue import EventQueue
from nexus_ark.paths import shipped_personas_dir
from nexus_ark.providers.base import ChatRequest, StreamChunk
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.scripted_mind import ScriptedMind
from nexus_ark.runtime.work_queue import AGAIN, WorkQueue
from nexus_ark.simulation import simulate
from tests.conftest import Notes

# A Sunday, 10:00 UTC (the tests run with TZ=UTC: local time is UTC).
NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def make_app(data: Path, clock: FixedClock, mind: ScriptedMind | None = None, notes: Notes | None = None):
    mind = mind or ScriptedMind()
    return NexusApp(data, clock=clock, backend_factory=lambda config: mind, notifier=notes).open()


def settle(app: NexusApp) -> None:
    for runtime in app.personas.runtimes():
        assert runtime.queue.wait_idle(60)


def step(app: NexusApp, slug: str = "aria") -> None:
    tick(app.personas.runtime(slug))
    settle(app)
    settle(app)  # what the tick queued, then anything that queued


def said_long_ago(app: NexusApp, clock: FixedClock, days: float = 3) -> None:
    """The person last wrote `days` ago: boredom is over its threshold (0.15·ln(1+72 h) ≈ 0.64)."""
    memory = app.personas.memory("aria")
    memory.messages.add(
        speaker="user",
        role="user",
        content="See you soon, I am off on a trip.",
        created_at=iso(clock.now() - timedelta(days=days)),
    )


def written_first(app: NexusApp, slug: str = "aria") -> list[dict]:
    rows = app.personas.memory(slug).db.execute(
        "select m.content, json_extract(m.meta, '$.autonomous') from inbox i join messages m "
        "on m.id = i.message_id order by i.created_at"
    )
    import json

    return [{"text": text, **json.loads(reason)} for text, reason in rows.fetchall()]


# -- the work queue -------------------------------------------------------------------------------
def test_the_persons_work_runs_before_queued_background_work_and_a_running_step_gives_way():
    queue = WorkQueue("t")
    order: list[str] = []
    gate = threading.Event()
    steps = {"n": 0}

    def background(give_way: threading.Event):
        steps["n"] += 1
        order.append(f"bg{steps['n']}")
        if steps["n"] == 1:
            gate.set()
            give_way.wait(5)  # a model step that stops when the person comes
            return AGAIN if give_way.is_set() else "done"
        return "done"

    item = queue.submit_background("dream", background, key="dream")
    assert queue.submit_background("dream", background, key="dream") is None  # never two at once
    gate.wait(5)
    started = time.monotonic()
    queue.call("turn", lambda: order.append("turn"))
    waited = time.monotonic() - started
    assert item.wait(5) == "done"
    assert order == ["bg1", "turn", "bg2"] and waited < 3.0  # the background step held on for 5 s
    queue.stop()


# -- writing first ------------------------------------------------------------------------------------
def test_a_strong_drive_outside_quiet_hours_writes_first_with_its_reason_an_inbox_row_and_a_notification(
    data_dir: Path,
):
    clock, notes = FixedClock(NOON), Notes()
    app = make_app(data_dir, clock, notes=notes)
    try:
        events: list[dict] = []
        app.events.subscribe("autonomous_message", lambda topic, payload: events.append(payload))
        said_long_ago(app, clock)
        step(app)
        (message,) = written_first(app)
        assert message["trigger"] == "drive" and message["drive"] == "boredom" and message["level"] >= 0.6
        assert "boredom" in message["why"] and message["narrative"] and message["inputs"]["boredom"]
        assert notes.sent == [("Aria", message["text"].splitlines()[0])]
        assert events[0]["unread"] == 1 and app.personas.runtime("aria").inbox.unread() == 1
        app.personas.runtime("aria").inbox.mark_read()
        assert app.personas.runtime("aria").inbox.unread() == 0
    finally:
        app.close()


def test_quiet_hours_typing_pause_cooldown_cap_and_unanswered_messages_each_hold_it_back(data_dir: Path):
    clock = FixedClock(datetime(2026, 11, 22, 3, 0, tzinfo=UTC))  # 3:00, quiet hours 0:00-7:00
    app = make_app(data_dir, clock)
    try:
        runtime = app.personas.runtime("aria")
        said_long_ago(app, clock)
        step(app)
        assert written_first(app) == []  # quiet hours
        clock.advance(5 * 3600)  # 8:00
        runtime.set_typing(True)
        step(app)
        assert written_first(app) == []  # the person is typing
        runtime.set_typing(False)
        app.life.set_paused(True)
        clock.advance(15 * 60)
        step(app)
        assert written_first(app) == []  # paused from the tray
        app.life.set_paused(False)
        clock.advance(15 * 60)
        step(app)
        assert len(written_first(app)) == 1
        clock.advance(60 * 60)  # the cooldown (180 min) holds
        step(app)
        assert len(written_first(app)) == 1
        clock.advance(3 * 3600)
        step(app)
        assert len(written_first(app)) == 2
        clock.advance(4 * 3600)  # two unanswered: it waits for the person
        step(app)
        assert len(written_first(app)) == 2
        reasons = [
            e.summary
            for e in app.personas.memory("aria").activity.query(kinds=["heartbeat"], limit=50)
            if "unanswered" in e.summary
        ]
        assert reasons
    finally:
        app.close()


def test_a_routine_writes_at_its_time_and_survives_a_restart_without_running_twice(
    data_dir: Path, shipped_copy: Path
):
    toml = shipped_copy / "aria" / "persona.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8")
        + '\n[[autonomy.routines]]\ncron = "0 8 * * *"\n'
        + 'task = "Say good morning and one thing from your notepad."\n',
        encoding="utf-8",
    )
    clock = FixedClock(datetime(2026, 11, 22, 7, 50, tzinfo=UTC))
    app = NexusApp(
        data_dir, clock=clock, backend_factory=lambda c: ScriptedMind(), shipped_personas=shipped_copy
    )
    app.open()
    try:
        step(app)
        assert written_first(app) == []
        clock.advance(15 * 60)  # 8:05
        step(app)
        (message,) = written_first(app)
        assert message["trigger"] == "routine" and "good morning" in message["why"]
    finally:
        app.close()
    clock.advance(10 * 60)
    again = NexusApp(
        data_dir, clock=clock, backend_factory=lambda c: ScriptedMind(), shipped_personas=shipped_copy
    )
    again.open()
    try:
        step(again)
        assert len(written_first(again)) == 1  # ran once: the restart remembers it (job_runs)
    finally:
        again.close()


# -- restarts -----------------------------------------------------------------------------------------
def test_a_planned_event_fires_after_a_restart_and_a_newer_plan_with_its_key_replaces_the_older(
    data_dir: Path,
):
    clock = FixedClock(NOON)
    app = make_app(data_dir, clock)
    try:
        memory = app.personas.memory("aria")
        queue = EventQueue(memory, clock)
        queue.enqueue("reminder", {"what": "ask how the exam went"}, key="exam", delay=timedelta(hours=1))
        queue.enqueue(
            "reminder", {"what": "ask how the pastry exam went"}, key="exam", delay=timedelta(hours=2)
        )
        step(app)
        assert written_first(app) == []  # not due yet
    finally:
        app.close()
    clock.advance(2 * 3600 + 60)
    again = make_app(data_dir, clock)
    try:
        step(again)
        (message,) = written_first(again)
        assert message["trigger"] == "event" and message["why"] == "planned: ask how the pastry exam went"
        states = dict(
            again.personas.memory("aria").db.execute(
                "select json_extract(payload, '$.what'), state from events"
            )
        )
        assert states == {"ask how the exam went": "cancelled", "ask how the pastry exam went": "done"}
    finally:
        again.close()


def test_scheduled_jobs_do_not_run_again_after_a_restart_within_their_period(data_dir: Path):
    clock = FixedClock(NOON)
    app = make_app(data_dir, clock)
    try:
        step(app)
        runs = dict(app.personas.memory("aria").db.execute("select job, last_run from job_runs").fetchall())
        assert {"drives", "backup", "heartbeat"} <= set(runs)
    finally:
        app.close()
    clock.advance(5 * 60)
    again = make_app(data_dir, clock)
    try:
        step(again)
        after = dict(
            again.personas.memory("aria").db.execute("select job, last_run from job_runs").fetchall()
        )
        assert after == runs
    finally:
        again.close()


def test_a_missed_nights_dream_runs_once_at_start(data_dir: Path):
    evening = datetime(2026, 11, 20, 19, 0, tzinfo=UTC)
    clock = FixedClock(evening)
    app = make_app(data_dir, clock)
    try:
        for text in ("My sister Yui turns twenty on Friday.", "I made Yui a blue bowl in pottery class."):
            list(app.personas.runtime("aria").send(text))
            clock.advance(60)
        settle(app)
    finally:
        app.close()  # the app stays closed the whole night
    clock.advance(39 * 3600)  # Sunday 10:00
    again = make_app(data_dir, clock)
    try:
        step(again)
        step(again)
        rows = (
            again.personas.memory("aria").db.execute("select level, date, state from dream_jobs").fetchall()
        )
        assert rows == [(1, "2026-11-20", "done")]
    finally:
        again.close()


# -- the person first ---------------------------------------------------------------------------------
class SlowDreams(ScriptedMind):
    """Each answer for a dream takes `step_s` (streamed in pieces, as a local model does); chat is quick."""

    def __init__(self, step_s: float) -> None:
        super().__init__()
        self.step_s = step_s
        self.dream_steps: list[float] = []

    def _stream(self, request: ChatRequest):
        dreaming = "dreaming" in request.messages[0].content
        started = time.monotonic()
        chunks = list(super()._stream(request))
        if dreaming:
            for _ in range(10):
                if request.cancel is not None and request.cancel.is_set():
                    yield StreamChunk(finish_reason="cancelled")
                    return
                time.sleep(self.step_s / 10)
            self.dream_steps.append(time.monotonic() - started)
        yield from chunks


@pytest.mark.slow
def test_the_persons_turn_is_served_while_a_dream_runs_and_the_dream_then_finishes(data_dir: Path):
    clock = FixedClock(datetime(2026, 11, 21, 2, 0, tzinfo=UTC))
    mind = SlowDreams(step_s=1.0)
    app = make_app(data_dir, clock, mind=mind)
    try:
        runtime = app.personas.runtime("aria")
        memory = app.personas.memory("aria")
        for i, text in enumerate(("Yui loved the bowl.", "Kenji moved the deadline again.")):
            memory.messages.add(
                speaker="user",
                role="user",
                content=text,
                created_at=iso(datetime(2026, 11, 20, 19, i, tzinfo=UTC)),
            )
        list(runtime.send("Good night."))  # warm: the models and the embedder are loaded
        settle(app)
        progress: list[str] = []
        dream = runtime.dreams.start(progress=lambda p: progress.append(p.stage))
        while len(progress) < 2:  # the dream is in its second stage
            time.sleep(0.05)
        started = time.monotonic()
        first = None
        for _item in runtime.send("Are you awake?"):
            if first is None:
                first = time.monotonic() - started
        result = dream.wait(120)
        assert first is not None and first <= max(mind.dream_steps)  # within one background model step
        # Every stage ran to its end (entities found no name in "Good night.": skipped with that reason).
        assert result.skipped is None and set(result.stages) == {
            "insight",
            "entities",
            "episode",
            "questions",
            "consolidate",
        }
        assert not any("cancel" in state for state in result.stages.values())
        assert result.stages["insight"] == result.stages["episode"] == "done"
        assert memory.db.execute("select state from dream_jobs").fetchall() == [("done",)]
        # It gave way to the person and went on: its start is said once, never as "resumed" (that is for a
        # dream a crash or a shutdown cut off).
        said = [e.summary for e in memory.activity.query(kinds=["dream"], limit=100)]
        assert sum("began" in s for s in said) == 1 and not any("resumed" in s for s in said), said
    finally:
        app.close()


# -- a month ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_thirty_simulated_days_dream_plan_and_write_first_within_the_rules_with_bounded_growth(
    tmp_path: Path,
):
    report = simulate(
        shipped_personas_dir() / "aria", 30, start=datetime(2026, 11, 23, tzinfo=UTC), work_dir=tmp_path
    )
    assert report.in_quiet_hours == 0
    assert report.dreams["1"] >= 15 and report.dreams["2"] >= 3  # nightly, and weekly after a week
    assert report.goals["created"] >= 1 and report.events_processed >= 5 and report.autonomous_messages
    per_day: dict[str, int] = {}
    for entry in report.autonomous_messages:
        per_day[entry.time[:10]] = per_day.get(entry.time[:10], 0) + 1
    assert max(per_day.values()) <= 3  # the daily cap holds for drives and plans alike
    drive_times = [datetime.fromisoformat(e.time) for e in report.autonomous_messages if e.trigger == "drive"]
    assert all(b - a >= timedelta(minutes=180) for a, b in itertools.pairwise(drive_times))
    growth = [b - a for a, b in itertools.pairwise(report.db_bytes)]
    assert max(growth) < 1_000_000 and sum(growth[-10:]) <= 2 * sum(growth[:10]) + 200_000


def test_a_model_override_never_loads_the_personas_own_model_first(data_dir: Path):
    """`nexus-ark chat --model X` on a persona whose own model cannot be loaded (a missing file, a server
    that is down) talks on X."""
    from nexus_ark.errors import ModelError

    def factory(config):
        if config.spec != "ollama:tiny":
            raise ModelError(f"{config.spec or 'the default model'} is not here")
        return ScriptedMind("ollama:tiny")

    app = NexusApp(data_dir, clock=FixedClock(NOON), backend_factory=factory).open()
    try:
        session = app.personas.session("aria", model_override="ollama:tiny")
        assert session.backend.model_id == "ollama:tiny"
        assert "".join(
            getattr(i, "text", "") for i in app.personas.runtime("aria").send("Hello there")
        ).strip()
    finally:
        app.close()


@pytest.mark.parametrize("asked", [{}, {"level": 2}], ids=["joins", "then-the-level-asked"])
def test_a_dream_asked_for_while_a_cut_off_dream_resumes_joins_it(data_dir: Path, asked: dict) -> None:
    """Opening the runtime queues the dream a crash cut off; dream() waits for it and reports it (it was
    refused as "already dreaming"), or, for another level or day, dreams that one after it."""
    clock = FixedClock(datetime(2026, 11, 21, 2, 0, tzinfo=UTC))
    app = make_app(data_dir, clock)
    try:
        memory = app.personas.memory("aria")
        memory.messages.add(
            speaker="user",
            role="user",
            content="Yui loved the bowl.",
            created_at=iso(datetime(2026, 11, 20, 19, 0, tzinfo=UTC)),
        )
        settle(app)
        now = iso(clock.now())
        memory.db.execute(  # what a kill -9 leaves: a job still running
            "insert into dream_jobs (level, date, state, started_at, updated_at)"
            " values (1, ?, 'running', ?, ?)",
            ("2026-11-20", now, now),
        )
        memory.db.commit()
    finally:
        app.close()
    app = make_app(data_dir, clock)
    try:
        result = app.personas.runtime("aria").dreams.dream(**asked)
        jobs = app.personas.change_memory(
            "aria",
            "jobs",
            lambda store: store.db.execute(
                "select level, date, state from dream_jobs order by id"
            ).fetchall(),
        )
    finally:
        app.close()
    assert jobs[0] == (1, "2026-11-20", "done"), jobs
    if asked:
        assert result.level == 2 and len(jobs) == 2 and jobs[1][0] == 2, jobs
    else:
        assert (result.level, result.date) == (1, "2026-11-20") and len(jobs) == 1, jobs


def test_a_persona_writes_first_in_the_room_where_the_person_last_spoke_with_it_and_the_room_hears_it(
    data_dir: Path,
):
    """Issue 24: the person's last words to Aria were in the room with ひかり; Aria's message written first
    goes there (its journal, ひかり's memory), its inbox row and notification name the room, and a second
    member may not write first in the same room within the minute."""
    from nexus_ark.rooms.conversation import room_key
    from nexus_ark.runtime.life import _where_to_write

    clock, notes = FixedClock(NOON - timedelta(days=3)), Notes()
    app = make_app(data_dir, clock, notes=notes)
    try:
        slug = app.rooms.create("Tea time", ["aria", "hikari"], strategy="manual")
        room = app.rooms.open(slug)
        try:
            list(room.say("I am off on a trip, see you both soon."))
        finally:
            room.close()
        clock.advance(3 * 24 * 3600)
        step(app)
        settle(app)
        (message,) = written_first(app)
        assert notes.sent[0][0] == "Aria · Tea time"
        ((persona, entry),) = app.life.inbox()
        assert (persona, entry.room, entry.room_title) == ("aria", room_key(slug), "Tea time")
        room = app.rooms.open(slug)
        try:
            lines = [(line.author, line.text) for line in room.lines()]
        finally:
            room.close()
        assert lines[-1] == ("aria", message["text"])
        heard = (
            app.personas.memory("hikari")
            .db.execute(
                "select speaker, content from messages where room = ? and role = 'user' order by id",
                [room_key(slug)],
            )
            .fetchall()
        )
        assert heard[-1] == ("aria", message["text"])
        # ひかり may not write first there within the minute (one message written first per room and tick).
        hikari = app.personas.runtime("hikari")
        assert hikari.queue.call("where", lambda: _where_to_write(hikari)) == (None, "Tea time")
        clock.advance(61)
        session, title = hikari.queue.call("where", lambda: _where_to_write(hikari))
        assert title == "Tea time" and session.room == room_key(slug)
    finally:
        app.close()
