"""The window's voice (issue 36): replies spoken sentence by sentence while they stream, ▶ to hear any
reply again, the messages a persona writes first spoken when the person allowed it (never in quiet
hours), barge-in (Stop, Esc, typing, or speaking over it in hands-free mode), and the ears (voice_listen.py:
the microphone button, push-to-talk, hands-free). A controller the main window owns (window.voice), given
the widgets it drives, the open persona and the turns controller whose streamed text it speaks.

Threads: the persona's voice (its settings, its engine, the audio device) is made on a worker; the speech
queue (nexus_ark/voice/speaking.py) synthesizes and plays on threads of its own, and the UI thread only
hands it text (feed, finish, stop: none of them waits). Its reports come back through the voice bridge.
A reply spoken over in hands-free mode keeps only the words spoken (app.voice.keep_spoken), as a reply
stopped with Stop keeps only the words written: what is shown is what is stored."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.voice.audio_out import AudioOutput, open_output
from nexus_ark.voice.base import Audio
from nexus_ark.voice.speaking import SpeechEvent, SpeechQueue
from ui.chat.chat_view import ChatView
from ui.chat.conversation_controller import ConversationController
from ui.chat.voice_bar import VoiceBar
from ui.main.turns import TurnsController
from ui.main.voice_bridge import VoiceReports
from ui.main.voice_listen import Ears
from ui.util.core_events import CoreEvents
from ui.util.i18n import tr_error
from ui.util.message_input import MessageInput
from ui.util.open_persona import OpenPersona
from ui.util.tasks import run_in_background, while_open

Synthesize = Callable[[str], Audio]


@dataclass
class Speech:
    """What is being spoken (or about to be): a reply as it streams, a reply again (▶), or a message
    written first. Text arriving before the persona's voice is ready waits in `waiting`."""

    slug: str
    kind: str  # "reply" | "replay" | "first"
    token: int
    waiting: list[str] = field(default_factory=list)
    finished: bool = False  # the whole text has been given
    ready: bool = False  # the voice is made: text goes straight to the queue
    reply_id: int | None = None  # the stored reply, once the turn has stored it


