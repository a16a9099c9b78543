"""A streamed reply spoken sentence by sentence while it streams, and stopped at once (barge-in).

feed() takes the reply as it streams; each time a sentence ends (nexus_ark.sentences, the app's one
splitter) the sentence is cleaned for speech and queued. A worker thread synthesizes the sentences in
order and queues each one's audio on the output as soon as it is made, so sentence n+1 is synthesized
while sentence n plays and plays right after it, with no gap. A second thread follows the playback and
reports it (on_event). The caller's thread (the window's UI thread) only appends text and takes a lock
for a moment: feed, finish and stop never wait on synthesis or the device.

Each piece is cleaned for speech by `clean` (speech_text.speakable: no Markdown, code, URLs or emoji;
pass one with the persona's readings). A fenced code block (``` or ~~~) is one piece, cleaned as a whole
(so it is left out), never line by line. stop() drops everything queued and silences the output within
a block; the next feed() after stop() or finish() starts a new reply, so a regenerated reply replaces
the speech.

spoken_text(): the reply as written up to where speech reached: every sentence played to its end, then,
for the one playing (or cut by stop()), its beginning up to the share of its audio played (audio length
follows the spoken characters closely enough for this; see spoken_part), cut back to a whole word where
words are spaced.
A piece with nothing to say (a code block, a blank line) counts as spoken once speech has passed it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal, Protocol

from nexus_ark.notices import notice
from nexus_ark.sentences import BOUNDARY, sentences
from nexus_ark.voice.audio_out import Playback
from nexus_ark.voice.base import Audio, VoiceError
from nexus_ark.voice.speech_text import speakable

log = logging.getLogger(__name__)

_FENCE = re.compile(r"\s*(```|~~~)")

EventKind = Literal["started", "finished", "idle", "error"]


@dataclass(frozen=True)
class SpeechEvent:
    """What the speech did: a sentence started or finished playing, a sentence could not be spoken
    (`error`), or everything fed so far has been spoken or stopped (`idle`). `index` numbers the reply's
    pieces from 0 (a piece with nothing to say has a number and no events)."""

    kind: EventKind
    index: int = -1
    text: str = ""  # the sentence as written in the reply
    error: VoiceError | None = None


class Output(Protocol):
    """What SpeechQueue needs of an audio output (audio_out.AudioOutput)."""

    def play(self, audio: Audio) -> Playback: ...

    def stop(self) -> None: ...

    def wake(self) -> None: ...


@dataclass(eq=False)
class _Piece:
    index: int
    text: str  # as written
    speech: str  # what is said ("" = nothing)
    generation: int
    handled: bool = False  # the worker has synthesized and queued it (or found nothing to say, or failed)
    playback: Playback | None = None
    error: VoiceError | None = None


class SpeechQueue:
    def __init__(
        self,
        synthesize: Callable[[str], Audio],
        output: Output,
        on_event: Callable[[SpeechEvent], None] | None = None,
        *,
        clean: Callable[[str], str] = speakable,
    ) -> None:
        self._synthesize = synthesize
        self._output = output
        self._on_event = on_event
        self._clean = clean
        self._changed = threading.Condition()
        self._generation = 0
        self._text = ""  # the reply's text not yet cut into sentences
        self._code: list[str] | None = None  # the pieces of an open code fence
        self._reply: list[_Piece] = []  # this reply's pieces, for spoken_text
        self._ended = False  # finish() or stop(): the next feed begins a new reply
        self._todo: deque[_Piece] = deque()  # for the synthesis worker
        self._follow: deque[_Piece] = deque()  # for the playback follower, in order
        self._closed = False
        self._threads: list[threading.Thread] = []

    # --- the caller's side (any thread; never waits) -------------------------------------------------

    def feed(self, text_chunk: str) -> None:
        """More of the reply; each sentence it completes is queued for speech."""
        with self._changed:
            if self._ended:
                self._begin_reply()
            self._text += text_chunk
            ends = [found.end() for found in BOUNDARY.finditer(self._text)]
            if ends:
                done, self._text = self._text[: ends[-1]], self._text[ends[-1] :]
                for sentence in sentences(done):
                    self._add(sentence)
            self._start_threads()

    def finish(self) -> None:
        """The reply is complete: its last words (and an unclosed code block) are spoken too."""
        with self._changed:
            if self._text:
                self._add(self._text)
                self._text = ""
            if self._code is not None:
                self._queue("".join(self._code))
                self._code = None
            self._ended = True
            self._changed.notify_all()

    def stop(self) -> None:
        """Barge-in: the sentence playing is cut within a block, nothing queued is said."""
        with self._changed:
            self._generation += 1
            self._todo.clear()
            self._follow.clear()
            self._text = ""
            self._code = None
            self._ended = True
            self._output.stop()
            self._changed.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """True once everything fed so far has been spoken (or stopped); False if `timeout` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._follow, timeout)

    def spoken_text(self) -> str:
        """The current reply as written, up to where speech has reached (see the module's docstring)."""
        with self._changed:
            said: list[str] = []
            for piece in self._reply:
                playback = piece.playback
                if playback is None:
                    if piece.handled:
                        said.append(piece.text)  # nothing to say here (or it failed): passed
                        continue
                    break
                if playback.done.is_set() and not playback.stopped:
                    said.append(piece.text)
                    continue
                if playback.started_at is not None:
                    said.append(spoken_part(piece.text, piece.speech, playback.fraction))
                break
            return "".join(said).strip()

    def close(self) -> None:
        """Stops speaking and ends the threads."""
        self.stop()
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join(timeout=5)

    # --- cutting the reply (under the lock) ----------------------------------------------------------

    def _begin_reply(self) -> None:
        self._reply = []
        self._ended = False

    def _add(self, sentence: str) -> None:
        if self._code is not None:
            self._code.append(sentence)
            if _FENCE.match(sentence) and len(self._code) > 1:
                self._queue("".join(self._code))
                self._code = None
        elif _FENCE.match(sentence):
            self._code = [sentence]
        else:
            self._queue(sentence)

    def _queue(self, text: str) -> None:
        piece = _Piece(len(self._reply), text, self._clean(text), self._generation)
        self._reply.append(piece)
        self._todo.append(piece)
        self._follow.append(piece)
        self._changed.notify_all()

    def _start_threads(self) -> None:
        if not self._threads:
            for target, name in ((self._speak, "nexus-speech"), (self._report, "nexus-speech-events")):
                thread = threading.Thread(target=target, name=name, daemon=True)
                self._threads.append(thread)
                thread.start()

    # --- the synthesis worker ------------------------------------------------------------------------

    def _speak(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._todo or self._closed)
                if self._closed:
                    return
                piece = self._todo.popleft()
            if piece.speech:
                self._output.wake()  # a paused stream starts while the sentence is synthesized
            audio, error = self._made(piece.speech) if piece.speech else (None, None)
            with self._changed:
                if piece.generation != self._generation:  # stopped meanwhile: never said
                    self._changed.notify_all()
                    continue
                if audio is not None and len(audio.samples):
                    try:
                        piece.playback = self._output.play(audio)
                    except VoiceError as exc:
                        error = exc
                piece.error = error
                piece.handled = True
                self._changed.notify_all()

    def _made(self, speech: str) -> tuple[Audio | None, VoiceError | None]:
        try:
            return self._synthesize(speech), None
        except VoiceError as exc:
            return None, exc
        except Exception as exc:  # an engine's bug must not end the worker; it is reported as an error
            log.exception("synthesis failed")
            return None, VoiceError(
                notice("Speech failed: {problem}", problem=f"{type(exc).__name__}: {exc}")
            )

    # --- the playback follower -----------------------------------------------------------------------

    def _report(self) -> None:
        busy = False  # something was followed since the last idle event
        while True:
            with self._changed:
                self._changed.wait_for(partial(self._news, busy))
                if self._closed:
                    return
                piece = self._follow[0] if self._follow else None
                busy = piece is not None
                if piece is not None:
                    self._changed.wait_for(partial(self._ready, piece))
            if piece is None:
                self._emit(SpeechEvent("idle"))
                continue
            if piece.generation == self._generation:
                self._follow_piece(piece)
            with self._changed:
                if self._follow and self._follow[0] is piece:
                    self._follow.popleft()
                    self._changed.notify_all()

    def _news(self, busy: bool) -> bool:
        return bool(self._follow) or self._closed or (busy and self._ended)

    def _ready(self, piece: _Piece) -> bool:
        return piece.handled or piece.generation != self._generation

    def _follow_piece(self, piece: _Piece) -> None:
        if piece.error is not None:
            self._emit(SpeechEvent("error", piece.index, piece.text, piece.error))
        playback = piece.playback
        if playback is None:
            return
        while not playback.started.wait(0.02):
            if playback.done.is_set():
                return  # stopped before it started
        self._emit(SpeechEvent("started", piece.index, piece.text))
        playback.done.wait()
        if not playback.stopped:
            self._emit(SpeechEvent("finished", piece.index, piece.text))

    def _emit(self, event: SpeechEvent) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:  # a listener's bug must not stop the speech
            log.exception("speech event handler failed")


