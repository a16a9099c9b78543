"""What every voice engine, transcriber and audio device speaks in: one home for the shapes (issue 36).

Audio is mono float32 in [-1, 1] at the engine's own rate; resampling happens once, at the output device.
Engines and transcribers are blocking and thread-safe enough to be called from one worker at a time: the
UI thread never calls them (the window runs them on its workers, the CLI on its own thread).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from nexus_ark.errors import NexusArkError
from nexus_ark.model_config import is_key_reference
from nexus_ark.notices import notice

Language = Literal["ja", "en"]

# The engines a persona's voice can name (persona.toml [voice] engine = "...").
EngineName = Literal["openjtalk", "kokoro-ja", "piper", "voicevox", "openai", "system"]


class VoiceError(NexusArkError):
    """A voice could not be spoken or heard: the message names the engine, voice, file or device at fault
    (an engine that is down, an unknown speaker, a corrupt voice file, no audio device). The CLI prints it
    on one line and exits 2; the window shows it as a notice, never a traceback."""


@dataclass(frozen=True)
class Audio:
    """Mono samples, float32 in [-1, 1], at `rate` Hz."""

    samples: np.ndarray
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate if self.rate else 0.0


class VoiceSettings(BaseModel):
    """A persona's voice: persona.toml's [voice] table (all optional; the defaults speak the persona's
    language with the shipped engine for it)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False  # replies are spoken aloud
    engine: EngineName | None = None  # None: the shipped engine for the persona's language
    voice: str = ""  # the engine's voice id ("" = the engine's default); VOICEVOX: the style id as text
    speed: float = Field(default=1.0, ge=0.5, le=2.0)
    pitch: float = Field(default=0.0, ge=-12.0, le=12.0)  # semitones
    speak_first_messages: bool = False  # messages the persona writes first are spoken (never in quiet hours)
    api_base: str = ""  # VOICEVOX / AivisSpeech / an OpenAI-compatible server ("" = the engine's default)
    model: str = ""  # OpenAI-compatible speech: the model name (e.g. "tts-1", "kokoro")
    # OpenAI-compatible speech: the key as a reference ("${ENV_VAR}" or "keyring:SERVICE/NAME"), never a key.
    api_key: str = ""

    @field_validator("api_key")
    @classmethod
    def _key_is_reference(cls, value: str) -> str:
        if not is_key_reference(value):
            raise ValueError(notice('this looks like a plain API key; use "${{ENV_VAR}}" or the OS keyring'))
        return value


class VoiceInfo(BaseModel):
    """One voice an engine offers (what `nexus-ark voice list` prints and the voice picker shows)."""

    engine: EngineName
    id: str
    label: str
    language: Language | Literal["multi"]
    installed: bool = True  # False: listed in the catalogue, `voice get` downloads it
    size_bytes: int | None = None


class SpeechEngine(Protocol):
    """Text in, audio out. `synthesize` raises VoiceError with words, never a library's exception."""

    @property
    def name(self) -> EngineName: ...  # read-only: an engine class says `name: Literal["piper"] = "piper"`

    def voices(self) -> list[VoiceInfo]: ...

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio: ...


class Transcript(BaseModel):
    text: str
    language: str | None = None
    seconds: float = 0.0  # the audio's length


class Transcriber(Protocol):
    """Audio in, words out (a local Whisper model, an OpenAI-compatible endpoint, or a shipped recogniser)."""

    name: str

    def transcribe(self, audio: Audio, language: Language | None = None) -> Transcript: ...
