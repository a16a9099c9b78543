"""Transcription by any OpenAI-compatible endpoint (OpenAI's whisper-1, or a whisper server on the LAN:
faster-whisper-server, whisper.cpp's server, LocalAI...) through LiteLLM's transcription call, POST
{api_base}/audio/transcriptions with the audio as a WAV file (issue 36).

The answer is asked for as JSON ({"text": ...}); the language is passed when known (ja or en), which spares
the server its guess. Failures are sentences naming the server, never LiteLLM's traceback or the key.
"""

from __future__ import annotations

import io
from typing import Any

import httpx
import numpy as np

from nexus_ark.logfile import masked_url
from nexus_ark.notices import notice
from nexus_ark.providers.litellm_backend import import_litellm
from nexus_ark.providers.secrets import api_key_for
from nexus_ark.voice.base import Audio, Language, Transcript, VoiceError
from nexus_ark.voice.engines.http_audio import checked_address
from nexus_ark.voice.engines.openai_speech import VOICE_SETTING, litellm_model, voice_failure

DEFAULT_MODEL = "whisper-1"


class OpenAITranscriber:
    """Words from one OpenAI-compatible transcription server (`api_base` "" is OpenAI itself)."""

    name = "openai"

    def __init__(
        self,
        api_base: str = "",
        model: str = "",
        api_key_ref: str = "",
        *,
        connect_timeout_s: float = 3.0,
        read_timeout_s: float = 60.0,
    ) -> None:
        self.api_base = (
            checked_address(api_base, "OpenAI-compatible transcription") if api_base.strip() else ""
        )
        self.model = model.strip() or DEFAULT_MODEL
        self.api_key_ref = api_key_ref
        self._timeout = httpx.Timeout(read_timeout_s, connect=connect_timeout_s)

    def close(self) -> None:
        """Nothing held: LiteLLM keeps its own clients."""

    def transcribe(self, audio: Audio, language: Language | None = None) -> Transcript:
        if not len(audio.samples):
            return Transcript(text="", language=language, seconds=0.0)
        lib = import_litellm()
        model = litellm_model(self.model, self.api_base)
        kwargs: dict[str, Any] = {
            "model": model,
            "file": ("speech.wav", wav_bytes(audio), "audio/wav"),
            "response_format": "json",
            "timeout": self._timeout,
            "max_retries": 0,
        }
        if language:
            kwargs["language"] = language
        if self.api_base:
            kwargs["api_base"] = self.api_base
        try:
            key = api_key_for(
                model, api_base=self.api_base, reference=self.api_key_ref, setting=VOICE_SETTING
            )
            if key:
                kwargs["api_key"] = key
            answer = lib.transcription(**kwargs)
        except Exception as exc:
            raise voice_failure(exc, where=self.where(), model=self.model) from None
        text = getattr(answer, "text", None)
        if not isinstance(text, str):
            raise VoiceError(notice("{server} answered without a transcript.", server=self.where()))
        return Transcript(text=text.strip(), language=language, seconds=audio.seconds)

    def where(self) -> str:
        return masked_url(self.api_base) if self.api_base else "OpenAI"


def wav_bytes(audio: Audio) -> bytes:
    """The audio as a 16-bit WAV file, the format every transcription server takes."""
    import soundfile

    buffer = io.BytesIO()
    samples = np.clip(np.asarray(audio.samples, dtype=np.float32), -1.0, 1.0)
    soundfile.write(buffer, samples, audio.rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()
