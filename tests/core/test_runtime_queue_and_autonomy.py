"""The persona's event queue (identity keys, delays, retries, a restart) and the autonomy decision (quiet
hours, cooldown, daily cap, typing, thresholds), on the injectable clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.agent.memory_tools import MemoryTools
from nexus_ark.clock import FixedClock
from nexus_ark.errors import ConfigError, NexusArkError
from nexus_ark.memory.event_queue import MAX_ATTEMPTS, EventQueue, parse_delay
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.drives import DRIVES, DriveInputs, compute
from nexus_ark.personas.model import AutonomySettings
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ToolCall
from nexus_ark.runtime.autonomy import decide, in_quiet_hours

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def memory(tmp_path: Path, clock: FixedClock):
    store = MemoryStore(tmp_path / "m.db", clock)
    yield store
    store.close()


def test_delays_read_as_people_write_them():
    assert parse_delay("2h") == timedelta(hours=2)
    assert parse_delay("30m") == parse_delay("30 min") == timedelta(minutes=30)
    assert parse_delay("1d") == timedelta(days=1)
    for bad in ("soon", "", "-2h", "400d"):
        with pytest.raises(NexusArkError):
            parse_delay(bad)


def test_a_delayed_event_is_due_only_when_its_time_comes_and_survives_a_restart(tmp_path, clock):
    memory = MemoryStore(tmp_path / "m.db", clock)
    EventQueue(memory, clock).enqueue("reminder", {"what": "ask how the exam went"}, delay=parse_delay("2h"))
    assert EventQueue(memory, clock).claim_due() is None
    memory.close()

    clock.advance(2 * 3600)
    reopened = MemoryStore(tmp_path / "m.db", clock)  # the app was closed and started again
    queue = EventQueue(reopened, clock)
    event = queue.claim_due()
    assert (
        event is not None
        and event.payload == {"what": "ask how the exam went"}
        and event.state == "processing"
    )
    queue.done(event.id)
    assert queue.claim_due() is None and queue.get(event.id).state == "done"
    reopened.close()


def test_a_newer_event_with_the_same_key_replaces_the_pending_one(memory, clock):
    queue = EventQueue(memory, clock)
    first = queue.enqueue("reminder", {"what": "ask about the exam"}, key="exam", delay=timedelta(hours=2))
    second = queue.enqueue(
        "reminder", {"what": "ask about the exam results"}, key="exam", delay=timedelta(hours=5)
    )
    other = queue.enqueue("reminder", {"what": "water the plants"}, delay=timedelta(hours=1))
    assert [e.id for e in queue.list()] == [other.id, second.id]
    assert queue.get(first.id).state == "cancelled"


def test_failures_retry_with_backoff_then_go_dead(memory, clock):
    queue = EventQueue(memory, clock)
    event = queue.enqueue("reminder", {"what": "x"})
    for attempt in range(1, MAX_ATTEMPTS + 1):
        claimed = queue.claim_due()
        assert claimed is not None and claimed.id == event.id and claimed.attempts == attempt
        failed = queue.fail(event.id, "the model timed out")
        if attempt < MAX_ATTEMPTS:
            assert failed.state == "failed" and queue.claim_due() is None, "not before its backoff"
            clock.advance(5 * 60 * 2 ** (attempt - 1))
    assert queue.get(event.id).state == "dead"
    clock.advance(86400)
    assert queue.claim_due() is None
    assert "failed for good" in memory.activity.query(kinds=["error"])[-1].summary


def test_an_event_a_crash_left_processing_is_pending_again_and_the_person_can_cancel(memory, clock):
    queue = EventQueue(memory, clock)
    event = queue.enqueue("reminder", {"what": "x"})
    queue.claim_due()
    assert queue.recover() == 1 and queue.get(event.id).state == "pending"
    assert queue.cancel(event.id) and queue.claim_due() is None
    assert not queue.cancel(event.id), "already cancelled"


def test_the_persona_schedules_its_own_event_with_a_tool(memory, clock):
    box = MemoryTools(memory, None).toolbox()
    said = box.run(
        ToolCall(id="1", name="emit_event", arguments={"what": "ask how the exam went", "delay": "2h"})
    )
    assert said.startswith("scheduled") and "2026-11-22T14:00" in said
    assert box.run(ToolCall(id="2", name="emit_event", arguments={"what": "x", "delay": "later"})).startswith(
        "error"
    )
    (event,) = EventQueue(memory, clock).list()
    assert event.payload == {"what": "ask how the exam went"} and event.source == "persona"


def strong(now: datetime, days_idle: float = 3):
    return compute(
        DriveInputs(now=now, last_interaction=now - timedelta(days=days_idle)), dict.fromkeys(DRIVES, 0.6)
    )


def test_quiet_hours_may_cross_midnight():
    at = lambda h, m=0: datetime(2026, 11, 22, h, m)  # noqa: E731
    assert in_quiet_hours(at(3), "00:00-07:00") and not in_quiet_hours(at(7), "00:00-07:00")
    assert in_quiet_hours(at(23, 30), "22:00-07:00") and in_quiet_hours(at(6, 59), "22:00-07:00")
    assert not in_quiet_hours(at(12), "22:00-07:00")


def test_autonomy_honours_every_rule_in_order():
    settings = AutonomySettings(quiet_hours="00:00-07:00", cooldown_minutes=180, daily_cap=2)
    noon = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    ok = dict(last_sent=None, sent_today=0, typing=False, paused=False)
    yes = decide(strong(noon), settings, noon, **ok)
    assert yes.send and yes.drive == "boredom" and "3 days since we last talked" in yes.reason
    night = noon.replace(hour=3)
    assert decide(strong(night), settings, night, **ok).reason == "quiet hours (00:00-07:00)"
    assert decide(strong(noon), settings, noon, **(ok | {"typing": True})).reason == "the person is typing"
    assert decide(strong(noon), settings, noon, **(ok | {"paused": True})).reason == "autonomy is paused"
    recent = ok | {"last_sent": noon - timedelta(minutes=179)}
    assert decide(strong(noon), settings, noon, **recent).reason.startswith("cooldown")
    assert decide(strong(noon), settings, noon, **(ok | {"last_sent": noon - timedelta(minutes=180)})).send
    assert decide(strong(noon), settings, noon, **(ok | {"sent_today": 2})).reason == "daily cap reached (2)"
    weak = decide(strong(noon, days_idle=0.5), settings, noon, **ok)
    assert not weak.send and "below its threshold" in weak.reason
    off = AutonomySettings(enabled=False)
    assert decide(strong(noon), off, noon, **ok).reason == "autonomy is off for this persona"


def test_bad_quiet_hours_in_persona_toml_are_refused_with_the_field(tmp_path):
    personas = PersonaStore(tmp_path / "personas")
    persona = personas.create("Aria")
    toml = persona.folder / "persona.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'quiet_hours = "00:00-07:00"' in text
    toml.write_text(text.replace('quiet_hours = "00:00-07:00"', 'quiet_hours = "midnight"'), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        personas.load(persona.slug)
    assert "autonomy.quiet_hours" in str(err.value)


def test_jobs_due_on_the_clock_coalesce_missed_runs_and_respect_quiet_hours():
    from nexus_ark.personas.model import Routine
    from nexus_ark.runtime.schedule import ScheduleState, due_jobs

    settings = AutonomySettings(
        heartbeat_minutes=60, dream_idle_minutes=60, routines=[Routine(cron="0 8 * * *", task="good morning")]
    )
    first_start = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
    fresh = due_jobs(first_start, settings, ScheduleState())
    assert fresh == ["drives", "backup", "retention", "heartbeat"], "a new routine waits for its time"

    ran = dict.fromkeys(("drives", "backup", "retention", "heartbeat", "routine:0"), first_start)
    state = ScheduleState(last_runs=ran, last_user_message=first_start, undreamt_day=first_start.date())
    assert due_jobs(first_start + timedelta(minutes=10), settings, state) == []
    assert due_jobs(first_start + timedelta(minutes=15), settings, state) == ["drives"]
    night = datetime(2026, 11, 23, 0, 30, tzinfo=UTC)
    assert due_jobs(night, settings, state) == ["drives", "dream"], (
        "no heartbeat in quiet hours, the day is over"
    )
    closed_all_night = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)  # the app was closed for days
    assert due_jobs(closed_all_night, settings, state) == [
        "drives",
        "backup",
        "retention",
        "dream",
        "heartbeat",
        "routine:0",
    ], "each missed job once, the missed dream too"
    talking = state.model_copy(update={"last_user_message": night - timedelta(minutes=10)})
    assert "dream" not in due_jobs(night, settings, talking), "not while the person is still around"
    off = settings.model_copy(update={"enabled": False})
    assert due_jobs(closed_all_night, off, state) == ["drives", "backup", "retention"]
    assert "retention" not in due_jobs(
        closed_all_night,
        settings,
        talking.model_copy(update={"last_user_message": closed_all_night - timedelta(minutes=5)}),
    ), "rolled up at a quiet time, not while the person talks"


def test_a_bad_routine_is_refused_with_the_field(tmp_path):
    from pydantic import ValidationError

    from nexus_ark.personas.model import Routine

    with pytest.raises(ValidationError, match="cron"):
        Routine(cron="every morning", task="hello")
