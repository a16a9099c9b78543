"""The shipped offline voices speak for real: Open JTalk and Kokoro in Japanese, Piper in English (and any
Piper voice in the voices folder). Audio of a plausible length, not silent, at the engine's own rate; speed
and pitch do what they say; a damaged voice file is named in the error. Each model loads once per module."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.voice.base import Audio, VoiceError, VoiceSettings
from nexus_ark.voice.engines import KokoroJaEngine, OpenJTalkEngine, PiperEngine
from nexus_ark.voice.engines.piper import BUNDLED_VOICE, bundled_model

JA = "今日はいい天気ですね。田中さんと三時に駅で会います。"
EN = "It is a lovely day. I will meet Sarah at the station at three."
DEFAULT = VoiceSettings()


def rms(audio: Audio) -> float:
    return float(np.sqrt(np.mean(np.square(audio.samples, dtype=np.float64)))) if len(audio.samples) else 0.0


def assert_speech(audio: Audio, rate: int, text: str) -> None:
    """Heard as speech: at the engine's rate, float32 mono in [-1, 1], loud enough, and as long as a person
    would take to say it (roughly 4-20 characters a second; a short sentence between 0.5 s and 10 s)."""
    assert audio.rate == rate
    assert audio.samples.dtype == np.float32 and audio.samples.ndim == 1
    assert float(np.max(np.abs(audio.samples))) <= 1.0
    assert rms(audio) > 0.02, f"silent: rms {rms(audio):.4f}"
    assert max(0.5, len(text) / 20) <= audio.seconds <= min(10.0, len(text) / 2), audio.seconds


def pitch_hz(audio: Audio) -> float:
    """The median fundamental of the voiced 50 ms frames (autocorrelation, 80-600 Hz)."""
    x, rate = audio.samples[::4], audio.rate // 4
    n, found = int(0.05 * rate), []
    for start in range(0, len(x) - n, n // 2):
        frame = x[start : start + n] - x[start : start + n].mean()
        if np.sqrt(np.mean(frame**2)) < 0.05:
            continue
        corr = np.correlate(frame, frame, "full")[n - 1 :]
        corr = corr / corr[0]
        lo, hi = rate // 600, rate // 80
        window = corr[lo:hi]
        if window.max() < 0.5:
            continue
        k = int(np.argmax(window > 0.9 * window.max()))  # the first strong peak: no octave jumps down
        while k + 1 < len(window) and window[k + 1] > window[k]:
            k += 1
        found.append(rate / (lo + k))
    return float(np.median(found))


@pytest.fixture(scope="module")
def openjtalk() -> OpenJTalkEngine:
    return OpenJTalkEngine()


@pytest.fixture(scope="module")
def piper() -> PiperEngine:
    return PiperEngine(None)


@pytest.fixture(scope="module")
def kokoro() -> KokoroJaEngine:
    return KokoroJaEngine()  # the package's own cache: the 92 MB model is reassembled once per machine


# --- Open JTalk ---------------------------------------------------------------------------------------


def test_open_jtalk_speaks_a_japanese_sentence_at_48_khz(openjtalk: OpenJTalkEngine) -> None:
    assert_speech(openjtalk.synthesize(JA, DEFAULT), 48000, JA)


def test_open_jtalk_gives_audio_for_an_english_sentence_too(openjtalk: OpenJTalkEngine) -> None:
    # Spelled out in katakana, letter by letter: not good English, but speech, not an error.
    audio = openjtalk.synthesize(EN, DEFAULT)
    assert audio.rate == 48000 and rms(audio) > 0.02 and 1.0 <= audio.seconds <= 30.0


def test_open_jtalk_at_speed_1_5_is_shorter_than_at_1_0(openjtalk: OpenJTalkEngine) -> None:
    normal = openjtalk.synthesize(JA, DEFAULT).seconds
    fast = openjtalk.synthesize(JA, VoiceSettings(speed=1.5)).seconds
    assert fast < normal * 0.8


def test_open_jtalk_pitch_moves_the_voice_by_semitones_and_keeps_its_length(
    openjtalk: OpenJTalkEngine,
) -> None:
    assert openjtalk.pitch_supported
    low = openjtalk.synthesize(JA, VoiceSettings(pitch=-6))
    mid = openjtalk.synthesize(JA, DEFAULT)
    high = openjtalk.synthesize(JA, VoiceSettings(pitch=6))
    assert pitch_hz(low) < pitch_hz(mid) < pitch_hz(high)
    assert 1.6 < pitch_hz(high) / pitch_hz(low) < 2.5  # twelve semitones apart: about an octave
    assert abs(high.seconds - low.seconds) < 0.05


def test_open_jtalk_says_nothing_for_emoji_and_refuses_a_voice_it_does_not_have(
    openjtalk: OpenJTalkEngine,
) -> None:
    assert len(openjtalk.synthesize("😀🎉 …", DEFAULT).samples) == 0
    with pytest.raises(VoiceError, match="mei_normal") as err:
        openjtalk.synthesize(JA, VoiceSettings(voice="takumi"))
    assert "takumi" in str(err.value)
    assert [v.id for v in openjtalk.voices()] == ["mei_normal"]


# --- Piper --------------------------------------------------------------------------------------------


def test_piper_speaks_an_english_sentence_with_the_shipped_voice_at_22_khz(piper: PiperEngine) -> None:
    assert_speech(piper.synthesize(EN, DEFAULT), 22050, EN)
    assert [(v.id, v.language) for v in piper.voices()] == [(BUNDLED_VOICE, "en")]


def test_piper_gives_audio_for_a_japanese_sentence_too(piper: PiperEngine) -> None:
    # espeak reads kanji by their names in English: speech, not an error.
    audio = piper.synthesize("こんにちは、田中さん。", DEFAULT)
    assert audio.rate == 22050 and rms(audio) > 0.02 and 1.0 <= audio.seconds <= 30.0


def test_piper_at_speed_1_5_is_shorter_than_at_1_0_and_ignores_a_pitch_it_cannot_set(
    piper: PiperEngine,
) -> None:
    normal = piper.synthesize(EN, DEFAULT).seconds
    fast = piper.synthesize(EN, VoiceSettings(speed=1.5)).seconds
    assert fast < normal * 0.8
    assert not piper.pitch_supported  # the window greys the pitch; a persona.toml pitch still speaks
    assert_speech(piper.synthesize(EN, VoiceSettings(pitch=5)), 22050, EN)


def _voice_copy(folder: Path, name: str) -> Path:
    """A Piper voice in a voices folder, as the catalogue downloads it: NAME.onnx + NAME.onnx.json."""
    bundled = bundled_model()
    assert bundled is not None
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / f"{name}.onnx"
    model.symlink_to(bundled)  # 63 MB: a link, not a copy
    (folder / f"{name}.onnx.json").write_bytes(Path(f"{bundled}.json").read_bytes())
    return model


def test_a_voice_in_the_voices_folder_is_listed_and_speaks(tmp_path: Path) -> None:
    _voice_copy(tmp_path / "voices" / "en_GB-downloaded-low", "en_GB-downloaded-low")
    engine = PiperEngine(tmp_path / "voices")
    listed = {v.id: v for v in engine.voices()}
    assert set(listed) == {BUNDLED_VOICE, "en_GB-downloaded-low"}
    assert listed["en_GB-downloaded-low"].language == "en"
    assert listed["en_GB-downloaded-low"].label == "downloaded (low, en_GB)"
    assert_speech(engine.synthesize(EN, VoiceSettings(voice="en_GB-downloaded-low")), 22050, EN)


def test_a_voice_whose_settings_file_is_still_downloading_is_not_listed_yet(tmp_path: Path) -> None:
    model = _voice_copy(tmp_path / "voices" / "en_GB-arriving-low", "en_GB-arriving-low")
    Path(f"{model}.json").rename(f"{model}.json.part")  # the downloader's name until the file verifies
    assert [v.id for v in PiperEngine(tmp_path / "voices").voices()] == [BUNDLED_VOICE]


def test_a_corrupt_piper_model_is_a_voice_error_naming_the_file(tmp_path: Path) -> None:
    model = tmp_path / "voices" / "en_US-broken-medium.onnx"
    model.parent.mkdir()
    model.write_bytes(b"\x00not an onnx model" * 100)
    bundled = bundled_model()
    assert bundled is not None
    Path(f"{model}.json").write_bytes(Path(f"{bundled}.json").read_bytes())
    engine = PiperEngine(model.parent)
    assert "en_US-broken-medium" in [v.id for v in engine.voices()]  # listed, so it can be removed
    with pytest.raises(VoiceError, match=r"en_US-broken-medium\.onnx") as err:
        engine.synthesize(EN, VoiceSettings(voice="en_US-broken-medium"))
    assert "damaged" in str(err.value)


def test_a_corrupt_or_missing_piper_settings_file_is_a_voice_error_naming_it(tmp_path: Path) -> None:
    model = _voice_copy(tmp_path / "voices", "en_US-halfjson-medium")
    Path(f"{model}.json").write_text('{"audio": {"sample_rate": 22050', encoding="utf-8")  # cut short
    engine = PiperEngine(model.parent)
    with pytest.raises(VoiceError, match=r"en_US-halfjson-medium\.onnx\.json"):
        engine.synthesize(EN, VoiceSettings(voice="en_US-halfjson-medium"))
    Path(f"{model}.json").unlink()
    with pytest.raises(VoiceError, match=r"no settings file beside it \(en_US-halfjson-medium\.onnx\.json\)"):
        engine.synthesize(EN, VoiceSettings(voice="en_US-halfjson-medium"))


def test_an_unknown_piper_voice_is_refused_with_the_voices_there_are(piper: PiperEngine) -> None:
    with pytest.raises(VoiceError, match=f"no voice “en_US-nobody-high”.*{BUNDLED_VOICE}"):
        piper.synthesize(EN, VoiceSettings(voice="en_US-nobody-high"))


def test_piper_loads_a_voice_once_when_threads_ask_together() -> None:
    engine = PiperEngine(None)
    model = bundled_model()
    assert model is not None
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(engine.load(model))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(got) == 3 and got[0] is got[1] is got[2]


# --- Kokoro -------------------------------------------------------------------------------------------

SHORT_JA = "田中さん、おはようございます。"


@pytest.mark.slow
def test_kokoro_speaks_a_japanese_sentence_at_24_khz_in_each_voice_kind(kokoro: KokoroJaEngine) -> None:
    assert_speech(kokoro.synthesize(SHORT_JA, DEFAULT), 24000, SHORT_JA)
    assert_speech(kokoro.synthesize(SHORT_JA, VoiceSettings(voice="jm_kumo")), 24000, SHORT_JA)
    assert {v.id for v in kokoro.voices()} >= {"jf_alpha", "jm_kumo"}
    assert not kokoro.pitch_supported


@pytest.mark.slow
def test_kokoro_gives_audio_for_an_english_sentence_and_runs_faster_at_1_5(kokoro: KokoroJaEngine) -> None:
    english = kokoro.synthesize("Good morning, Sarah.", DEFAULT)
    assert english.rate == 24000 and rms(english) > 0.02 and english.seconds >= 0.5
    fast = kokoro.synthesize(SHORT_JA, VoiceSettings(speed=1.5)).seconds
    assert fast < kokoro.synthesize(SHORT_JA, DEFAULT).seconds * 0.8


def test_kokoro_refuses_a_voice_it_does_not_have_before_loading_anything() -> None:
    with pytest.raises(VoiceError, match="jf_alpha"):
        KokoroJaEngine().synthesize(SHORT_JA, VoiceSettings(voice="af_heart"))


# --- Licences -----------------------------------------------------------------------------------------


def test_about_carries_the_licence_of_each_shipped_voice_and_engine() -> None:
    from nexus_ark import about

    texts = {
        licence.spdx: about.licence_text(licence)
        for licence in (*about.MODEL_LICENCES, *about.OTHER_LICENCES)
    }
    assert "Creative Commons Attribution 3.0" in texts["CC-BY-3.0"] and "MMDAgent" in texts["CC-BY-3.0"]
    assert "Apache License" in texts["Apache-2.0 AND MIT"] and "hexgrad" in texts["Apache-2.0 AND MIT"]
    assert "CC0" in texts["CC0-1.0"] and "en_US-joe-medium" in texts["CC0-1.0"]
    assert "Nara Institute of Science and Technology" in texts["BSD-3-Clause"]
    assert "UniDic Consortium" in texts["BSD-3-Clause"]
    assert (
        "GNU GENERAL PUBLIC LICENSE" in texts["GPL-3.0-or-later"] and "espeak-ng" in texts["GPL-3.0-or-later"]
    )
