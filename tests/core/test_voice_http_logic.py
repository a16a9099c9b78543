"""The pure logic under the HTTP voice engines: long text cut into pieces a server takes, WAV answers as
servers really send them, the address checked, and a server's refusal put in words."""

from __future__ import annotations

import io
import struct

import httpx
import numpy as np
import openai
import pytest
import soundfile

from nexus_ark.voice.base import Audio, VoiceError
from nexus_ark.voice.engines.http_audio import checked_address, joined, pieces, wav_audio
from nexus_ark.voice.engines.openai_speech import litellm_model, voice_failure

JA = "今日はいい天気ですね。散歩に行きましょう！公園の桜がきれいです。"
EN = "Good morning. The sun is up, the birds sing, and the day is long. Shall we go?"


@pytest.mark.parametrize("limit", [12, 25, 40, 1000])
def test_pieces_fit_join_back_into_the_text_and_cut_at_sentence_ends_first(limit: int) -> None:
    for text in (JA, EN, JA + EN):
        parts = pieces(text, lambda p, limit=limit: len(p) <= limit)
        assert "".join(parts) == text
        assert all(len(p) <= limit for p in parts)
    assert pieces(JA, lambda p: len(p) <= 25) == [
        "今日はいい天気ですね。散歩に行きましょう！",
        "公園の桜がきれいです。",
    ]


def test_a_sentence_longer_than_the_limit_is_cut_after_commas_and_spaces_then_inside() -> None:
    assert pieces(EN, lambda p: len(p) <= 30) == [
        "Good morning. The sun is up, ",
        "the birds sing, and the day ",
        "is long. Shall we go?",
    ]
    unbroken = "あ" * 95
    assert [len(p) for p in pieces(unbroken, lambda p: len(p) <= 40)] == [23, 24, 24, 24]


def _wav_header(riff: int, data: int, rate: int = 24000, channels: int = 1) -> bytes:
    fmt = struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16)
    return b"RIFF" + struct.pack("<I", riff) + b"WAVEfmt " + fmt + b"data" + struct.pack("<I", data)


@pytest.mark.parametrize("size", [0xFFFFFFFF, 0], ids=["openai-streamed", "libsndfile-streamed"])
def test_a_streamed_wav_whose_header_does_not_know_its_length_is_read_whole(size: int) -> None:
    tone = (np.sin(np.arange(12000) / 8) * 16000).astype("<i2")
    audio = wav_audio(_wav_header(size, size) + tone.tobytes(), "http://127.0.0.1:8880/v1")
    assert audio.rate == 24000 and len(audio.samples) == 12000
    assert np.allclose(audio.samples, tone / 32768.0, atol=1e-4)


def test_a_stereo_answer_becomes_mono_and_garbage_is_refused_naming_the_server() -> None:
    buffer = io.BytesIO()
    soundfile.write(buffer, np.stack([np.full(100, 0.5), np.full(100, -0.1)], axis=1), 16000, format="WAV")
    audio = wav_audio(buffer.getvalue(), "x")
    assert audio.samples.shape == (100,) and audio.samples[0] == pytest.approx(0.2, abs=1e-3)
    with pytest.raises(
        VoiceError, match=r"http://127\.0\.0\.1:50021 answered with something that is not audio \(15"
    ):
        wav_audio(b"<html>oops</html>"[:15], "http://127.0.0.1:50021")


def test_pieces_at_another_rate_are_joined_at_the_first_ones_rate() -> None:
    one = Audio(np.ones(24000, dtype=np.float32), 24000)
    other = Audio(np.ones(44100, dtype=np.float32), 44100)
    both = joined([one, other])
    assert both.rate == 24000 and both.seconds == pytest.approx(2.0)


@pytest.mark.parametrize("bad", ["localhost:50021", "ftp://host/v1", "http://", "  "])
def test_an_address_without_http_and_a_host_is_refused_naming_it(bad: str) -> None:
    with pytest.raises(VoiceError, match="is not an http:// or https:// address"):
        checked_address(bad, "VOICEVOX")
    assert checked_address(" http://127.0.0.1:10101/ ", "VOICEVOX") == "http://127.0.0.1:10101"


def test_a_server_of_ones_own_is_reached_as_openai_compatible() -> None:
    assert litellm_model("kokoro", "http://192.168.1.5:8880/v1") == "openai/kokoro"
    assert litellm_model("tts-1", "") == "tts-1"
    assert litellm_model("azure/tts", "http://x") == "azure/tts"


def _openai_error(status: int, error: dict[str, object]) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:8880/v1/audio/speech")
    response = httpx.Response(status, json={"error": error}, request=request)
    kind = openai.BadRequestError if status == 400 else openai.AuthenticationError
    return kind(f"Error code: {status} - {{'error': {error!r}}}", response=response, body={"error": error})


def test_openai_refusals_name_the_voice_or_the_text_length_and_never_the_key() -> None:
    where = "http://127.0.0.1:8880/v1"
    voice = _openai_error(
        400,
        {
            "message": "Invalid value: 'robot'. Supported values are: 'alloy' and 'nova'.",
            "type": "invalid_request_error",
            "param": "voice",
            "code": "invalid_value",
        },
    )
    said = voice_failure(voice, where=where, model="tts-1", voice="robot")
    assert said.message.startswith(f"{where} has no voice robot: Invalid value: 'robot'.")
    long = _openai_error(
        400,
        {
            "message": "[{'type': 'string_too_long', 'loc': ('body', 'input'), 'msg': 'String should have at "
            "most 4096 characters', 'ctx': {'max_length': 4096}}]",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        },
    )
    assert (
        "refused a text of 5000 characters as too long"
        in voice_failure(long, where=where, model="tts-1", length=5000).message
    )
    key = _openai_error(
        401, {"message": "Incorrect API key provided: sk-ab*****wxyz.", "code": "invalid_api_key"}
    )
    refused = voice_failure(key, where=where, model="tts-1")
    assert refused.message == f"{where} refused the API key for tts-1." and "sk-" not in str(refused)
