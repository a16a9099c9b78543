"""A VOICEVOX engine on 127.0.0.1 that speaks: the real engine's routes and refusals, real Japanese speech.

No VOICEVOX engine installs here (it ships as a desktop app with its own runtime), so the VOICEVOX client
is tested against this server, built like the real one: FastAPI on uvicorn (so the request-line limit and
FastAPI's 422 validation answers are the real ones), the routes the client uses with the real shapes
(voicevox_engine/app/routers: /version, /engine_manifest, /speakers, /audio_query, /synthesis), and the
real refusals: a style the engine lacks is 422 {"message": "指定されたスタイルが見つかりませんでした。"}
(global_exceptions.py, CoreStyleIdError), a singing style asked to read text is 422 "指定されたスタイルは
この機能をサポートしていません。". With `aivis=True` it answers as AivisSpeech Engine does: its manifest
says it cannot adjust mora pitch, an unknown style is 404 {"detail": "スタイル N は存在しません。"},
output at 44.1 kHz.

The audio is speech: /audio_query reads the text into moras with pyopenjtalk (katakana, accent phrases cut
at punctuation, each voiced mora's pitch a log F0 as VOICEVOX gives it), and /synthesis speaks the query's
moras with pyopenjtalk's HTS voice, applying the query as the real engine does: speedScale, the moras'
pitch after pitchScale (mora.pitch *= 2**pitchScale; the mean shift in log F0 becomes OpenJTalk's
half-tone shift), volumeScale, pre/postPhonemeLength, outputSamplingRate and outputStereo.
"""

from __future__ import annotations

import io
import math
import threading
from typing import Annotated, Any

import numpy as np
import soundfile
from fastapi import Body, FastAPI, Query
from fastapi.responses import JSONResponse, Response

from tests.integration.asgi_loopback import AsgiLoopback

SPEAKERS: list[dict[str, Any]] = [
    {
        "name": "四国めたん",
        "speaker_uuid": "7ffcb7ce-00ec-4bdc-82cd-45a8889e43ff",
        "styles": [
            {"name": "ノーマル", "id": 2, "type": "talk"},
            {"name": "あまあま", "id": 0, "type": "talk"},
        ],
        "version": "0.15.1",
        "supported_features": {"permitted_synthesis_morphing": "SELF_ONLY"},
    },
    {
        "name": "ずんだもん",
        "speaker_uuid": "388f246b-8c41-4ac1-8e2d-5d79f3ff56d9",
        "styles": [{"name": "ノーマル", "id": 3, "type": "talk"}],
        "version": "0.15.1",
        "supported_features": {"permitted_synthesis_morphing": "SELF_ONLY"},
    },
    {
        "name": "波音リツ",
        "speaker_uuid": "b1a81618-b27b-40d2-b0ea-27a9ad408c4b",
        "styles": [{"name": "クイーン", "id": 6000, "type": "frame_decode"}],
        "version": "0.15.1",
        "supported_features": {"permitted_synthesis_morphing": "NOTHING"},
    },
]
TALK_STYLES = {s["id"] for sp in SPEAKERS for s in sp["styles"] if s["type"] == "talk"}
ALL_STYLES = {s["id"] for sp in SPEAKERS for s in sp["styles"]}
BASE_PITCH = 5.6  # log F0 of a high mora (270 Hz); a low one is 0.25 lower
_SMALL = set("ャュョァィゥェォヮ")
_PAUSES = set("、。！？!?，,．.「」『』…")
_VOWELS = {"ア": "a", "イ": "i", "ウ": "u", "エ": "e", "オ": "o", "ン": "N", "ッ": "cl"}


def moras_of(kana: str) -> list[list[str]]:
    """Katakana in accent phrases (cut at punctuation) of moras (a small kana joins the one before)."""
    phrases: list[list[str]] = [[]]
    for ch in kana:
        if ch in _PAUSES:
            if phrases[-1]:
                phrases.append([])
        elif ch in _SMALL and phrases[-1]:
            phrases[-1][-1] += ch
        else:
            phrases[-1].append(ch)
    return [p for p in phrases if p]


def _mora(text: str, high: bool) -> dict[str, Any]:
    vowel = _VOWELS.get(text, "a")
    voiced = vowel not in ("cl",)
    return {
        "text": text,
        "consonant": None,
        "consonant_length": None,
        "vowel": vowel,
        "vowel_length": 0.1,
        "pitch": (BASE_PITCH if high else BASE_PITCH - 0.25) if voiced else 0.0,
    }


def _resampled(samples: np.ndarray, rate: int, to: int) -> np.ndarray:
    if rate == to:
        return samples
    count = round(len(samples) * to / rate)
    return np.interp(np.arange(count) / to, np.arange(len(samples)) / rate, samples)


