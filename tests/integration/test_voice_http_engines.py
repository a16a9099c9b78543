"""The voice engines reached over HTTP, against stand-ins on 127.0.0.1 that speak the real APIs and refuse
what the real servers refuse: VOICEVOX / AivisSpeech (voicevox_standin.py) and OpenAI's /v1/audio/speech
and /v1/audio/transcriptions (openai_audio_standin.py)."""

from __future__ import annotations

import ctypes.util
import math
import re
import socket
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from nexus_ark.voice.base import Audio, VoiceError, VoiceSettings
from nexus_ark.voice.engines.openai_speech import OpenAISpeechEngine
from nexus_ark.voice.engines.system import SystemEngine
from nexus_ark.voice.engines.voicevox import VoicevoxEngine
from nexus_ark.voice.remote_transcribe import OpenAITranscriber
from tests.integration.openai_audio_standin import OpenAIAudioStandIn
from tests.integration.voicevox_standin import VoicevoxStandIn

JA = "こんにちは、今日はいい天気ですね。"


@pytest.fixture(scope="module")
def voicevox() -> Iterator[VoicevoxStandIn]:
    server = VoicevoxStandIn()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def aivis() -> Iterator[VoicevoxStandIn]:
    server = VoicevoxStandIn(aivis=True)
    yield server
    server.stop()


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound (so nobody else takes it) but not listening."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield int(sock.getsockname()[1])
    sock.close()


