"""Listening: the microphone open only while listening, voice activity detection ending each utterance,
and each utterance transcribed on the listener's own worker thread.

Threads: the microphone calls `on_chunk` on its own (audio) thread; the detector runs there (about a
millisecond per 32 ms window), so a start of speech is known at once and `on_speech_start` fires from that
thread (the window uses it to stop the persona talking: barge-in). A finished utterance goes to the
listener's worker, which transcribes it and calls `on_transcript` there. Callers that own a UI move those
callbacks onto their own thread; nothing here waits on a UI.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.voice.base import Audio, Language, Transcriber, Transcript, VoiceError
from nexus_ark.voice.vad import RATE, SpeechDetector, SpeechEvent, resample

log = logging.getLogger(__name__)


class Microphone(Protocol):
    """What the listener needs of an input device (nexus_ark/voice/audio_in.py's open_microphone gives
    one): 16 kHz mono float32 chunks to `on_chunk` from `start` until `stop`."""

    @property
    def is_open(self) -> bool: ...

    def start(self, on_chunk: Callable[[np.ndarray], None]) -> None: ...

    def stop(self) -> None: ...


@runtime_checkable
class Preparable(Protocol):
    """A transcriber that can load its model ahead of the first utterance (a local Whisper)."""

    def prepare(self) -> None: ...


_STOP = object()
_PREPARE = object()


class Listener:
    """Hears utterances and hands back what was said.

    `start()` opens the microphone; `stop()` closes it at once (an utterance under way is still
    transcribed: releasing push-to-talk ends the sentence, it does not lose it). No audio is written
    anywhere unless `keep_audio_dir` is given (the person turned that on): then each utterance is kept
    there as a WAV file."""

    def __init__(
        self,
        microphone: Microphone,
        transcriber: Transcriber,
        language: Language | None,
        on_transcript: Callable[[Transcript], None],
        on_speech_start: Callable[[], None] | None = None,
        *,
        on_error: Callable[[NexusArkError], None] | None = None,
        detector: SpeechDetector | None = None,
        keep_audio_dir: Path | None = None,
        rate: int = RATE,
    ) -> None:
        self.microphone = microphone
        self.transcriber = transcriber
        self.language = language
        self.on_transcript = on_transcript
        self.on_speech_start = on_speech_start
        self.on_error = on_error
        self.detector = detector or SpeechDetector()
        self.keep_audio_dir = keep_audio_dir
        self.rate = rate  # what the microphone delivers; the detector takes 16 kHz
        self._lock = threading.Lock()  # the detector is fed by one thread at a time
        self._listening = False
        self._work: queue.Queue[object] = queue.Queue()
        self._busy = 0  # utterances queued or being transcribed
        self._idle = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False
        self._prepared = False

    @property
    def listening(self) -> bool:
        return self._listening

    def start(self) -> None:
        """Open the microphone and listen. A second start while listening does nothing."""
        if self._closed:
            raise VoiceError(notice("This listener was closed; make a new one."))
        with self._lock:
            if self._listening:
                return
            self.detector.reset()
            self._listening = True
        self._ensure_worker()
        if isinstance(self.transcriber, Preparable) and not self._prepared:
            self._prepared = True
            self._work.put(_PREPARE)  # loads while the person starts talking, off the microphone's thread
        try:
            self.microphone.start(self._on_chunk)
        except Exception:
            with self._lock:
                self._listening = False
            raise

    def stop(self) -> None:
        """Close the microphone now; what was being said is transcribed."""
        with self._lock:
            if not self._listening:
                return
            self._listening = False
        self.microphone.stop()
        with self._lock:
            events = self.detector.flush()
        for event in events:
            self._handle(event)

    def wait_idle(self, timeout: float) -> bool:
        """True once every utterance heard so far is transcribed (and its callback returned)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        """Stop listening and end the worker (after the utterances already queued)."""
        self.stop()
        self._closed = True
        if self._worker is not None:
            self._work.put(_STOP)
            self._worker.join(timeout=30)
            self._worker = None

    # -- the microphone's thread ---------------------------------------------------------------
    def _on_chunk(self, chunk: np.ndarray) -> None:
        samples = np.asarray(chunk, dtype=np.float32)
        if samples.ndim > 1:  # a device that gives frames × channels: keep the first channel
            samples = samples[:, 0]
        if self.rate != RATE:
            samples = resample(Audio(samples, self.rate), RATE).samples
        with self._lock:
            if not self._listening:
                return  # a chunk that arrived while stopping
            events = self.detector.feed(samples)
        for event in events:
            self._handle(event)

    def _handle(self, event: SpeechEvent) -> None:
        if event.kind == "start":
            if self.on_speech_start is not None:
                try:
                    self.on_speech_start()
                except Exception:  # a broken callback must not silence the microphone
                    log.exception("on_speech_start failed")
            return
        if event.audio is None or event.audio.seconds <= 0:
            return
        with self._idle:
            self._busy += 1
        self._work.put(event.audio)

    # -- the worker ----------------------------------------------------------------------------
    def _ensure_worker(self) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._run, name="nexus-ark-listener", daemon=True)
            self._worker.start()

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is _STOP:
                return
            if item is _PREPARE:
                self._prepare()
                continue
            assert isinstance(item, Audio)
            try:
                self._transcribe(item)
            finally:
                with self._idle:
                    self._busy -= 1
                    self._idle.notify_all()

    def _prepare(self) -> None:
        assert isinstance(self.transcriber, Preparable)
        try:
            self.transcriber.prepare()
        except NexusArkError as exc:  # said now, while the person can still choose another recogniser
            self._report(exc)

    def _transcribe(self, audio: Audio) -> None:
        if self.keep_audio_dir is not None:
            self._keep(audio)
        try:
            transcript = self.transcriber.transcribe(audio, self.language)
        except NexusArkError as exc:
            self._report(exc)
            return
        except Exception as exc:  # a recogniser's own failure, said in words
            self._report(
                VoiceError(notice("Transcription failed: {problem}", problem=str(exc) or type(exc).__name__))
            )
            return
        if not transcript.text.strip():
            return  # noise, a breath: nothing to put in the input
        try:
            self.on_transcript(transcript)
        except Exception:
            log.exception("on_transcript failed")

    def _report(self, error: NexusArkError) -> None:
        if self.on_error is None:
            log.warning("transcription failed: %s", error)
            return
        try:
            self.on_error(error)
        except Exception:
            log.exception("on_error failed")

    def _keep(self, audio: Audio) -> None:
        import soundfile

        assert self.keep_audio_dir is not None
        try:
            self.keep_audio_dir.mkdir(parents=True, exist_ok=True)
            name = time.strftime("utterance-%Y%m%d-%H%M%S") + f"-{time.monotonic_ns() % 10**9:09d}.wav"
            soundfile.write(str(self.keep_audio_dir / name), audio.samples, audio.rate, subtype="PCM_16")
        except (OSError, RuntimeError) as exc:  # soundfile raises its own RuntimeError subclass
            self._report(
                VoiceError(
                    notice(
                        "The utterance could not be kept in {folder}: {problem}",
                        folder=str(self.keep_audio_dir),
                        problem=str(exc),
                    )
                )
            )
