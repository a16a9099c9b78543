"""Quit is quit: closing the app runs no model. It held the data folder's lock for minutes under load while
an open-question verdict ran through the model after the window had gone (issue 23, defect 18); the
conversation's end is checked at the next start instead, by the scheduler's idle check."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

import nexus_ark.app.personas as runtimes_module
from nexus_ark.agent.session import CONVERSATION_END_KEY
from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.errors import PersonaError
from nexus_ark.memory.components import OpenQuestion
from nexus_ark.runtime import life
from nexus_ark.runtime.scripted_mind import ScriptedMind

START = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)


def _open(data_dir: Path, clock: FixedClock, mind: ScriptedMind) -> NexusApp:
    return NexusApp(data_dir, clock=clock, backend_factory=lambda config: mind).open()


def test_closing_asks_the_model_nothing_and_the_next_start_ends_the_conversation(data_dir: Path) -> None:
    clock, mind = FixedClock(START), ScriptedMind()
    app = _open(data_dir, clock, mind)
    runtime = app.personas.runtime("aria")
    runtime.queue.call(
        "ask", lambda: runtime.memory.components.add_question(OpenQuestion(question="Who is Keiko?"))
    )
    list(runtime.send("My sister Keiko visited today."))
    assert runtime.queue.wait_idle(60)  # the turn's own after-work is done
    asked = mind.requests
    app.close()
    assert mind.requests == asked, "closing ran the model"

    clock.advance(2 * 3600)  # later than the conversation's idle end
    mind = ScriptedMind()
    app = _open(data_dir, clock, mind)
    try:
        runtime = app.personas.runtime("aria")
        key = CONVERSATION_END_KEY.format(room=runtime.session().room)

        def ended() -> str | None:
            return runtime.queue.call("ended?", lambda: runtime.memory.components.reflection_meta().get(key))

        assert ended() is None
        runtime.queue.call("idle check", lambda: life._end_if_idle(runtime))
        assert ended() is not None and mind.requests >= 1, "the next start did not end the conversation"
    finally:
        app.close()


def test_a_start_that_meets_close_leaves_nothing_running(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window wakes every persona and starts the scheduler on a worker; an app that quits at once
    closes the core while that wake still runs. What it opens after close() began must not outlive the app:
    a runtime (its thread, its open memory) or a scheduler left running went on into the interpreter's
    shutdown, unclosed."""
    opened, closed = threading.Event(), threading.Event()
    built: list[runtimes_module.PersonaRuntime] = []

    class MeetsClose(runtimes_module.PersonaRuntime):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)
            opened.set()
            assert closed.wait(30)  # close() runs now, while this runtime is still being opened

    monkeypatch.setattr(runtimes_module, "PersonaRuntime", MeetsClose)
    app = _open(data_dir, FixedClock(START), ScriptedMind())
    outcome: list[object] = []

    def wake() -> None:
        try:
            outcome.append(app.personas.runtime("aria"))
        except PersonaError as exc:
            outcome.append(exc)
        app.life.start()

    waker = threading.Thread(target=wake, name="wake")
    waker.start()
    assert opened.wait(30)
    app.close()
    closed.set()
    waker.join(30)
    assert not waker.is_alive()
    assert isinstance(outcome[0], PersonaError), "a runtime opened during close() was handed out"
    assert app.personas.runtimes() == []
    assert not app.life.scheduler.running, "the scheduler started after close()"
    alive = [t.name for t in threading.enumerate() if t.name in ("persona-aria", "APScheduler")]
    assert alive == [], f"still running after close(): {alive}"