def _voiced_seconds(samples: np.ndarray, rate: int) -> float:
    frame = rate // 50
    frames = samples[: len(samples) // frame * frame].reshape(-1, frame)
    return float((np.sqrt((frames**2).mean(axis=1)) > 0.02).sum() / 50)


def test_voicevox_lists_its_speaking_styles_as_japanese_voices(voicevox: VoicevoxStandIn) -> None:
    voices = VoicevoxEngine(voicevox.url).voices()
    assert [(v.id, v.label, v.language) for v in voices] == [
        ("2", "四国めたん (ノーマル)", "ja"),
        ("0", "四国めたん (あまあま)", "ja"),
        ("3", "ずんだもん (ノーマル)", "ja"),
    ]  # the singing style 6000 cannot read text: not offered


def test_voicevox_speaks_a_sentence_at_its_rate(voicevox: VoicevoxStandIn) -> None:
    audio = VoicevoxEngine(voicevox.url).synthesize(JA, VoiceSettings(voice="3"))
    assert audio.rate == 24000
    assert 1.5 < audio.seconds < 8
    assert _voiced_seconds(audio.samples, audio.rate) > 1.0  # speech, not silence


def test_voicevox_faster_speech_is_shorter_and_the_default_voice_is_the_first_style(
    voicevox: VoicevoxStandIn,
) -> None:
    engine = VoicevoxEngine(voicevox.url)
    normal = engine.synthesize(JA, VoiceSettings())
    fast = engine.synthesize(JA, VoiceSettings(speed=2.0))
    assert voicevox.queries[-1]["speedScale"] == 2.0
    assert fast.seconds < normal.seconds * 0.7


@pytest.mark.parametrize("semitones", [-12.0, 3.0, 12.0])
def test_voicevox_pitch_in_semitones_moves_the_mean_mora_frequency_by_that_much(
    voicevox: VoicevoxStandIn, semitones: float
) -> None:
    """VOICEVOX multiplies each mora's log F0 by 2**pitchScale: the query it received must move the moras'
    mean log F0 by semitones·ln2/12, i.e. their mean frequency by 2**(semitones/12)."""
    VoicevoxEngine(voicevox.url).synthesize(JA, VoiceSettings(voice="2", pitch=semitones))
    query = voicevox.queries[-1]
    voiced = [m["pitch"] for p in query["accent_phrases"] for m in p["moras"] if m["pitch"] > 0]
    mean = float(np.mean(voiced))
    shifted = mean * 2 ** query["pitchScale"]
    assert math.exp(shifted - mean) == pytest.approx(2 ** (semitones / 12), rel=1e-6)


def test_aivisspeech_pitch_is_a_frequency_ratio_and_its_rate_is_its_own(aivis: VoicevoxStandIn) -> None:
    audio = VoicevoxEngine(aivis.url).synthesize(JA, VoiceSettings(voice="2", pitch=2.0))
    assert aivis.queries[-1]["pitchScale"] == pytest.approx(2 ** (2 / 12) - 1)
    assert audio.rate == 44100 and audio.seconds > 1.5


def test_a_long_text_is_sent_in_pieces_and_spoken_whole(voicevox: VoicevoxStandIn) -> None:
    engine = VoicevoxEngine(voicevox.url)
    engine.max_query_bytes = 300  # about 33 Japanese characters, percent-encoded
    text = (
        "今日はいい天気ですね。散歩に行きましょう。公園の桜がきれいに咲いています。帰りにお茶を飲みましょう。"
    )
    before = len(voicevox.queries)
    audio = engine.synthesize(text, VoiceSettings(voice="2"))
    sent = voicevox.queries[before:]
    assert len(sent) >= 2
    assert "".join(
        "".join(m["text"] for p in q["accent_phrases"] for m in p["moras"]) for q in sent
    ).startswith("キョーワイイテンキデスネ")
    assert audio.seconds > 4


@pytest.mark.parametrize(
    ("standin", "voice", "words"),
    [
        ("voicevox", "99", "has no voice with style id 99"),
        ("aivis", "99", "has no voice with style id 99"),
        ("voicevox", "6000", "cannot read text with style id 6000"),
        ("voicevox", "metan", "The VOICEVOX voice metan is not a style id"),
    ],
)
def test_a_voice_the_engine_refuses_is_one_error_naming_it(
    request: pytest.FixtureRequest, standin: str, voice: str, words: str
) -> None:
    server: VoicevoxStandIn = request.getfixturevalue(standin)
    with pytest.raises(VoiceError) as caught:
        VoicevoxEngine(server.url).synthesize(JA, VoiceSettings(voice=voice))
    assert words in caught.value.message
    assert "\n" not in caught.value.message


def test_voicevox_not_running_says_so_naming_the_address(refused_port: int) -> None:
    address = f"http://127.0.0.1:{refused_port}"
    started = time.monotonic()
    with pytest.raises(VoiceError) as caught:
        VoicevoxEngine(address).synthesize(JA, VoiceSettings(voice="2"))
    assert caught.value.message == f"VOICEVOX is not running at {address}."
    assert time.monotonic() - started < 2.5
    with pytest.raises(VoiceError, match="VOICEVOX is not running"):
        VoicevoxEngine(address).voices()


def test_a_stalled_engine_gives_words_within_the_timeout(voicevox: VoicevoxStandIn) -> None:
    voicevox.stall_s = 30
    try:
        started = time.monotonic()
        with pytest.raises(VoiceError, match="did not answer in time"):
            VoicevoxEngine(voicevox.url, read_timeout_s=1.0).synthesize("テスト", VoiceSettings(voice="2"))
        assert time.monotonic() - started < 5
    finally:
        voicevox.stall_s = 0


def test_another_program_at_the_voicevox_address_is_named_not_obeyed(
    openai_audio: OpenAIAudioStandIn,
) -> None:
    """The OpenAI stand-in is a web server without VOICEVOX's routes: it answers /speakers with a 404."""
    with pytest.raises(VoiceError, match=r"answered HTTP 404 to /speakers: Not Found"):
        VoicevoxEngine(openai_audio.url.removesuffix("/v1")).voices()


def test_an_address_that_is_not_http_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(VoiceError, match=r"ftp://example\.org is not an http"):
        VoicevoxEngine("ftp://example.org")


# -- OpenAI-compatible speech and transcription ------------------------------------------------------

EN = "The quick brown fox jumps over the lazy dog."
KEY = "sk-standin-5up3r-53cr3t"
WRONG_KEY = "sk-wrong-PR1VATE-9999"


@pytest.fixture(scope="module")
def openai_audio() -> Iterator[OpenAIAudioStandIn]:
    server = OpenAIAudioStandIn(api_key=KEY)
    yield server
    server.stop()


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("NEXUS_ARK_TEST_SPEECH_KEY", KEY)
    monkeypatch.setenv("NEXUS_ARK_TEST_WRONG_KEY", WRONG_KEY)
    return "${NEXUS_ARK_TEST_SPEECH_KEY}"


def test_openai_speech_round_trip_gives_the_words_back(
    openai_audio: OpenAIAudioStandIn, key_env: str
) -> None:
    """Spoken by the stand-in's Piper voice through LiteLLM's speech call, heard by its Whisper tiny.en
    through LiteLLM's transcription call."""
    audio = OpenAISpeechEngine(openai_audio.url, "tts-1", key_env).synthesize(EN, VoiceSettings(voice="nova"))
    assert audio.rate == 24000 and 1.5 < audio.seconds < 6
    assert _voiced_seconds(audio.samples, audio.rate) > 1.0
    sent = openai_audio.speech_requests[-1]
    assert (sent["model"], sent["voice"], sent["response_format"], sent["input"]) == (
        "tts-1",
        "nova",
        "wav",
        EN,
    )
    heard = OpenAITranscriber(openai_audio.url, "whisper-1", key_env).transcribe(audio, "en")
    words = re.sub(r"[^a-z ]", "", heard.text.lower()).split()
    assert words == re.sub(r"[^a-z ]", "", EN.lower()).split()
    assert openai_audio.transcription_forms[-1]["language"] == "en"
    assert heard.seconds == pytest.approx(audio.seconds)


def test_openai_speech_over_4096_characters_is_sent_in_pieces(
    openai_audio: OpenAIAudioStandIn, key_env: str
) -> None:
    engine = OpenAISpeechEngine(openai_audio.url, "tts-1", key_env)
    engine.max_input_chars = 60  # the same cut as at 4096, on a text short enough to speak quickly here
    text = "Good morning. The sun is up. Shall we walk to the park? It is a fine day for it."
    before = len(openai_audio.speech_requests)
    audio = engine.synthesize(text, VoiceSettings(voice="alloy"))
    inputs = [r["input"] for r in openai_audio.speech_requests[before:]]
    assert len(inputs) >= 2 and all(len(i) <= 60 for i in inputs) and "".join(inputs) == text
    assert audio.seconds > 3


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (
            lambda url, key: (OpenAISpeechEngine(url, "tts-1", key), "robot"),
            "has no voice robot: Invalid value",
        ),
        (
            lambda url, key: (OpenAISpeechEngine(url, "tts-1", "${NEXUS_ARK_TEST_WRONG_KEY}"), "nova"),
            "refused the API key",
        ),
        (
            lambda url, key: (OpenAISpeechEngine(url, "tts-9", key), "nova"),
            "The model tts-9 is not available",
        ),
    ],
)
def test_a_refused_speech_request_is_one_sentence_naming_the_value(
    openai_audio: OpenAIAudioStandIn, key_env: str, make: Any, words: str, capfd: pytest.CaptureFixture[str]
) -> None:
    engine, voice = make(openai_audio.url, key_env)
    with pytest.raises(VoiceError) as caught:
        engine.synthesize("Hello.", VoiceSettings(voice=voice))
    assert words in caught.value.message
    assert "\n" not in caught.value.message and "Traceback" not in str(caught.value)
    printed = capfd.readouterr()
    assert printed.out == ""  # stdout is the command line's answer: LiteLLM prints nothing there
    for secret in (KEY, "PR1VATE"):
        assert secret not in str(caught.value) and secret not in printed.err


