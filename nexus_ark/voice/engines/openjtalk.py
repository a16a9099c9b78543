"""Japanese speech from Open JTalk (pyopenjtalk-plus): its dictionary and the HTS voice "Mei" (mei_normal,
48 kHz) ship inside the package, so it speaks with nothing to download.

Speed and pitch are the HTS engine's own (speed, half_tone in semitones), so neither resamples the audio.
pyopenjtalk keeps one HTS engine and one dictionary per process behind its own locks; the first call loads
them (about 1 s here), later calls reuse them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

from nexus_ark.voice.base import Audio, VoiceInfo, VoiceSettings
from nexus_ark.voice.engines.common import (
    LoadOnce,
    engine_failed,
    engine_unavailable,
    has_words,
    silence,
    to_audio,
    unknown_voice,
)

VOICE_ID = "mei_normal"  # the one HTS voice the package carries (htsvoice/mei_normal.htsvoice)
RATE = 48000
INT16_SCALE = 1.0 / 32768.0  # pyopenjtalk returns float64 samples in int16's range


def _load() -> ModuleType:
    try:
        import pyopenjtalk
    except ImportError as exc:
        raise engine_unavailable("Open JTalk", exc) from exc
    return pyopenjtalk


class OpenJTalkEngine:
    name: Literal["openjtalk"] = "openjtalk"
    pitch_supported = True  # the HTS engine shifts pitch by semitones without resampling

    def __init__(self) -> None:
        self._library = LoadOnce(_load)

    def voices(self) -> list[VoiceInfo]:
        return [VoiceInfo(engine=self.name, id=VOICE_ID, label="Mei (Open JTalk)", language="ja")]

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio:
        if settings.voice not in ("", VOICE_ID):
            raise unknown_voice("Open JTalk", settings.voice, [VOICE_ID])
        if not has_words(text):  # Open JTalk warns on stderr and returns nothing for these
            return silence(RATE)
        library = self._library.get()
        try:
            samples, rate = library.tts(text, speed=settings.speed, half_tone=settings.pitch)
        except Exception as exc:  # the C extension's errors come as RuntimeError, ValueError, ...
            raise engine_failed("Open JTalk", exc) from exc
        if len(samples) == 0:  # nothing to pronounce (only symbols or emoji)
            return silence(int(rate))
        return to_audio(samples, int(rate), INT16_SCALE)