class VoicevoxStandIn:
    """Serves on a free port of 127.0.0.1 from construction until stop(). `queries` holds each query
    /synthesis received (what the client asked for); `stall_s` > 0 makes /synthesis wait that long before
    answering (an engine busy or hung)."""

    def __init__(self, *, aivis: bool = False) -> None:
        self.aivis = aivis
        self.rate = 44100 if aivis else 24000
        self.queries: list[dict[str, Any]] = []
        self.stall_s = 0.0
        self._release = threading.Event()
        self._loopback = AsgiLoopback(self._app(), "VOICEVOX")
        self.url = self._loopback.url

    def stop(self) -> None:
        self._release.set()
        self._loopback.stop()

    def _unknown_style(self, style: int) -> JSONResponse:
        if self.aivis:
            return JSONResponse(status_code=404, content={"detail": f"スタイル {style} は存在しません。"})
        return JSONResponse(
            status_code=422, content={"message": "指定されたスタイルが見つかりませんでした。"}
        )

    def _refusal(self, style: int) -> JSONResponse | None:
        if style not in ALL_STYLES:
            return self._unknown_style(style)
        if style not in TALK_STYLES:
            return JSONResponse(
                status_code=422, content={"message": "指定されたスタイルはこの機能をサポートしていません。"}
            )
        return None

    def _app(self) -> FastAPI:
        app = FastAPI()

        def version() -> str:
            return "0.24.1"

        def engine_manifest() -> dict[str, Any]:
            return {
                "manifest_version": "0.13.1",
                "name": "AivisSpeech Engine" if self.aivis else "VOICEVOX ENGINE",
                "brand_name": "AivisSpeech" if self.aivis else "VOICEVOX",
                "port": 10101 if self.aivis else 50021,
                "default_sampling_rate": self.rate,
                "supported_features": {
                    "adjust_mora_pitch": {
                        "type": "bool",
                        "value": not self.aivis,
                        "name": "モーラごとの音高の調整",
                    },
                    "adjust_pitch_scale": {"type": "bool", "value": True, "name": "全体の音高の調整"},
                },
            }

        def speakers() -> list[dict[str, Any]]:
            return SPEAKERS

        def audio_query(text: str, speaker: int) -> dict[str, Any] | JSONResponse:
            return self._refusal(speaker) or self._query(text)

        def synthesis(
            query: Annotated[dict[str, Any], Body()], speaker: Annotated[int, Query()]
        ) -> Response | JSONResponse:
            refused = self._refusal(speaker)
            if refused is not None:
                return refused
            self.queries.append(query)
            if self.stall_s:
                self._release.wait(self.stall_s)
            return Response(content=self._speak(query), media_type="audio/wav")

        app.add_api_route("/version", version, methods=["GET"])
        app.add_api_route("/engine_manifest", engine_manifest, methods=["GET"])
        app.add_api_route("/speakers", speakers, methods=["GET"])
        app.add_api_route("/audio_query", audio_query, methods=["POST"], response_model=None)
        app.add_api_route("/synthesis", synthesis, methods=["POST"], response_model=None)
        return app

    def _query(self, text: str) -> dict[str, Any]:
        import pyopenjtalk

        kana = pyopenjtalk.g2p(text, kana=True)
        phrases = [
            {
                "moras": [_mora(m, high=i > 0) for i, m in enumerate(phrase)],
                "accent": 1,
                "pause_mora": {"text": "、", "vowel": "pau", "vowel_length": 0.3, "pitch": 0.0},
                "is_interrogative": False,
            }
            for phrase in moras_of(kana)
        ]
        return {
            "accent_phrases": phrases,
            "speedScale": 1.0,
            "pitchScale": 0.0,
            "intonationScale": 1.0,
            "volumeScale": 1.0,
            "prePhonemeLength": 0.1,
            "postPhonemeLength": 0.1,
            "pauseLength": None,
            "pauseLengthScale": 1.0,
            "outputSamplingRate": self.rate,
            "outputStereo": False,
            "kana": kana,
        }

    def _speak(self, query: dict[str, Any]) -> bytes:
        """The query's moras spoken by OpenJTalk, the query's settings applied as the engine applies them."""
        import pyopenjtalk

        phrases = query.get("accent_phrases") or []
        text = "、".join("".join(m["text"] for m in p["moras"]) for p in phrases)
        scale = float(query.get("pitchScale", 0.0))
        voiced = [m["pitch"] for p in phrases for m in p["moras"] if m["pitch"] > 0]
        # The mean log F0 the moras had, and have once pitchScale multiplies them: the shift in half tones.
        shift = (
            (np.mean(voiced) * (2**scale - 1) if voiced else 0.0) if not self.aivis else math.log(1 + scale)
        )
        half_tones = 12 * shift / math.log(2)
        rate = 48000
        samples = np.zeros(0)
        if text:
            wave, rate = pyopenjtalk.tts(
                text, speed=float(query.get("speedScale", 1.0)), half_tone=half_tones
            )
            samples = wave / 32768.0
        samples = samples * float(query.get("volumeScale", 1.0))
        pad = [
            np.zeros(round(float(query.get(k, 0.1)) * rate))
            for k in ("prePhonemeLength", "postPhonemeLength")
        ]
        samples = np.concatenate([pad[0], samples, pad[1]])
        out_rate = int(query.get("outputSamplingRate", self.rate))
        samples = np.clip(_resampled(samples, rate, out_rate), -1, 1)
        if query.get("outputStereo"):
            samples = np.stack([samples, samples], axis=1)
        buffer = io.BytesIO()
        soundfile.write(buffer, samples, out_rate, format="WAV", subtype="PCM_16")
        return buffer.getvalue()
