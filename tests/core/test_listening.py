"""The listener over real audio: a WAV file played into it through a small file-backed microphone (the
same start/stop/is_open shape as the real input device), the real VAD, and a recording transcriber that
says how much audio it was given (the words themselves are the round trip test's business:
tests/integration/test_transcribe_roundtrip.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile

from nexus_ark.voice.base import Audio, Language, Transcript, VoiceError
from nexus_ark.voice.listening import Listener
from nexus_ark.voice.vad import RATE
from tests.core.test_vad import japanese_speech, padded


class WavMicrophone:
    """Plays a WAV file into `on_chunk` in 30 ms chunks from its own thread, as a sound card's callback
    does (faster than real time, so tests are quick). `stop()` returns once no more chunks come."""

    def __init__(self, path: Path, chunk_ms: int = 30) -> None:
        self.samples, self.rate = soundfile.read(str(path), dtype="float32")
        self.chunk = int(self.rate * chunk_ms / 1000)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.finished = threading.Event()
        self.opened = 0

    @property
    def is_open(self) -> bool:
        return self._thread is not None

    def start(self, on_chunk: Callable[[np.ndarray], None]) -> None:
        self.opened += 1
        self._stop.clear()
        self.finished.clear()
        self._thread = threading.Thread(target=self._play, args=(on_chunk,), daemon=True)
        self._thread.start()

    def _play(self, on_chunk: Callable[[np.ndarray], None]) -> None:
        for offset in range(0, len(self.samples), self.chunk):
            if self._stop.is_set():
                return
            on_chunk(self.samples[offset : offset + self.chunk].copy())
        self.finished.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._thread = None


class RecordingTranscriber:
    name = "recording"

    def __init__(self, fail: bool = False) -> None:
        self.heard: list[tuple[float, Language | None]] = []
        self.fail = fail

    def transcribe(self, audio: Audio, language: Language | None = None) -> Transcript:
        self.heard.append((audio.seconds, language))
        if self.fail:
            raise VoiceError("the recogniser is down")
        return Transcript(text=f"utterance {len(self.heard)}", language=language, seconds=audio.seconds)


def wav_of(tmp_path: Path, samples: np.ndarray, name: str = "said.wav") -> Path:
    path = tmp_path / name
    soundfile.write(str(path), samples, RATE, subtype="PCM_16")
    return path


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


def test_two_utterances_in_a_recording_come_back_as_two_transcripts_in_order(tmp_path: Path) -> None:
    said = japanese_speech()
    mic = WavMicrophone(wav_of(tmp_path, padded(1.0, said, 1.5, said, 1.5)))
    transcriber = RecordingTranscriber()
    transcripts: list[Transcript] = []
    starts: list[float] = []
    listener = Listener(mic, transcriber, "ja", transcripts.append, lambda: starts.append(time.monotonic()))

    listener.start()
    assert mic.is_open
    wait_for(mic.finished.is_set)
    assert listener.wait_idle(20)
    listener.stop()

    assert [t.text for t in transcripts] == ["utterance 1", "utterance 2"]
    assert len(starts) == 2  # barge-in is announced once per utterance
    # Each utterance handed over is about the sentence's length, in the persona's language.
    for seconds, language in transcriber.heard:
        assert language == "ja"
        assert abs(seconds - len(said) / RATE) < 0.8
    assert not mic.is_open
    listener.close()


def test_the_microphone_is_open_only_while_listening_and_stop_closes_it_at_once(tmp_path: Path) -> None:
    mic = WavMicrophone(wav_of(tmp_path, padded(60.0)))  # a minute of room noise
    listener = Listener(mic, RecordingTranscriber(), "en", lambda t: None)
    assert not mic.is_open
    listener.start()
    listener.start()  # a second start while listening opens nothing more
    assert mic.is_open and mic.opened == 1
    began = time.monotonic()
    listener.stop()
    assert not mic.is_open
    assert time.monotonic() - began < 0.5
    assert not listener.listening
    listener.close()


def test_stopping_in_the_middle_of_a_sentence_still_transcribes_what_was_said(tmp_path: Path) -> None:
    """Push-to-talk: releasing the key ends the utterance; it is not thrown away."""
    said = japanese_speech()
    half = padded(1.0, said[: len(said) * 2 // 3])
    transcriber = RecordingTranscriber()
    transcripts: list[Transcript] = []
    mic = WavMicrophone(wav_of(tmp_path, half))
    listener = Listener(mic, transcriber, "ja", transcripts.append)

    listener.start()
    wait_for(mic.finished.is_set)
    assert transcripts == []  # no silence yet: the sentence is still open
    listener.stop()
    assert listener.wait_idle(20)
    assert [t.text for t in transcripts] == ["utterance 1"]
    assert transcriber.heard[0][0] > 1.0
    listener.close()


def test_noise_alone_reaches_no_transcriber_and_keeps_no_audio(tmp_path: Path) -> None:
    transcriber = RecordingTranscriber()
    mic = WavMicrophone(wav_of(tmp_path, padded(5.0, level=0.02)))
    listener = Listener(mic, transcriber, "en", lambda t: None)
    listener.start()
    wait_for(mic.finished.is_set)
    listener.stop()
    assert listener.wait_idle(5)
    assert transcriber.heard == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["said.wav"]  # nothing written beside it
    listener.close()


def test_utterances_are_kept_as_wav_files_only_when_asked(tmp_path: Path) -> None:
    said = japanese_speech()
    kept = tmp_path / "kept"
    mic = WavMicrophone(wav_of(tmp_path, padded(1.0, said, 1.5)))
    listener = Listener(mic, RecordingTranscriber(), "ja", lambda t: None, keep_audio_dir=kept)
    listener.start()
    wait_for(mic.finished.is_set)
    assert listener.wait_idle(20)
    listener.close()

    files = list(kept.glob("*.wav"))
    assert len(files) == 1
    samples, rate = soundfile.read(str(files[0]), dtype="float32")
    assert rate == RATE
    assert abs(len(samples) / RATE - len(said) / RATE) < 0.8
    assert np.abs(samples).max() > 0.1  # the speech, not silence


def test_a_failing_recogniser_is_reported_in_words_and_listening_goes_on(tmp_path: Path) -> None:
    said = japanese_speech()
    errors: list[Exception] = []
    mic = WavMicrophone(wav_of(tmp_path, padded(1.0, said, 1.5, said, 1.5)))
    transcriber = RecordingTranscriber(fail=True)
    listener = Listener(mic, transcriber, "ja", lambda t: None, on_error=errors.append)
    listener.start()
    wait_for(mic.finished.is_set)
    assert listener.wait_idle(20)
    listener.close()
    assert [str(e) for e in errors] == ["the recogniser is down"] * 2
    assert len(transcriber.heard) == 2


class PreparingTranscriber(RecordingTranscriber):
    """A recogniser with a model to load (as the local Whisper has)."""

    def __init__(self, broken: bool = False) -> None:
        super().__init__()
        self.prepared_on: list[str] = []
        self.broken = broken

    def prepare(self) -> None:
        self.prepared_on.append(threading.current_thread().name)
        if self.broken:
            raise VoiceError("the model file is damaged")


def test_the_model_is_loaded_on_the_worker_as_listening_starts_and_a_broken_one_is_said_at_once(
    tmp_path: Path,
) -> None:
    transcriber = PreparingTranscriber()
    mic = WavMicrophone(wav_of(tmp_path, padded(2.0)))
    listener = Listener(mic, transcriber, "en", lambda t: None)
    listener.start()
    wait_for(lambda: bool(transcriber.prepared_on))
    assert transcriber.prepared_on == ["nexus-ark-listener"]  # never the caller's (UI) thread
    listener.stop()
    listener.start()  # listening again does not load it again
    listener.close()
    assert len(transcriber.prepared_on) == 1

    errors: list[Exception] = []
    broken = Listener(
        WavMicrophone(wav_of(tmp_path, padded(2.0), "b.wav")),
        PreparingTranscriber(True),
        "en",
        lambda t: None,
        on_error=errors.append,
    )
    broken.start()
    wait_for(lambda: bool(errors))
    broken.close()
    assert [str(e) for e in errors] == ["the model file is damaged"]
