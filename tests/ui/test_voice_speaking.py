"""The persona's voice in the real window: a streamed reply spoken sentence by sentence (real synthesis with
the shipped English engine, played on the real null sound device the test session starts), stopped at
once by Esc, by typing and by Stop; ▶ speaks any reply again; a missing audio device is a notice in the
voice strip. The model is a scripted stand-in (the reply's words are known); everything else is real."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl

from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.voice.audio_out import open_output
from nexus_ark.voice.base import VoiceSettings
from nexus_ark.voice.speaking import SpeechEvent
from ui.main.main_window import MainWindow
from ui.util import i18n

pytestmark = [
    pytest.mark.qt_log_ignore("propagateSizeHints"),
    pytest.mark.skipif(
        not os.environ.get("JACK_DEFAULT_SERVER"),
        reason="no null sound device: jackd is not installed (.ci/run installs Debian's jackd2)",
    ),
]
SENTENCES = ["The keeper woke early.", "He climbed the stairs.", "The sea was calm that night."]
LONG = " ".join(f"Sentence number {n} goes on for a while so that speaking it takes time." for n in range(12))


def _model(messages: Sequence[ChatMessage]) -> str:
    return LONG if "long" in messages[-1].content else " ".join(SENTENCES)


def open_voice_window(
    qtbot, data_dir: Path, *, speak: bool = True, delay_s: float = 0.02, closed_by_qtbot: bool = True
) -> MainWindow:
    core = NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(_model, delay_s=delay_s)).open()
    if speak:
        core.voice.save_settings("aria", VoiceSettings(enabled=True))
    i18n.set_language("en")
    window = MainWindow(core)
    if closed_by_qtbot:  # False: the test deletes the window itself
        qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.send_button.isEnabled() and window.current_slug == "aria", timeout=60_000)
    return window


@pytest.fixture
def window(qtbot, data_dir: Path) -> Iterator[MainWindow]:
    win = open_voice_window(qtbot, data_dir)
    yield win
    win.close()
    win.app.close()


def _events(window: MainWindow) -> list[SpeechEvent]:
    seen: list[SpeechEvent] = []
    window.voice.speech_event.connect(seen.append)
    return seen


def _send(window: MainWindow, text: str) -> None:
    window.input.setPlainText(text)
    window.turns.send_message()


def test_a_streamed_reply_is_spoken_sentence_by_sentence_in_order(qtbot, window: MainWindow) -> None:
    seen = _events(window)
    with qtbot.waitSignal(window.turn_finished, timeout=60_000):
        _send(window, "Tell me about the keeper.")
    said = lambda: [(e.kind, e.index) for e in seen if e.kind in ("started", "finished")]  # noqa: E731
    qtbot.waitUntil(lambda: ("finished", 2) in said(), timeout=60_000)
    assert said() == [("started", 0), ("finished", 0), ("started", 1), ("finished", 1), ("started", 2),
                      ("finished", 2)]  # fmt: skip
    assert [e.text.strip() for e in seen if e.kind == "started"] == SENTENCES
    assert not [e for e in seen if e.kind == "error"]
    qtbot.waitUntil(lambda: not window.voice_bar.stop_button.isVisible(), timeout=10_000)


def _speaking_a_long_reply(qtbot, window: MainWindow) -> list[SpeechEvent]:
    seen = _events(window)
    _send(window, "Say something long.")
    qtbot.waitUntil(lambda: any(e.kind == "started" for e in seen), timeout=60_000)
    assert window.voice_bar.stop_button.isVisible(), "the strip says it is speaking"
    return seen


def _silenced_at_once(qtbot, window: MainWindow, seen: list[SpeechEvent], stop) -> None:
    """stop() silences the device within a block, and nothing more of the reply is said after."""
    output = window.voice.output
    assert output is not None and output.playing
    started = time.monotonic()
    stop()
    qtbot.waitUntil(lambda: not output.playing, timeout=1000)
    assert time.monotonic() - started < 0.5
    assert not window.voice.speaking and not window.voice_bar.stop_button.isVisible()
    starts = len([e for e in seen if e.kind == "started"])
    qtbot.waitUntil(lambda: not window.streaming, timeout=60_000)
    qtbot.wait(300)  # the stream ends meanwhile: no sentence of it may start playing after the stop
    assert len([e for e in seen if e.kind == "started"]) == starts and not output.playing


def test_esc_during_speech_stops_it_at_once(qtbot, window: MainWindow) -> None:
    seen = _speaking_a_long_reply(qtbot, window)
    _silenced_at_once(qtbot, window, seen, lambda: qtbot.keyClick(window.input, Qt.Key.Key_Escape))


def test_typing_stops_the_speech(qtbot, window: MainWindow) -> None:
    seen = _speaking_a_long_reply(qtbot, window)
    _silenced_at_once(qtbot, window, seen, lambda: qtbot.keyClicks(window.input, "w"))
    assert window.input.toPlainText() == "w", "the letter typed stays"


def test_stop_stops_the_speech_after_the_reply_was_written(qtbot, window: MainWindow) -> None:
    seen = _speaking_a_long_reply(qtbot, window)
    qtbot.waitUntil(lambda: not window.streaming, timeout=60_000)
    assert window.stop_button.isEnabled(), "Stop stays pressable while the persona speaks"
    _silenced_at_once(
        qtbot, window, seen, lambda: qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    )


def test_play_speaks_a_reply_again_even_with_speaking_off(qtbot, data_dir: Path) -> None:
    window = open_voice_window(qtbot, data_dir, speak=False)
    try:
        seen = _events(window)
        with qtbot.waitSignal(window.turn_finished, timeout=60_000) as finished:
            _send(window, "Tell me about the keeper.")
        qtbot.wait(500)
        assert seen == [], "replies are not spoken aloud unless the persona's voice says so"
        reply_id = finished.args[0].reply_id
        qtbot.waitUntil(lambda: "▶ Play" in window.chat.toPlainText(), timeout=10_000)
        window.chat.anchorClicked.emit(QUrl(f"nexus:speak/{reply_id}"))
        qtbot.waitUntil(lambda: any(e.kind == "finished" and e.index == 2 for e in seen), timeout=60_000)
        assert [e.text.strip() for e in seen if e.kind == "finished"] == SENTENCES
    finally:
        window.close()
        window.app.close()


def test_a_missing_audio_device_is_a_notice_not_a_traceback(qtbot, window: MainWindow) -> None:
    window.voice.open_output = lambda: open_output("a speaker that is not there")
    with qtbot.waitSignal(window.turn_finished, timeout=60_000) as finished:
        _send(window, "Tell me about the keeper.")
    qtbot.waitUntil(lambda: window.voice_bar.notice.isVisible(), timeout=30_000)
    assert window.voice_bar.notice_text.startswith("No audio output device")
    assert "a speaker that is not there" in window.voice_bar.notice_text
    assert finished.args[0].text == " ".join(SENTENCES), "the reply itself is untouched"


def test_an_engine_that_is_down_is_a_notice_naming_it(qtbot, data_dir: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on: a VOICEVOX that is not running
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    window = open_voice_window(qtbot, data_dir, speak=False)
    try:
        window.app.voice.save_settings(
            "aria", VoiceSettings(enabled=True, engine="voicevox", api_base=f"http://127.0.0.1:{port}")
        )
        with qtbot.waitSignal(window.turn_finished, timeout=60_000) as finished:
            _send(window, "Tell me about the keeper.")
        qtbot.waitUntil(lambda: window.voice_bar.notice.isVisible(), timeout=30_000)
        assert "VOICEVOX" in window.voice_bar.notice_text and str(port) in window.voice_bar.notice_text
        assert "\n" not in window.voice_bar.notice.text() and "Traceback" not in window.voice_bar.notice_text
        assert finished.args[0].text == " ".join(SENTENCES), "the reply itself is untouched"
    finally:
        window.close()
        window.app.close()