def test_a_text_the_server_finds_too_long_is_refused_in_words(
    openai_audio: OpenAIAudioStandIn, key_env: str
) -> None:
    engine = OpenAISpeechEngine(openai_audio.url, "tts-1", key_env)
    engine.max_input_chars = 10_000  # as a client that did not cut would send it
    with pytest.raises(VoiceError, match="refused a text of 4200 characters as too long"):
        engine.synthesize("x" * 4200, VoiceSettings(voice="nova"))


def test_transcription_refusals_and_a_down_server_are_words(
    openai_audio: OpenAIAudioStandIn, key_env: str, refused_port: int
) -> None:
    short = Audio(np.zeros(800, dtype=np.float32), 16000)  # 0.05 s
    with pytest.raises(VoiceError, match="Audio file is too short"):
        OpenAITranscriber(openai_audio.url, "whisper-1", key_env).transcribe(short, "en")
    address = f"http://127.0.0.1:{refused_port}/v1"
    started = time.monotonic()
    with pytest.raises(VoiceError) as caught:
        OpenAITranscriber(address, "whisper-1").transcribe(
            Audio(np.zeros(16000, dtype=np.float32), 16000), "en"
        )
    assert caught.value.message == f"No server is running at {address}."
    with pytest.raises(VoiceError, match=f"No server is running at {re.escape(address)}"):
        OpenAISpeechEngine(address, "tts-1").synthesize("Hello.", VoiceSettings())
    assert time.monotonic() - started < 10


