"""Any OpenAI-compatible speech endpoint (OpenAI itself, or a server on the LAN: Kokoro-FastAPI, openedai-
speech, LocalAI...) through LiteLLM's speech call, POST {api_base}/audio/speech (issue 36).

The request: {"model", "input", "voice", "response_format": "wav", "speed"}; the answer is the audio
itself. OpenAI refuses an input over 4096 characters and a voice it does not have with HTTP 400 and
{"error": {"message", "type": "invalid_request_error", "param": "input" | "voice", "code"}}: a long text is
sent in pieces cut at sentence ends (their audio joined), and a refusal becomes one sentence naming the
value. The endpoint has no pitch: a persona's pitch is not applied here (speed is: OpenAI takes 0.25-4).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from nexus_ark.errors import NexusArkError
from nexus_ark.logfile import masked_url
from nexus_ark.notices import clipped, notice
from nexus_ark.providers.failures import Origin, cause_chain, translate
from nexus_ark.providers.litellm_backend import import_litellm
from nexus_ark.providers.secrets import api_key_for
from nexus_ark.voice.base import Audio, EngineName, VoiceError, VoiceInfo, VoiceSettings
from nexus_ark.voice.engines.common import has_words, silence
from nexus_ark.voice.engines.http_audio import checked_address, joined, pieces, wav_audio

MAX_INPUT_CHARS = 4096  # OpenAI's limit for one request's input
DEFAULT_MODEL = "tts-1"
DEFAULT_VOICE = "alloy"
OPENAI_RATE = 24000  # OpenAI's speech is 24 kHz: the rate of silence
# OpenAI's built-in voices (its API reference); another server has its own, and no list to ask for.
OPENAI_VOICES = (
    "alloy",
    "ash",
    "ballad",
    "coral",
    "echo",
    "fable",
    "nova",
    "onyx",
    "sage",
    "shimmer",
    "verse",
    "marin",
    "cedar",
)
VOICE_SETTING = notice("the persona's voice settings")
_PARAM = re.compile(r"""["']param["']\s*:\s*["'](\w+)["']""")
_MESSAGE = re.compile(r"""["']message["']\s*:\s*(["'])(.*?)(?<!\\)\1""", re.S)


class OpenAISpeechEngine:
    """Speech from one OpenAI-compatible server (`api_base`, e.g. http://192.168.1.5:8880/v1; "" is
    OpenAI itself) and model. The key comes by reference (providers/secrets.py: "${ENV}", "keyring:..."),
    is sent only to that server, and never appears in a message."""

    name: EngineName = "openai"
    pitch_supported = False  # the API has no pitch
    max_input_chars = MAX_INPUT_CHARS

    def __init__(
        self,
        api_base: str = "",
        model: str = "",
        api_key_ref: str = "",
        *,
        connect_timeout_s: float = 3.0,
        read_timeout_s: float = 60.0,
    ) -> None:
        self.api_base = checked_address(api_base, "OpenAI-compatible speech") if api_base.strip() else ""
        self.model = model.strip() or DEFAULT_MODEL
        self.api_key_ref = api_key_ref
        self._timeout = httpx.Timeout(read_timeout_s, connect=connect_timeout_s)

    def voices(self) -> list[VoiceInfo]:
        """OpenAI's voices; a server of another kind names its own in its documentation."""
        if self.api_base:
            return []
        return [
            VoiceInfo(engine="openai", id=v, label=v.capitalize(), language="multi") for v in OPENAI_VOICES
        ]

    def close(self) -> None:
        """Nothing held: LiteLLM keeps its own clients."""

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio:
        if not has_words(text):
            return silence(OPENAI_RATE)
        voice = settings.voice.strip() or DEFAULT_VOICE
        parts = pieces(text, lambda piece: len(piece) <= self.max_input_chars)
        return joined([self._speak(part, voice, settings.speed) for part in parts])

    def _speak(self, text: str, voice: str, speed: float) -> Audio:
        lib = import_litellm()
        kwargs: dict[str, Any] = {
            "model": litellm_model(self.model, self.api_base),
            "input": text,
            "voice": voice,
            "response_format": "wav",
            "speed": speed,
            "timeout": self._timeout,
            "max_retries": 0,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        try:
            key = api_key_for(
                kwargs["model"], api_base=self.api_base, reference=self.api_key_ref, setting=VOICE_SETTING
            )
            if key:
                kwargs["api_key"] = key
            answer = lib.speech(**kwargs)
            data = answer.content
        except Exception as exc:
            raise self._failed(exc, voice=voice, length=len(text)) from None
        return wav_audio(data, self.where())

    def where(self) -> str:
        return masked_url(self.api_base) if self.api_base else "OpenAI"

    def _failed(self, exc: BaseException, *, voice: str, length: int) -> VoiceError:
        return voice_failure(exc, where=self.where(), model=self.model, voice=voice, length=length)


def litellm_model(model: str, api_base: str) -> str:
    """The model as LiteLLM routes it: a server of one's own speaks OpenAI's API ("openai/<model>"), unless
    the name already says which provider."""
    return f"openai/{model}" if api_base and "/" not in model else model


def voice_failure(
    exc: BaseException, *, where: str, model: str, voice: str = "", length: int = 0
) -> VoiceError:
    """What LiteLLM raised, as one sentence: the voice or the text the server refused, or the transport's
    and the server's failures as the model providers word them (never a traceback, never the key)."""
    if isinstance(exc, VoiceError):
        return exc
    chain = cause_chain(exc)
    text = " ".join(str(e) for e in chain)
    status = next(
        (s for e in chain if isinstance(s := getattr(e, "status_code", None), int) and s >= 400), None
    )
    param = _PARAM.search(text)
    said = _MESSAGE.search(text)
    problem = clipped(said.group(2) if said else "", 200)
    if status == 400 and param and param.group(1) == "voice":
        return VoiceError(
            notice("{server} has no voice {voice}: {problem}", server=where, voice=voice, problem=problem),
            hint=notice("Choose a voice the server offers in {setting}.", setting=VOICE_SETTING),
        )
    if (status == 400 and param and param.group(1) == "input") or "string_too_long" in text:
        return VoiceError(
            notice(
                "{server} refused a text of {count} characters as too long: {problem}",
                server=where,
                count=length,
                problem=problem,
            )
        )
    if isinstance(exc, NexusArkError):  # the key is missing (providers/secrets.py words it)
        return VoiceError(exc.message, hint=exc.hint)
    down = notice("No server is running at {address}.", address=where) if "://" in where else ""
    failed = translate(exc, Origin(server=where, model=model, setting=VOICE_SETTING, down=down))
    return VoiceError(failed.message, hint=failed.hint)
