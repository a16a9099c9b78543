"""Where the conversation view sits after a reply: a person following the reply stays on its last line
(through Stop, the final render and the ids arriving after it), and a person reading further up stays
where they were (issue 23, defect 20)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, Slot

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.conversation_pages import ShownMessage
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.chat.bubble import Bubble
from ui.chat.chat_view import ChatView
from ui.main.main_window import MainWindow
from ui.util import i18n

NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate")
LONG_REPLY = "".join(
    f"Paragraph {i} of the reply goes on for a while, word after word.\n\n" for i in range(40)
)


def _view(qtbot, messages: int) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    bubbles = [
        Bubble(i + 1, "user" if i % 2 == 0 else "assistant", "Aria", f"line {i}", iso(NOON))
        for i in range(messages)
    ]
    view.show_page(bubbles, has_older=False, has_newer=False)
    qtbot.waitUntil(lambda: not view.drawing, timeout=10_000)
    return view


def _at_bottom(view: ChatView) -> tuple[int, int]:
    bar = view.verticalScrollBar()
    return bar.value(), bar.maximum()


def _stored(message_id: int, role: str, text: str, status: str) -> ShownMessage:
    message = StoredMessage(
        id=message_id,
        room="main",
        speaker="user" if role == "user" else "aria",
        role=role,
        content=text,
        status=status,
        created_at=iso(NOON),
        meta={},
    )
    return ShownMessage(message=message, version_ids=[message_id])


def _turn_stopped(qtbot, view: ChatView, first_id: int, scroll_to: int | None = None) -> None:
    """What the window does for a turn the person stops: their bubble, the reply streaming, Stop (the
    partial reply is final), then the ids arriving from the history thread (settle)."""
    view.add_message("You", "user", "Tell me everything.")
    view.begin_stream("Aria")
    for piece in LONG_REPLY.split("\n\n")[:12]:
        view.append_stream(piece + "\n\n")
    if scroll_to is not None:  # the person scrolls back while the reply streams
        view.verticalScrollBar().setValue(scroll_to)
    partial = view.streaming_text
    view.end_stream(partial, "stopped")
    qtbot.wait(20)  # the history thread answers a main-loop turn or more later
    view.settle(
        Bubble.of(_stored(first_id, "user", "Tell me everything.", "complete"), "Aria"),
        Bubble.of(_stored(first_id + 1, "assistant", partial, "stopped"), "Aria"),
    )
    qtbot.wait(50)


def test_after_stop_a_short_conversation_stays_on_the_last_line_not_the_top(qtbot):
    view = _view(qtbot, messages=2)
    _turn_stopped(qtbot, view, first_id=3)
    value, maximum = _at_bottom(view)
    assert maximum > 0, "the reply is taller than the window"
    assert value == maximum, f"the view jumped to {value} of {maximum} after Stop"


def test_after_stop_a_long_conversation_stays_on_the_last_line(qtbot):
    view = _view(qtbot, messages=60)
    _turn_stopped(qtbot, view, first_id=61)
    value, maximum = _at_bottom(view)
    assert value == maximum, f"the view ended at {value} of {maximum}: the reply's end is below"


def test_after_stop_a_person_reading_further_up_stays_where_they_were(qtbot):
    view = _view(qtbot, messages=60)
    bar = view.verticalScrollBar()
    reading = bar.maximum() // 2
    _turn_stopped(qtbot, view, first_id=61, scroll_to=reading)
    assert bar.value() == reading and not view.is_at_bottom()


def test_a_followed_reply_whose_final_render_grows_ends_on_its_last_line(qtbot):
    """The final words can be longer than what streamed (a small model's sentence gate, a continued
    reply): the view follows once the taller document is laid out."""
    view = _view(qtbot, messages=10)
    view.begin_stream("Aria")
    view.append_stream("The start.")
    view.end_stream(LONG_REPLY * 3, "complete")
    qtbot.wait(50)
    value, maximum = _at_bottom(view)
    assert value == maximum > 0


@pytest.fixture
def scripted_window(qtbot, data_dir: Path):
    core = NexusApp(data_dir, clock=FixedClock(NOON), backend_factory=lambda config: ScriptedMind()).open()
    i18n.set_language("en")
    store = core.personas.memory("aria")
    start = NOON - timedelta(days=1)
    with store.db.atomic():
        store.db.conn.executemany(
            "insert into messages (room, speaker, role, content, status, created_at) values (?,?,?,?,?,?)",
            [
                (
                    "main",
                    "user" if i % 2 == 0 else "aria",
                    "user" if i % 2 == 0 else "assistant",
                    f"line {i}",
                    "complete",
                    iso(start + timedelta(minutes=i)),
                )
                for i in range(60)
            ],
        )
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    qtbot.waitUntil(
        lambda: window.send_button.isEnabled() and bool(window.chat.bubbles) and not window.chat.drawing,
        timeout=60_000,
    )
    yield window
    window.close()
    core.close()
    i18n.set_language("en")


def test_a_reply_in_the_window_ends_on_its_last_line_after_its_ids_arrive(qtbot, scripted_window):
    window = scripted_window
    chat = window.chat
    assert chat.is_at_bottom()
    with qtbot.waitSignal(window.turn_finished, timeout=60_000):
        window.input.setPlainText("How was your day?")
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: all(b.id is not None for b in chat.bubbles), timeout=10_000)
    qtbot.wait(50)
    value, maximum = _at_bottom(chat)
    assert value == maximum, f"the reply ended at {value} of {maximum}: its last line is below the window"


class _StopOnFirstWords(QObject):
    """Clicks Stop on the UI thread once the first words of the reply are shown."""

    def __init__(self, qtbot, window: MainWindow) -> None:
        super().__init__()
        self.qtbot, self.window, self.clicked = qtbot, window, False

    @Slot(str, str)
    def on_delta(self, _slug: str, _text: str) -> None:
        if not self.clicked:
            self.clicked = True
            self.qtbot.mouseClick(self.window.stop_button, Qt.MouseButton.LeftButton)


@pytest.mark.integration
def test_stop_on_the_bundled_model_leaves_the_view_on_the_partial_replys_last_line(qtbot, data_dir: Path):
    core = NexusApp(data_dir).open()
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.resize(700, 360)  # a short window: the stopped reply and its note reach below its first screen
    window.show()
    try:
        qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=60_000)
        stopper = _StopOnFirstWords(qtbot, window)
        window.turns.worker.delta.connect(stopper.on_delta)
        with qtbot.waitSignal(window.turn_finished, timeout=120_000) as finished:
            window.input.setPlainText("Write a very long poem about every planet in the solar system.")
            qtbot.mouseClick(window.send_button, Qt.MouseButton.LeftButton)
        assert finished.args[0].status == "stopped"
        chat = window.chat
        qtbot.waitUntil(lambda: all(b.id is not None for b in chat.bubbles), timeout=10_000)
        qtbot.wait(50)
        value, maximum = _at_bottom(chat)
        assert value == maximum, f"after Stop the view sits at {value} of {maximum}"
    finally:
        window.close()
        core.close()
