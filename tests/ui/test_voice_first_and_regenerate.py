"""When the persona speaks without being answered to: a message it writes first is spoken only when the
person allowed it (a real scheduler tick on the injectable clock, a scripted mind, real synthesis on the
null sound device), and a regenerated reply replaces the speech of the one before."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.scripted_mind import ScriptedMind
from nexus_ark.voice.base import VoiceSettings
from nexus_ark.voice.speaking import SpeechEvent
from tests.ui.test_life_window import live
from ui.main.main_window import MainWindow
from ui.util import i18n

NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
pytestmark = [
    pytest.mark.qt_log_ignore("propagateSizeHints"),
    pytest.mark.skipif(
        not os.environ.get("JACK_DEFAULT_SERVER"),
        reason="no null sound device: jackd is not installed (.ci/run installs Debian's jackd2)",
    ),
]


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def _window(qtbot, core: NexusApp) -> MainWindow:
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.send_button.isEnabled() and window.current_slug == "aria", timeout=60_000)
    return window


def _heard(window: MainWindow) -> list[SpeechEvent]:
    seen: list[SpeechEvent] = []
    window.voice.speech_event.connect(seen.append)
    return seen


@pytest.mark.parametrize("allowed", [True, False], ids=["allowed", "not-allowed"])
def test_a_message_written_first_is_spoken_only_if_the_person_allowed_it(
    qtbot, data_dir: Path, allowed: bool
) -> None:
    clock = FixedClock(NOON)
    core = NexusApp(data_dir, clock=clock, backend_factory=lambda config: ScriptedMind()).open()
    # Replies are spoken either way: only "speak the messages it writes first" decides this one.
    core.voice.save_settings("aria", VoiceSettings(enabled=True, speak_first_messages=allowed))
    core.personas.memory("aria").messages.add(
        speaker="user", role="user", content="Off on a trip!", created_at=iso(clock.now() - timedelta(days=3))
    )
    window = _window(qtbot, core)
    try:
        seen = _heard(window)
        live(core, "aria")
        qtbot.waitUntil(lambda: "wrote first" in window.chat.toPlainText(), timeout=10_000)
        if allowed:
            said = lambda: "".join(e.text for e in seen if e.kind == "finished")  # noqa: E731
            qtbot.waitUntil(lambda: "I was thinking about" in said(), timeout=60_000)
            assert said().startswith("Hi! I was thinking about"), "its own words, from the first"
        else:
            qtbot.wait(1500)  # long enough for its first sentence to be synthesized and start, were it spoken
            assert seen == [] and not window.voice.speaking
    finally:
        window.close()
        core.close()


FIRST = "The first version begins here. It goes on for a long while with many words. " * 6
SECOND = "A second version. It is short."


def test_a_regenerated_reply_replaces_the_speech(qtbot, data_dir: Path) -> None:
    versions = iter([FIRST, SECOND])

    def model(_messages: Sequence[ChatMessage]) -> str:
        return next(versions, SECOND)

    core = NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(model)).open()
    core.voice.save_settings("aria", VoiceSettings(enabled=True))
    window = _window(qtbot, core)
    try:
        seen = _heard(window)
        with qtbot.waitSignal(window.turn_finished, timeout=60_000) as finished:
            window.input.setPlainText("Tell me a story.")
            window.turns.send_message()
        qtbot.waitUntil(lambda: any(e.kind == "started" for e in seen), timeout=60_000)
        first_said = len(seen)
        window.turns.regenerate(finished.args[0].reply_id)  # while the first version is being spoken
        qtbot.waitUntil(lambda: any(e.kind == "finished" and "short" in e.text for e in seen), timeout=60_000)
        after = [e.text.strip() for e in seen[first_said:] if e.kind == "started"]
        assert after == ["A second version.", "It is short."], "nothing more of the first version is said"
    finally:
        window.close()
        core.close()
