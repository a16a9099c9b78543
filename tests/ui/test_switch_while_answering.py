"""Another persona can be opened while one is answering: the answer goes on in its own conversation (stored
whole, shown again when the person comes back, still streaming if it is not done), and the status line's
speed is the persona's shown.

The window and the core are the real ones; the chat model is a scripted stand-in that streams a known reply
a word every few milliseconds, so a switch lands in the middle of a reply on any machine (the model's words
are not under test, the window's handling of two conversations is)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from ui.main.main_window import MainWindow
from ui.util import i18n

NOON = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")
SENTENCES = 24  # four words each: about two seconds of streaming at DELAY_S a word
DELAY_S = 0.02


def _reply(messages: Sequence[ChatMessage]) -> str:
    who = "Hikari" if "ひかり" in messages[0].content else "Aria"
    return " ".join(f"{who} line {i}." for i in range(SENTENCES))


@pytest.fixture
def window(qtbot, data_dir: Path) -> Iterator[MainWindow]:
    core = NexusApp(
        data_dir,
        clock=FixedClock(NOON),
        backend_factory=lambda config: ScriptedBackend(_reply, delay_s=DELAY_S),
    ).open()
    i18n.set_language("en")
    win = MainWindow(core)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.send_button.isEnabled() and win.current_slug == "aria", timeout=60_000)
    yield win
    win.close()
    core.close()


def _send(window: MainWindow, text: str) -> None:
    window.input.setPlainText(text)
    window.turns.send_message()


def _choose(qtbot, window: MainWindow, slug: str) -> None:
    """As the person does: a click in the persona list."""
    window.persona_list.chosen.emit(slug)
    qtbot.waitUntil(lambda: window.current_slug == slug and window.send_button.isEnabled(), timeout=30_000)


def _stored(window: MainWindow, slug: str) -> list[tuple[str, str, str]]:
    rows = window.app.personas.memory(slug).db.execute(
        "select role, status, content from messages order by id"
    )
    return [tuple(row) for row in rows.fetchall()]


def test_another_persona_opens_while_one_answers_and_the_answer_goes_on_in_its_own_conversation(
    qtbot, window: MainWindow
) -> None:
    _send(window, "Tell me a long story.")
    qtbot.waitUntil(lambda: "Aria line 0." in window.chat.streaming_text, timeout=10_000)
    assert window.persona_list.isEnabled()
    _choose(qtbot, window, "hikari")
    assert window.answering("aria"), "Aria's reply was still under way when ひかり opened"
    assert "Aria line" not in window.chat.toPlainText()
    _send(window, "こんにちは")
    qtbot.waitUntil(lambda: not window.answering("aria") and not window.answering("hikari"), timeout=30_000)

    aria_reply = _reply([ChatMessage(role="system", content="Aria")])
    assert _stored(window, "aria") == [
        ("user", "complete", "Tell me a long story."),
        ("assistant", "complete", aria_reply),
    ]
    assert [(role, content) for role, _, content in _stored(window, "hikari")] == [
        ("user", "こんにちは"),
        ("assistant", _reply([ChatMessage(role="system", content="ひかり")])),
    ]
    qtbot.waitUntil(lambda: "Hikari line 23." in window.chat.toPlainText(), timeout=10_000)
    assert "Aria line" not in window.chat.toPlainText()
    assert "Aria has answered." in window.statusBar().currentMessage()

    _choose(qtbot, window, "aria")
    qtbot.waitUntil(lambda: "Aria line 23." in window.chat.toPlainText(), timeout=10_000)
    assert "Hikari line" not in window.chat.toPlainText()


def test_coming_back_while_it_answers_shows_the_reply_going_on(qtbot, window: MainWindow) -> None:
    _send(window, "Tell me a long story.")
    qtbot.waitUntil(lambda: "Aria line 0." in window.chat.streaming_text, timeout=10_000)
    _choose(qtbot, window, "hikari")
    window.persona_list.chosen.emit("aria")  # back before the reply is done
    assert window.answering("aria")
    # The history page, then the reply so far in its own bubble, still growing.
    qtbot.waitUntil(lambda: "Aria line" in window.chat.streaming_text, timeout=10_000)
    assert window.stop_button.isEnabled() and not window.send_button.isEnabled()
    with qtbot.waitSignal(window.turn_finished, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: all(b.id is not None for b in window.chat.bubbles), timeout=10_000)
    texts = [(b.role, b.text) for b in window.chat.bubbles]
    assert texts == [
        ("user", "Tell me a long story."),
        ("assistant", _reply([ChatMessage(role="system", content="Aria")])),
    ]
    assert window.send_button.isEnabled()


def test_the_status_lines_speed_belongs_to_the_persona_shown(qtbot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.turn_finished, timeout=30_000) as aria:
        _send(window, "Hello!")
    aria_speed = f"{aria.args[0].tokens_per_s:.1f} tokens/s"
    assert window.speed_label.text() == aria_speed
    _choose(qtbot, window, "hikari")
    assert window.speed_label.text() == "", "ひかり has not answered yet: Aria's speed is not hers"
    with qtbot.waitSignal(window.turn_finished, timeout=30_000) as hikari:
        _send(window, "こんにちは")
    assert window.speed_label.text() == f"{hikari.args[0].tokens_per_s:.1f} tokens/s"
    _choose(qtbot, window, "aria")
    assert window.speed_label.text() == aria_speed
