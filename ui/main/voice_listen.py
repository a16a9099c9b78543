"""The window's ears (issue 36): the microphone button, push-to-talk (hold Space in an empty message box)
and hands-free listening, owned by the voice controller (ui/main/voice.py).

The microphone is open only while listening, and the voice strip shows it (the button red, its light
on). Opening it (the device, the recogniser's model) and closing it run on workers; the listener
(nexus_ark/voice/listening.py) hears on the microphone's thread and transcribes on its own, and its
reports reach the UI thread through the voice bridge. A click listens for one utterance: its words land
in the message box, to send or edit. Push-to-talk listens while Space is held. Hands-free listens until
it is switched off, and each utterance is sent (the controller decides when: after a reply under way).
A missing microphone or recogniser is a notice in the voice strip, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.voice.audio_in import open_microphone
from nexus_ark.voice.base import Transcript
from nexus_ark.voice.listening import Listener, Microphone
from ui.chat.voice_bar import VoiceBar
from ui.main.voice_bridge import VoiceReports
from ui.util.i18n import tr_error
from ui.util.message_input import MessageInput
from ui.util.open_persona import OpenPersona
from ui.util.tasks import run_in_background, while_open

CLOSE_WAIT_S = 60.0  # an utterance cut by closing is still transcribed: this long at most


class Ears(QObject):
    """Listening for the window. Modes: "once" (the button: one utterance), "hold" (push-to-talk: while
    Space is held), "hands-free" (until switched off)."""

    transcript = Signal(str, str)  # the words heard, the mode they were heard in
    speech_started = Signal()  # the person started speaking (barge-in)
    listening_changed = Signal(bool)  # the microphone opened (True) or closed

    def __init__(
        self, app: NexusApp, shown: OpenPersona, bar: VoiceBar, message_input: MessageInput, parent: QObject
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.shown = shown
        self.bar = bar
        self.input = message_input
        # How a microphone is opened: the input Settings → Voice names, else the system's default; a test
        # gives one that plays a WAV file.
        self.open_microphone: Callable[[], Microphone] = lambda: open_microphone(
            app.settings.voice.input_device or None
        )
        self.mode = ""  # "" (not listening) | "once" | "hold" | "hands-free"
        self._listener: Listener | None = None
        self._opening = 0  # the latest open asked for (an older one arriving is closed at once)
        self.reports = VoiceReports(self)
        self.reports.arrived.connect(self._on_report)
        bar.mic_toggled.connect(self._on_mic_button)
        bar.hands_free_toggled.connect(self._on_hands_free)
        message_input.installEventFilter(self)

    @property
    def listener(self) -> Listener | None:
        """The listener while the microphone is open."""
        return self._listener

    # -- what the person does ---------------------------------------------------------------------
    def _on_mic_button(self, on: bool) -> None:
        if on:
            self.listen("once")
        else:
            self.close_microphone()
            self.bar.hands_free_button.setChecked(False)

    def _on_hands_free(self, on: bool) -> None:
        if on:
            self.listen("hands-free")
        elif self.mode == "hands-free":
            self.close_microphone()

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        """Push-to-talk: Space held in an empty message box listens; released, the utterance ends."""
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) or not isinstance(event, QKeyEvent):
            return False
        if event.key() != Qt.Key.Key_Space or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if kind == QEvent.Type.KeyPress:
            if self.mode == "hold":
                return True  # the key repeating while held types no spaces
            if event.isAutoRepeat() or self.input.toPlainText() or self.input.composing:
                return False
            if self.mode:  # already listening (the button, hands-free): Space types as ever
                return False
            self.listen("hold")
            return True
        if self.mode == "hold" and not event.isAutoRepeat():
            self.close_microphone()
            return True
        return False

    # -- opening and closing ----------------------------------------------------------------------
    def listen(self, mode: str) -> None:
        """Open the microphone (on a worker) and listen in this mode."""
        if self.mode == mode and (self._listener is not None or self.bar.waiting):
            return
        if self.mode and self._listener is not None:  # another mode: the same open microphone serves it
            self.mode = mode
            return
        self.mode = mode
        self._opening += 1
        token, slug, app = self._opening, self.shown.slug, self.app
        self.bar.set_listening(False, waiting=True)
        send = self.reports.sender_of

        def open_listener() -> Listener:
            language = app.personas.load(slug).settings.language if slug else None
            transcriber = app.voice.transcriber(language)
            listener = Listener(
                self.open_microphone(),
                transcriber,
                language,
                on_transcript=send("transcript"),
                on_speech_start=send("speech_start"),
                on_error=send("error"),
                # No audio is stored unless the person turned that on (Settings → Voice).
                keep_audio_dir=app.layout.recordings_dir if app.settings.voice.keep_recordings else None,
            )
            listener.start()
            return listener

        def opened(listener: Listener) -> None:
            if token != self._opening or not self.mode:  # closed (or asked again) meanwhile
                _close_later(listener)
                return
            self._listener = listener
            self.bar.clear_notice()
            self.bar.set_listening(True)
            self.listening_changed.emit(True)

        def failed(message: str) -> None:
            if token == self._opening:
                self._closed()
                self.bar.show_notice(message)

        def arrived(listener: Listener) -> None:
            if isValid(self):
                opened(listener)
            else:  # the window closed while the microphone opened: close it, never leave it open
                _close_later(listener)

        run_in_background(open_listener, arrived, while_open(self, failed))

    def close_microphone(self) -> None:
        """Close it now (an utterance under way is still transcribed, on a worker)."""
        self._opening += 1
        listener, self._listener = self._listener, None
        if listener is not None:
            _close_later(listener)
        self._closed()

    def _closed(self) -> None:
        was = self.mode
        self.mode = ""
        self.bar.set_listening(False)
        self.bar.hands_free_button.blockSignals(True)
        self.bar.hands_free_button.setChecked(False)
        self.bar.hands_free_button.blockSignals(False)
        if was:
            self.listening_changed.emit(False)

    # -- what the listener says -------------------------------------------------------------------
    def _on_report(self, kind: str, value: Any) -> None:
        if kind == "speech_start":
            self.speech_started.emit()
        elif kind == "error":
            self.bar.show_notice(tr_error(value) if isinstance(value, NexusArkError) else str(value))
        elif kind == "transcript" and isinstance(value, Transcript):
            mode = self.mode or "once"  # a push-to-talk utterance arrives once the key is up
            if mode == "once":
                self.close_microphone()
            self.transcript.emit(value.text.strip(), mode)

    def close(self) -> None:
        self.close_microphone()


def _close_later(listener: Listener) -> None:
    """On a worker: the microphone closes at once, what it heard last is transcribed, then it ends."""

    def close() -> None:
        listener.stop()
        listener.wait_idle(CLOSE_WAIT_S)
        listener.close()

    run_in_background(close, lambda _none: None, lambda _message: None)
