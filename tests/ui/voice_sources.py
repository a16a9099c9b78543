"""Real speech for the window's listening tests: sentences spoken by the shipped English engine (Piper),
written to WAV files, and a microphone that plays such files to the listener at the pace of a real one.

WavMicrophone stands in for the sound card's input only (the null device records silence): it meets the
listener's Microphone protocol (nexus_ark/voice/listening.py), delivers 32 ms chunks of 16 kHz mono from
its own thread, one chunk per 32 ms, silence between and after the utterances. An utterance can wait for
an event (the test says when the person speaks: over the persona, say)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile

from nexus_ark.voice.base import Audio, VoiceSettings
from nexus_ark.voice.vad import resample

RATE = 16000
CHUNK = 512  # 32 ms


def speak_to_wav(text: str, path: Path) -> Path:
    """`text` spoken by Piper's shipped English voice, at 16 kHz, with a breath of silence either side."""
    from nexus_ark.voice.engines.piper import PiperEngine

    audio = resample(PiperEngine(None).synthesize(text, VoiceSettings()), RATE)
    silence = np.zeros(int(0.3 * RATE), dtype=np.float32)
    soundfile.write(str(path), np.concatenate([silence, audio.samples, silence]), RATE, subtype="PCM_16")
    return path


def read_wav(path: Path) -> np.ndarray:
    samples, rate = soundfile.read(str(path), dtype="float32")
    assert rate == RATE, path
    return resample(Audio(samples, rate), RATE).samples


class WavMicrophone:
    """Plays utterances (WAV files) into the listener, each after its event is set (None: at once)."""

    def __init__(self, utterances: list[tuple[Path, threading.Event | None]]) -> None:
        self.utterances = [(read_wav(path), gate) for path, gate in utterances]  # said once, in order
        self.opened = 0  # how many times it was opened
        self.delivered = threading.Event()  # every utterance has been played in full
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def is_open(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def start(self, on_chunk: Callable[[np.ndarray], None]) -> None:
        self.opened += 1
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._play, args=(on_chunk,), name="wav-microphone", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _play(self, on_chunk: Callable[[np.ndarray], None]) -> None:
        silence = np.zeros(CHUNK, dtype=np.float32)
        pending = self.utterances
        samples: np.ndarray | None = None
        position = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            if samples is None and pending and (pending[0][1] is None or pending[0][1].is_set()):
                samples, position = pending.pop(0)[0], 0
            if samples is not None:
                chunk = samples[position : position + CHUNK]
                position += CHUNK
                if position >= len(samples):
                    samples = None
                    if not pending:
                        self.delivered.set()
                chunk = np.pad(chunk, (0, CHUNK - len(chunk)))
            else:
                chunk = silence
            on_chunk(chunk)
            next_at += CHUNK / RATE
            self._stop.wait(max(0.0, next_at - time.monotonic()))  # a microphone's pace
