"""What the engines reached over HTTP share (VOICEVOX, OpenAI-compatible speech and transcription): the
address checked before anything is sent, a long text cut into pieces a server takes, a WAV answer read
into Audio, and the pieces' audio joined back into one."""

from __future__ import annotations

import io
import re
import struct
from collections.abc import Callable
from urllib.parse import urlsplit

import numpy as np

from nexus_ark.notices import clipped, notice
from nexus_ark.sentences import sentences
from nexus_ark.voice.base import Audio, VoiceError

# Where a piece that is still too long after sentence ends may be cut: after a comma or a space.
_SOFT_BREAK = re.compile(r"(?<=[、，,;；:：])|(?<=\s)")


def checked_address(api_base: str, engine: str) -> str:
    """`api_base` without its trailing slash, refused in words unless it is an http(s) address with a host
    (a typo would otherwise reach wherever the HTTP client makes of it)."""
    address = api_base.strip().rstrip("/")
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise VoiceError(
            notice(
                "The {engine} address {address} is not an http:// or https:// address.",
                engine=engine,
                address=clipped(api_base),
            ),
            hint=notice("Set the address in the persona's voice settings, e.g. http://127.0.0.1:50021."),
        )
    return address


def pieces(text: str, fits: Callable[[str], bool]) -> list[str]:
    """`text` in pieces that each `fits`, cut at sentence ends, then after commas and spaces, and only
    where a run of text has neither, inside it. Nothing is lost: the pieces, joined, are the text."""
    if fits(text):
        return [text]
    out: list[str] = []
    for part in _fitting(sentences(text), fits, _soft_parts):
        if out and fits(out[-1] + part):
            out[-1] += part  # short sentences travel together: fewer requests
        else:
            out.append(part)
    return out


def _fitting(parts: list[str], fits: Callable[[str], bool], split: Callable[[str], list[str]]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if fits(part) or len(part) <= 1:
            out.append(part)
            continue
        smaller = split(part)
        out.extend(_fitting(smaller if len(smaller) > 1 else _halves(part), fits, _halves))
    return out


def _soft_parts(text: str) -> list[str]:
    return [p for p in _SOFT_BREAK.split(text) if p]


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def wav_audio(data: bytes, where: str) -> Audio:
    """A WAV (or another format libsndfile reads) as mono float32; anything else refused in words."""
    import soundfile

    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:  # libsndfile's errors: not audio, or a format it cannot read
        raise VoiceError(
            notice(
                "{server} answered with something that is not audio ({size} bytes): {problem}",
                server=where,
                size=len(data),
                problem=str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
            )
        ) from exc
    if not len(samples):
        # A server that streams its WAV writes the header before it knows the length: OpenAI writes
        # 0xFFFFFFFF (libsndfile reads to the end), one that streams through libsndfile writes 0.
        samples, rate = _unsized_pcm16(data) or (samples, rate)
    mono = samples.mean(axis=1) if samples.shape[1] > 1 else samples[:, 0]
    return Audio(np.ascontiguousarray(mono, dtype=np.float32), int(rate))


def _unsized_pcm16(data: bytes) -> tuple[np.ndarray, int] | None:
    """The 16-bit PCM of a WAV whose data chunk says 0 bytes: every byte after the chunk's header."""
    at, channels, rate = 12, 0, 0
    while at + 8 <= len(data):
        kind, size = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "little")
        if kind == b"fmt " and size >= 16:
            fmt, channels, rate = struct.unpack("<HHI", data[at + 8 : at + 16])
            bits = int.from_bytes(data[at + 22 : at + 24], "little")
            if fmt != 1 or bits != 16 or not channels:
                return None
        elif kind == b"data" and channels:
            pcm = data[at + 8 :]
            pcm = pcm[: len(pcm) // (2 * channels) * 2 * channels]
            frames = np.frombuffer(pcm, dtype="<i2").reshape(-1, channels)
            return frames.astype(np.float32) / 32768.0, rate
        at += 8 + size + (size & 1)
    return None


def joined(parts: list[Audio]) -> Audio:
    """The audio of a text's pieces, one after another, at the first piece's rate (a server keeps one rate
    for a voice; a piece at another is brought to it)."""
    rate = parts[0].rate
    return Audio(np.concatenate([_at_rate(p, rate) for p in parts]).astype(np.float32), rate)


def _at_rate(audio: Audio, rate: int) -> np.ndarray:
    if audio.rate == rate or not len(audio.samples):
        return audio.samples
    count = round(len(audio.samples) * rate / audio.rate)
    old = np.arange(len(audio.samples)) / audio.rate
    return np.interp(np.arange(count) / rate, old, audio.samples).astype(np.float32)