class VoiceController(QObject):
    speech_event = Signal(object)  # each SpeechEvent of the speech queue, on the UI thread, in order

    def __init__(
        self,
        app: NexusApp,
        shown: OpenPersona,
        bar: VoiceBar,
        turns: TurnsController,  # the turn whose reply is spoken, and its widgets (the chat, the input)
        conversation: ConversationController,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.shown = shown
        self.bar = bar
        self.chat = chat = turns.w.chat
        self.input = message_input = turns.w.input
        self.turns = turns
        self.conversation = conversation
        # How the audio output is opened: the device Settings → Voice names, else the system's default (a
        # test may give another).
        self.open_output: Callable[[], AudioOutput] = lambda: open_output(
            app.settings.voice.output_device or None
        )
        self._output: AudioOutput | None = None
        self._output_device = ""  # the setting the output was opened for: another one opens another
        self._output_lock = threading.Lock()  # opened once, by whichever worker asks first
        self._shut = False  # closed with the window: a voice still being prepared opens no device
        self._synthesize: Synthesize | None = None  # the voice of what is spoken now
        self._queue: SpeechQueue | None = None
        self._queue_output: AudioOutput | None = None  # the output the queue plays on
        self.speech: Speech | None = None
        self._tokens = 0
        self._keep: tuple[str, str] | None = None  # (slug, words spoken) of a reply spoken over, until stored
        self._keeping = False  # the spoken words are being stored: a message heard waits for them
        self._heard: list[str] = []  # hands-free words heard while a reply was under way: sent after it
        self._filling = False  # the window itself is writing the message box (not the person typing)
        self._audible = False  # speech is playing (between a sentence's start and the speech's end)
        self.reports = VoiceReports(self)
        self.reports.arrived.connect(self._on_report)
        self.ears = Ears(app, shown, bar, message_input, self)
        self.ears.transcript.connect(self._on_transcript)
        self.ears.speech_started.connect(self._spoken_over)
        self.events = CoreEvents(app.events, None, ("autonomous_message",), parent=self)
        self.events.happened.connect(self._on_written_first)
        self._connect(turns, chat, message_input)

    def _connect(self, turns: TurnsController, chat: ChatView, message_input: MessageInput) -> None:
        for request in (turns.request_send, turns.request_continue, turns.request_regenerate):
            request.connect(self._turn_started)
        turns.request_edit.connect(self._turn_started)
        turns.worker.delta.connect(self._on_delta)
        turns.worker.finished.connect(self._on_finished)
        turns.worker.failed.connect(lambda slug, _message: self._on_finished(slug, None))
        turns.w.stop_button.clicked.connect(self.stop_speaking)
        self.bar.stop_speaking.connect(self.stop_speaking)
        chat.replay_requested.connect(self.replay)
        message_input.textChanged.connect(self._typed)

    # -- starting to speak ------------------------------------------------------------------------
    def _begin(self, slug: str, kind: str, text: str = "") -> Speech:
        """Whatever was spoken stops; this is spoken once the persona's voice is made (on a worker)."""
        self.stop_speaking()
        self._tokens += 1
        speech = self.speech = Speech(slug, kind, self._tokens, [text] if text else [])
        app = self.app

        def prepare() -> Synthesize | None:
            if kind == "first" and not app.voice.may_speak_first(slug):
                return None
            if kind == "reply" and not app.voice.settings_for(slug).enabled:
                return None
            synthesize = app.voice.synthesizer_for(slug)  # the engine is made here: its problems too
            self._open_output()
            return synthesize

        def prepared(synthesize: Synthesize | None) -> None:
            if self.speech is not speech:
                return  # stopped, or something else spoken, meanwhile
            if synthesize is None:
                self.speech = None  # not to be spoken aloud
                return
            self._synthesize = synthesize
            speech.ready = True
            self.bar.clear_notice()
            queue = self._speech_queue()
            for piece in speech.waiting:
                queue.feed(piece)
            speech.waiting.clear()
            if speech.finished:
                queue.finish()

        def failed(message: str) -> None:
            if self.speech is speech:
                self.speech = None
                self.bar.show_notice(message)

        run_in_background(prepare, while_open(self, prepared), while_open(self, failed))
        return speech

    def _open_output(self) -> AudioOutput:
        """On a worker: the window's one audio output, opened at first use and again when Settings → Voice
        names another device (VoiceError when there is none)."""
        device = self.app.settings.voice.output_device
        with self._output_lock:
            if self._shut:
                raise RuntimeError("the window closed while its voice was being prepared")
            if self._output is not None and device != self._output_device:
                self._output.close()  # the speech that played on it was stopped before this one began
                self._output = None
            if self._output is None:
                opened = self.open_output()
                if self._shut:  # the window closed while it opened
                    opened.close()
                    raise RuntimeError("the window closed while its voice was being prepared")
                self._output = opened
                self._output_device = device
            return self._output

    @property
    def output(self) -> AudioOutput | None:
        """The audio device speech plays on, once opened."""
        return self._output

    def _speech_queue(self) -> SpeechQueue:
        """The window's one speech queue (a feed after stop or finish begins the next speech)."""
        output = self._output
        assert output is not None  # opened by the worker that made the voice
        if self._queue is not None and self._queue_output is not output:  # another device since
            old, self._queue = self._queue, None
            run_in_background(old.close, lambda _none: None, lambda _message: None)
        if self._queue is None:
            self._queue = SpeechQueue(self._say, output, on_event=self.reports.sender_of("speech"))
            self._queue_output = output
        return self._queue

    def _say(self, text: str) -> Audio:
        """On the queue's worker: the sentence in the voice of what is spoken now."""
        synthesize = self._synthesize
        if synthesize is None:
            raise NexusArkError("no voice")  # never: a speech is fed only once its voice is set
        return synthesize(text)

    def _give(self, speech: Speech, text: str, *, last: bool = False) -> None:
        if speech.ready and self._queue is not None:
            if text:
                self._queue.feed(text)
            if last:
                self._queue.finish()
        elif text:
            speech.waiting.append(text)
        speech.finished = speech.finished or last

    # -- a reply as it streams --------------------------------------------------------------------
    def _turn_started(self, *_request: Any) -> None:
        """A reply begins for the persona shown (send, continue, regenerate, edit): a regenerated reply
        replaces the speech of the one before."""
        self._keep = None
        self._begin(self.shown.slug, "reply")

    def _on_delta(self, slug: str, text: str) -> None:
        speech = self.speech
        if speech is not None and speech.kind == "reply" and speech.slug == slug:
            self._give(speech, text)

    def _on_finished(self, slug: str, result: TurnResult | None) -> None:
        speech = self.speech
        if speech is not None and speech.kind == "reply" and speech.slug == slug:
            speech.reply_id = result.reply_id if result is not None else None
            self._give(speech, "", last=True)
            self._show_speaking(self._audible)  # the turn's end disabled Stop: it still stops the voice
        if self._keep is not None and self._keep[0] == slug:
            spoken = self._keep[1]
            self._keep = None
            if result is not None and result.reply_id:
                self._keep_spoken(slug, result.reply_id, spoken)
        self._send_heard()

    # -- ▶ and messages written first -------------------------------------------------------------
    def replay(self, message_id: int) -> None:
        """A reply heard again, in the persona's voice (whether or not replies are spoken aloud)."""
        bubble = self.chat.message(message_id)
        if bubble is not None and bubble.text.strip() and self.shown.slug:
            speech = self._begin(self.shown.slug, "replay", bubble.text)
            speech.finished = True

    def _on_written_first(self, topic: str, payload: dict[str, Any]) -> None:
        slug = payload.get("persona")
        if topic != "autonomous_message" or slug != self.shown.slug or not self.shown.idle():
            return
        if self.speech is None:  # never over the person's own conversation with it
            speech = self._begin(str(slug), "first", str(payload.get("text", "")))
            speech.finished = True

    # -- barge-in ---------------------------------------------------------------------------------
    def stop_speaking(self) -> None:
        """Silence at once (Stop, Esc, typing, ■): nothing more of this speech is said."""
        self.speech = None
        if self._queue is not None:
            self._queue.stop()
        self._show_speaking(False)

    def _show_speaking(self, speaking: bool) -> None:
        """The strip's ■ while the persona speaks; Stop stays pressable then, the reply written or not."""
        self._audible = speaking
        self.bar.set_speaking(speaking)
        self.turns.w.stop_button.setEnabled(speaking or self.shown.streaming)

    @property
    def speaking(self) -> bool:
        return self.speech is not None

    def _typed(self) -> None:
        if not self._filling and self.input.toPlainText() and self.speech is not None:
            self.stop_speaking()

    def _spoken_over(self) -> None:
        """The person started speaking into the microphone: the persona stops talking (barge-in). In
        hands-free mode the reply under way stops too, and what it said is the words spoken so far."""
        speech = self.speech
        if speech is None:
            return
        spoken = self._queue.spoken_text() if self._queue is not None and speech.ready else ""
        self.stop_speaking()
        if speech.kind != "reply" or self.ears.mode != "hands-free":
            return
        if self.turns.answering(speech.slug):
            self._keep = (speech.slug, spoken)  # stored once the stopped turn has stored the reply
            if speech.slug == self.shown.slug:
                self.turns.stop_reply()
        elif speech.reply_id:
            self._keep_spoken(speech.slug, speech.reply_id, spoken)

    def _keep_spoken(self, slug: str, reply_id: int, spoken: str) -> None:
        self._keeping = True
        app = self.app

        def kept(_none: object) -> None:
            self._keeping = False
            if slug == self.shown.slug and self.shown.idle():
                self.conversation.show_latest()  # the reply as stored now: the words spoken
            self._send_heard()

        def failed(message: str) -> None:
            self._keeping = False
            self.bar.show_notice(message)
            self._send_heard()

        run_in_background(
            lambda: app.voice.keep_spoken(slug, reply_id, spoken),
            while_open(self, kept),
            while_open(self, failed),
        )

    # -- what the ears heard ----------------------------------------------------------------------
    def _on_transcript(self, text: str, mode: str) -> None:
        if not text:
            return
        if mode == "hands-free" and self.app.settings.voice.hands_free_sends:
            self._heard.append(text)
            self._send_heard()
            return
        draft = self.input.toPlainText()
        self._filling = True
        try:
            self.input.setPlainText(f"{draft.rstrip()} {text}".strip() if draft.strip() else text)
        finally:
            self._filling = False
        self.input.moveCursor(self.input.textCursor().MoveOperation.End)
        self.input.setFocus()

    def _send_heard(self) -> None:
        """Hands-free: what was heard is sent once the persona shown is ready and no reply is under way
        (nor the words of one spoken over still being stored)."""
        if not self._heard or self._keeping or not self.shown.idle() or self.turns.answering(self.shown.slug):
            return
        text, self._heard = " ".join(self._heard), []
        self._filling = True
        try:
            self.input.setPlainText(text)
        finally:
            self._filling = False
        self.turns.send_message()

    # -- what the speech queue says ---------------------------------------------------------------
    def _on_report(self, kind: str, value: Any) -> None:
        if kind != "speech" or not isinstance(value, SpeechEvent):
            return
        if value.kind == "started" and self.speech is not None:
            self._show_speaking(True)
        elif value.kind == "idle":
            self._show_speaking(False)
            speech = self.speech
            if speech is not None and speech.finished:
                self.speech = None  # all of it said
        elif value.kind == "error" and value.error is not None:
            self.bar.show_notice(tr_error(value.error))
        self.speech_event.emit(value)

    # -- closing ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Silence, the microphone closed; the queue's threads and the device end on a worker."""
        self.ears.close()
        self.speech = None
        self._shut = True  # first: a worker preparing a voice now opens nothing (no lock: never wait here)
        output, self._output = self._output, None
        queue = self._queue
        self._queue = None

        def end() -> None:
            if queue is not None:
                queue.close()
            with self._output_lock:
                if output is not None:
                    output.close()

        if queue is not None or output is not None:
            if queue is not None:
                queue.stop()
            run_in_background(end, lambda _none: None, lambda _message: None)