def test_a_stalled_speech_server_gives_words_within_the_timeout(
    openai_audio: OpenAIAudioStandIn, key_env: str
) -> None:
    openai_audio.stall_s = 30
    try:
        started = time.monotonic()
        with pytest.raises(VoiceError, match="did not answer in time"):
            OpenAISpeechEngine(openai_audio.url, "tts-1", key_env, read_timeout_s=1.0).synthesize(
                "Hello.", VoiceSettings(voice="nova")
            )
        assert time.monotonic() - started < 6
        started = time.monotonic()
        with pytest.raises(VoiceError, match="did not answer in time"):
            OpenAITranscriber(openai_audio.url, "whisper-1", key_env, read_timeout_s=1.0).transcribe(
                Audio(np.zeros(16000, dtype=np.float32), 16000), "en"
            )
        assert time.monotonic() - started < 6
    finally:
        openai_audio.stall_s = 0


# -- the OS voices (pyttsx3; eSpeak NG here: .ci/run installs Debian's espeak-ng) ----------------------

needs_espeak = pytest.mark.skipif(
    sys.platform.startswith("linux") and ctypes.util.find_library("espeak-ng") is None,
    reason="Debian's espeak-ng is not installed (.ci/run installs it): Linux has no OS voice without it",
)


@needs_espeak
def test_the_system_voice_speaks_english_and_japanese_and_prints_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    engine = SystemEngine()
    voices = {v.language for v in engine.voices()}
    assert voices >= {"en"}
    english = engine.synthesize("Hello there, this is the system voice.", VoiceSettings())
    assert english.rate > 8000 and 1.0 < english.seconds < 6
    assert _voiced_seconds(english.samples, english.rate) > 0.8
    for _ in range(2):  # pyttsx3 lost a rate changed after its first run (system.py): twice, both times taken
        fast = engine.synthesize("Hello there, this is the system voice.", VoiceSettings(speed=2.0))
        assert fast.seconds < english.seconds * 0.7
        again = engine.synthesize("Hello there, this is the system voice.", VoiceSettings())
        assert again.seconds == pytest.approx(english.seconds, rel=0.1)
    japanese = [v.id for v in engine.voices() if v.language == "ja"]
    if japanese:
        spoken = engine.synthesize("こんにちは", VoiceSettings(voice=japanese[0]))
        assert spoken.seconds > 0.3
    assert capfd.readouterr().out == ""  # pyttsx3's "Audio saved to ..." stays off stdout


@needs_espeak
def test_a_system_voice_that_does_not_exist_is_named() -> None:
    with pytest.raises(VoiceError, match="The system has no voice klingon-9"):
        SystemEngine().synthesize("Hello.", VoiceSettings(voice="klingon-9"))
