"""Writing first on a model below the capability: the templated message for the reason, in the persona's
language, with details quoted from memory (runtime.first_words); a capable model still writes its own. On the
injectable clock with the scripted mind standing in for a small or a large model (the real bundled model:
tests/integration/test_small_model_turns.py)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.components import EmotionEntry, Goal, OpenQuestion
from nexus_ark.runtime.first_words import first_message, quote
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.scripted_mind import ScriptedMind

NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
SMALL = 135_000_000


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def _app(data: Path, clock: FixedClock, mind: ScriptedMind) -> NexusApp:
    return NexusApp(data, clock=clock, backend_factory=lambda config: mind).open()


def _step(app: NexusApp, slug: str) -> None:
    tick(app.personas.runtime(slug))
    for _ in range(2):  # what the tick queued, then what that queued
        for runtime in app.personas.runtimes():
            assert runtime.queue.wait_idle(60)


def _written_first(app: NexusApp, slug: str) -> list[tuple[str, dict]]:
    return [
        (m.content, m.meta)
        for m in app.personas.memory(slug).messages.recent(limit=50)
        if m.role == "assistant" and "autonomous" in m.meta
    ]


def test_the_templates_quote_memory_in_english_and_japanese():
    assert first_message("en", "drive", "boredom") == "It's been a while — how have you been?"
    assert first_message("ja", "drive", "boredom") == "しばらくぶりだね。元気にしてた？"
    worry = "I'm nervous about the dentist tomorrow. It's at nine."
    assert first_message("en", "drive", "devotion", worry=worry) == (
        "I keep thinking about what you said: “I'm nervous about the dentist tomorrow.” "
        "How are you feeling now?"
    )
    assert first_message("ja", "drive", "devotion", worry="明日の面接が不安。") == (
        "「明日の面接が不安」って言っていたのが気になっていて。今はどんな気持ち？"
    )
    assert first_message("en", "heartbeat", "curiosity", question="How old is Luna?") == (
        "Something is still on my mind: How old is Luna?"
    )
    assert (
        first_message("ja", "drive", "curiosity", question="ルナは何歳？")
        == "まだ気になっていることがあるの。ルナは何歳？"
    )
    assert first_message("en", "drive", "goal_achievement", goal="Learn the person's favourite books") == (
        "I've been thinking about something I want to do: Learn the person's favourite books."
    )
    assert first_message("en", "event", "boredom", what="ask how the exam went") == (
        "I'd planned this for now: ask how the exam went."
    )
    # Nothing in memory for the reason: the plain line, never an invented detail.
    assert first_message("en", "drive", "devotion") == "I was thinking about you. How are you feeling today?"
    assert first_message("en", "drive", "curiosity") == "I've been curious — what have you been up to lately?"
    assert first_message("ja", "drive", "goal_achievement") == "しばらくぶりだね。元気にしてた？"
    long = "word " * 60
    assert len(quote(long)) <= 91 and quote(long).endswith("…")


@pytest.mark.parametrize(
    ("slug", "expected"),
    [("aria", "It's been a while — how have you been?"), ("hikari", "しばらくぶりだね。元気にしてた？")],
)
def test_a_small_model_writes_first_with_the_template_in_the_personas_language(
    tmp_path: Path, slug: str, expected: str
):
    clock, mind = FixedClock(NOON), ScriptedMind(parameters=SMALL)
    app = _app(tmp_path, clock, mind)
    try:
        app.personas.memory(slug).messages.add(
            speaker="user", role="user", content="See you!", created_at=iso(clock.now() - timedelta(days=3))
        )
        asked_before = mind.requests
        _step(app, slug)
        ((text, meta),) = _written_first(app, slug)
        assert text == expected
        assert meta["template"] is True and meta["autonomous"]["drive"] == "boredom"
        assert mind.requests == asked_before, "nothing was generated for it"
        assert app.personas.runtime(slug).inbox.unread() == 1  # delivered like any message written first
    finally:
        app.close()


def test_a_small_model_quotes_the_persons_last_worry_an_open_question_and_its_goal(tmp_path: Path):
    clock = FixedClock(NOON)
    app = _app(tmp_path, clock, ScriptedMind(parameters=SMALL))
    try:
        components = app.personas.memory("aria").components
        for snippet in (
            "I'm nervous about the dentist tomorrow.",
            "My knee hurts again.",
            "I feel so tired.",
        ):
            clock.advance(60)
            components.log_emotion(
                EmotionEntry(timestamp=iso(clock.now()), emotion="anxious", value=-0.6, snippet=snippet)
            )
        _step(app, "aria")
        ((text, meta),) = _written_first(app, "aria")
        assert meta["autonomous"]["drive"] == "devotion"
        assert text == "I keep thinking about what you said: “I feel so tired.” How are you feeling now?"
    finally:
        app.close()

    clock = FixedClock(NOON)
    app = _app(tmp_path / "q", clock, ScriptedMind(parameters=SMALL))
    try:
        components = app.personas.memory("aria").components
        for question in (
            "Does Luna like the balcony?",
            "What is the sister's name?",
            "Which trail did they pick?",
        ):
            components.add_question(
                OpenQuestion(question=question, priority=1.0, created_at=iso(clock.now()))
            )
        _step(app, "aria")
        ((text, meta),) = _written_first(app, "aria")
        asked = [q.question for q in components.open_questions()]
        assert meta["autonomous"]["drive"] == "curiosity"
        assert text.startswith("Something is still on my mind: ") and text.split(": ", 1)[1] in asked
    finally:
        app.close()

    clock = FixedClock(NOON - timedelta(days=5))
    app = _app(tmp_path / "g", clock, ScriptedMind(parameters=SMALL))
    try:
        app.personas.memory("aria").components.put_goal(
            Goal(term="short", goal="Learn which books the person loves")
        )
        clock.advance(5 * 86400)  # no progress for five days: the goal pulls
        _step(app, "aria")
        ((text, meta),) = _written_first(app, "aria")
        assert meta["autonomous"]["drive"] == "goal_achievement"
        assert text == "I've been thinking about something I want to do: Learn which books the person loves."
    finally:
        app.close()


def test_a_capable_model_still_writes_its_own_message(tmp_path: Path):
    clock, mind = FixedClock(NOON), ScriptedMind(parameters=7_000_000_000)
    app = _app(tmp_path, clock, mind)
    try:
        app.personas.memory("aria").messages.add(
            speaker="user", role="user", content="See you!", created_at=iso(clock.now() - timedelta(days=3))
        )
        asked_before = mind.requests
        _step(app, "aria")
        ((text, meta),) = _written_first(app, "aria")
        assert "template" not in meta and mind.requests > asked_before
        assert text != "It's been a while — how have you been?"
    finally:
        app.close()
