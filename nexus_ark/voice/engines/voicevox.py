"""VOICEVOX and AivisSpeech: speech engines the person runs, spoken to over their HTTP API (issue 36).

The API, as VOICEVOX ENGINE's FastAPI routes define it (AivisSpeech Engine keeps the same routes):
GET /speakers lists characters, each with styles; a style's id is a voice. POST /audio_query?text=&speaker=
answers a query (accent phrases of moras, speedScale, pitchScale, volumeScale, outputSamplingRate, ...);
POST /synthesis?speaker= with that query as JSON answers a WAV. Refusals: VOICEVOX answers a style it does
not have with 422 {"message": "指定されたスタイルが見つかりませんでした。"}, AivisSpeech with 404
{"detail": "スタイル 123 は存在しません。"}, FastAPI's own checks with 422 {"detail": [...]}.

The text goes in the query string, and uvicorn's h11 (which both engines run) refuses a request head it
has to buffer past 16 KiB: a long text is sent in pieces cut at sentence ends, and their audio joined.

Pitch: a persona's pitch is in semitones; the engines read pitchScale differently, and /engine_manifest's
supported_features.adjust_mora_pitch tells which reading a server has:
- VOICEVOX multiplies each mora's pitch, the natural log of its F0, by 2**pitchScale. A shift of s
  semitones adds s·ln2/12 to log F0, so pitchScale = log2(1 + s·ln2 / (12·L)), L the query's mean voiced
  mora pitch: exact at the mean, within a few cents across a sentence.
- AivisSpeech (Style-Bert-VITS2, no mora pitch) scales F0 by 1 + pitchScale: pitchScale = 2**(s/12) - 1
  (its API notes that any value but 0 costs quality). Its intonationScale means the style's emotional
  strength, not VOICEVOX's intonation: left as the engine sets it, as every field this client does not own.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any
from urllib.parse import quote

import httpx

from nexus_ark.notices import clipped, notice
from nexus_ark.voice.base import Audio, EngineName, VoiceError, VoiceInfo, VoiceSettings
from nexus_ark.voice.engines.common import has_words, silence
from nexus_ark.voice.engines.http_audio import checked_address, joined, pieces, wav_audio

DEFAULT_API_BASE = "http://127.0.0.1:50021"  # VOICEVOX; AivisSpeech listens on 10101
DEFAULT_RATE = 24000  # VOICEVOX's output rate (AivisSpeech's is 44100): the rate of silence
# The text's share of the request line, percent-encoded (uvicorn's h11 refuses request heads over 16 KiB).
MAX_QUERY_BYTES = 8000
CONNECT_TIMEOUT_S = 2.0
SYNTHESIS_TIMEOUT_S = 60.0  # a long sentence on a slow CPU


class VoicevoxEngine:
    """A VOICEVOX or AivisSpeech engine at one address: nothing is ever sent elsewhere (the client ignores
    proxy settings and follows no redirects)."""

    name: EngineName = "voicevox"
    pitch_supported = True  # in semitones, converted to the engine's pitchScale (above)
    max_query_bytes = MAX_QUERY_BYTES

    def __init__(
        self,
        api_base: str | None = None,
        *,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        read_timeout_s: float = SYNTHESIS_TIMEOUT_S,
    ) -> None:
        self.api_base = checked_address(api_base or DEFAULT_API_BASE, "VOICEVOX")
        self._timeout = httpx.Timeout(read_timeout_s, connect=connect_timeout_s)
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._mora_pitch: bool | None = None  # from /engine_manifest, asked once

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def voices(self) -> list[VoiceInfo]:
        return [
            VoiceInfo(engine="voicevox", id=str(style_id), label=label, language="ja")
            for style_id, label in self._styles()
        ]

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio:
        if not has_words(text):
            return silence(DEFAULT_RATE)
        style = self._style_of(settings.voice)
        parts = pieces(text, lambda piece: len(quote(piece)) <= self.max_query_bytes)
        return joined([self._speak(part, style, settings) for part in parts])

    # -- the API -------------------------------------------------------------------------------------

    def _speak(self, text: str, style: int, settings: VoiceSettings) -> Audio:
        query = self._json("POST", "/audio_query", params={"text": text, "speaker": style}, style=style)
        if not isinstance(query, dict):
            raise self._garbled("/audio_query")
        query["speedScale"] = settings.speed
        query["pitchScale"] = self._pitch_scale(query, settings.pitch)
        answer = self._request("POST", "/synthesis", params={"speaker": style}, json_body=query, style=style)
        return wav_audio(answer.content, self._where())

    def _styles(self) -> list[tuple[int, str]]:
        """(style id, "character (style)") for each style that speaks (singing styles cannot read text)."""
        speakers = self._json("GET", "/speakers")
        if not isinstance(speakers, list):
            raise self._garbled("/speakers")
        found: list[tuple[int, str]] = []
        for speaker in speakers:
            for style in speaker.get("styles", []) if isinstance(speaker, dict) else []:
                talks = isinstance(style, dict) and style.get("type", "talk") == "talk"
                if talks and isinstance(style.get("id"), int):
                    found.append((style["id"], f"{speaker.get('name', '?')} ({style.get('name', '?')})"))
        return found

    def _style_of(self, voice: str) -> int:
        """The persona's voice as a style id; "" is the engine's first speaking style."""
        if not voice.strip():
            styles = self._styles()
            if not styles:
                raise VoiceError(notice("{server} offers no voices.", server=self._where()))
            return styles[0][0]
        try:
            return int(voice.strip())
        except ValueError:
            raise VoiceError(
                notice(
                    "The VOICEVOX voice {voice} is not a style id (a number such as 3).",
                    voice=clipped(voice),
                ),
                hint=notice("`nexus-ark voice list` shows the voices of the engine that is running."),
            ) from None

    def _pitch_scale(self, query: dict[str, Any], semitones: float) -> float:
        if not semitones:
            return 0.0
        if not self._scales_mora_pitch():
            return 2 ** (semitones / 12) - 1
        voiced = [p for p in _mora_pitches(query) if p > 0]
        mean = sum(voiced) / len(voiced) if voiced else 5.5  # log F0 of a voice near 245 Hz
        return math.log2(max(1e-3, 1 + semitones * math.log(2) / (12 * mean)))

    def _scales_mora_pitch(self) -> bool:
        if self._mora_pitch is None:
            try:
                manifest = self._json("GET", "/engine_manifest")
            except VoiceError:  # an engine older than the manifest: VOICEVOX's reading
                manifest = {}
            features = manifest.get("supported_features", {}) if isinstance(manifest, dict) else {}
            flag = features.get("adjust_mora_pitch", {}) if isinstance(features, dict) else {}
            self._mora_pitch = not (isinstance(flag, dict) and flag.get("value") is False)
        return self._mora_pitch

    # -- HTTP ----------------------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    base_url=self.api_base, timeout=self._timeout, trust_env=False, follow_redirects=False
                )
            return self._client

    def _json(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, style: int | None = None
    ) -> Any:
        answer = self._request(method, path, params=params, style=style)
        try:
            return answer.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self._garbled(path) from None

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
        style: int | None = None,
    ) -> httpx.Response:
        try:
            answer = self._http().request(method, path, params=params, json=json_body)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise VoiceError(
                notice("VOICEVOX is not running at {address}.", address=self.api_base),
                hint=notice(
                    "Start VOICEVOX or AivisSpeech (it listens on port 10101), or set the address in the "
                    "persona's voice settings."
                ),
            ) from None
        except httpx.TimeoutException:
            raise VoiceError(notice("{server} did not answer in time.", server=self._where())) from None
        except httpx.HTTPError as exc:
            raise VoiceError(
                notice("The connection to {server} failed: {problem}", server=self._where(), problem=str(exc))
            ) from None
        if answer.status_code >= 400:
            raise self._refused(answer, path, style)
        return answer

    def _refused(self, answer: httpx.Response, path: str, style: int | None) -> VoiceError:
        said = _said(answer)
        if style is not None and answer.status_code == 422 and "サポート" in said:
            # VOICEVOX: "指定されたスタイルはこの機能をサポートしていません。" (a singing style)
            return VoiceError(
                notice(
                    "{server} cannot read text with style id {style}: it is a singing style.",
                    server=self._where(),
                    style=style,
                ),
                hint=notice("`nexus-ark voice list` shows the voices of the engine that is running."),
            )
        if style is not None and answer.status_code in (404, 422) and "スタイル" in said:
            return VoiceError(
                notice("{server} has no voice with style id {style}.", server=self._where(), style=style),
                hint=notice("`nexus-ark voice list` shows the voices of the engine that is running."),
            )
        return VoiceError(
            notice(
                "{server} answered HTTP {status} to {path}: {problem}",
                server=self._where(),
                status=answer.status_code,
                path=path,
                problem=said or answer.reason_phrase,
            )
        )

    def _garbled(self, path: str) -> VoiceError:
        return VoiceError(
            notice(
                "{server} answered {path} with something VOICEVOX does not send.",
                server=self._where(),
                path=path,
            ),
            hint=notice(
                "Another program may answer at that address: check the address in the persona's voice "
                "settings."
            ),
        )

    def _where(self) -> str:
        return notice("The VOICEVOX engine at {address}", address=self.api_base)


def _mora_pitches(query: dict[str, Any]) -> list[float]:
    found: list[float] = []
    for phrase in query.get("accent_phrases") or []:
        for mora in phrase.get("moras") or [] if isinstance(phrase, dict) else []:
            pitch = mora.get("pitch") if isinstance(mora, dict) else None
            if isinstance(pitch, int | float):
                found.append(float(pitch))
    return found


def _said(answer: httpx.Response) -> str:
    """The engine's own words for a refusal: VOICEVOX's {"message": ...}, FastAPI's {"detail": ...} (text,
    or a list of validation errors), or the body's first line."""
    try:
        body = answer.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return clipped(answer.text.strip().splitlines()[0] if answer.text.strip() else "", 200)
    if isinstance(body, dict):
        said = body.get("message") or body.get("detail")
        if isinstance(said, list):
            said = "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in said)
        return clipped(str(said or ""), 200)
    return clipped(str(body), 200)