def spoken_part(written: str, speech: str, fraction: float) -> str:
    """The part of a sentence `written` said when `fraction` of its audio (the words `speech`) has played.

    The said characters are the first `fraction` of `speech`'s. Where `speech` is `written` with things
    left out (a URL, Markdown marks: its characters appear in `written` in order), the cut is placed just
    after the last said character, found in order in `written`; otherwise (a name replaced by its
    reading) the same share of `written`'s characters is taken. Either way the cut goes back to a whole
    word where words are spaced."""
    written = written.rstrip()
    said = speech[: round(len(speech) * fraction)]
    cut = _after_in_order(written, speech, said)
    if cut is None:
        cut = round(len(written) * fraction)
    head = written[:cut]
    if cut < len(written) and not written[cut].isspace() and " " in head.strip():
        head = head[: head.rstrip().rfind(" ")]
    return head.rstrip()


def _after_in_order(written: str, speech: str, said: str) -> int | None:
    """Where in `written` the characters of `said` (a beginning of `speech`) end, when every character
    of `speech` appears in `written` in order; None when they do not."""
    position, end = 0, 0
    for count, char in enumerate(speech):
        if char.isspace():
            continue
        found = written.find(char, position)
        if found < 0:
            return None
        position = found + 1
        if count < len(said):
            end = position
    return end
