"""What the shipped engines share: a model loaded once however many threads ask, samples made into Audio,
and the words of their failures (notices, so the window translates them)."""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from nexus_ark.notices import notice
from nexus_ark.voice.base import Audio, VoiceError

T = TypeVar("T")


class LoadOnce(Generic[T]):
    """A model built on first use, once, under a lock: two workers asking at once wait for one load. A load
    that fails is not remembered, so the next call tries again (a file fixed meanwhile is picked up)."""

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._value: T | None = None

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._load()
            return self._value


def to_audio(samples: np.ndarray, rate: int, scale: float = 1.0) -> Audio:
    """Mono float32 in [-1, 1] from an engine's samples (Open JTalk's are int16-range: scale 1/32768)."""
    mono = np.asarray(samples, dtype=np.float64).reshape(-1) * scale
    return Audio(np.clip(mono, -1.0, 1.0).astype(np.float32), rate)


def has_words(text: str) -> bool:
    """Whether the text has a letter or a digit to pronounce (not only spaces, punctuation or emoji)."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


def silence(rate: int) -> Audio:
    """What an engine returns for text with nothing to say (only emoji or punctuation, or empty)."""
    return Audio(np.zeros(0, dtype=np.float32), rate)


def engine_failed(engine: str, exc: BaseException) -> VoiceError:
    """A library's exception in words: the engine, and what the library said."""
    problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return VoiceError(notice("The {engine} voice could not speak: {problem}", engine=engine, problem=problem))


def engine_unavailable(engine: str, exc: BaseException) -> VoiceError:
    """The engine's package or model is missing or damaged (an install problem, not the text's)."""
    problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return VoiceError(
        notice("The {engine} voice engine could not be loaded: {problem}", engine=engine, problem=problem),
        hint=notice("Reinstall Nexus Ark, or choose another voice engine in the persona's voice settings."),
    )


def unknown_voice(engine: str, voice: str, known: list[str]) -> VoiceError:
    return VoiceError(
        notice(
            "{engine} has no voice “{voice}”. Its voices: {voices}.",
            engine=engine,
            voice=voice,
            voices=", ".join(known),
        )
    )
