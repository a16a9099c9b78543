"""The operating system's own voices through pyttsx3 (issue 36): SAPI5 on Windows, NSSpeechSynthesizer on
macOS, eSpeak NG on Linux (Debian: `apt install espeak-ng`).

pyttsx3 speaks to a file with save_to_file + runAndWait; the file is read back (soundfile: a WAV from SAPI5
and eSpeak NG, an AIFF from macOS whatever the name says). What pyttsx3 does not do safely is kept away:
its engine is one per driver in the process and not thread-safe (one lock here serialises every use), and
its eSpeak driver prints "Audio saved to ..." on stdout, which is the command line's answer channel (its
module's print goes to the log instead: redirecting sys.stdout would also take a reply that `chat --speak`
prints on another thread meanwhile). The OS voices take a rate, not semitones: speed is set as pyttsx3's rate
(words a minute), pitch is not applied. eSpeak NG takes a rate on its own thread (pyttsx3 starts it in its
asynchronous mode), and pyttsx3 cancels what that thread has not done yet when a run ends: a rate set just
before speaking was lost (seen here: the second and later rates of a process had no effect). So the engine
drains pyttsx3's queue once when it starts, and waits for the rate to be taken before it speaks.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from nexus_ark.notices import clipped, notice
from nexus_ark.voice.base import Audio, EngineName, Language, VoiceError, VoiceInfo, VoiceSettings
from nexus_ark.voice.engines.common import has_words, silence
from nexus_ark.voice.engines.http_audio import wav_audio

log = logging.getLogger(__name__)

DEFAULT_RATE = 22050  # eSpeak NG's; the rate of silence
_LOCK = threading.Lock()  # pyttsx3 keeps one engine per driver for the whole process


class SystemEngine:
    name: EngineName = "system"
    pitch_supported = False  # the OS voices take no semitones

    def __init__(self, driver: str | None = None) -> None:
        self._driver = driver
        self._engine: Any = None
        self._base_rate: int | None = None

    def close(self) -> None:
        with _LOCK:
            engine, self._engine = self._engine, None
        if engine is not None:
            with contextlib.suppress(Exception):  # a driver that fails to stop has nothing left to lose
                engine.stop()

    def voices(self) -> list[VoiceInfo]:
        """The OS voices for Japanese and English (those a persona can speak)."""
        with _LOCK:
            found = self._voices()
        return [
            VoiceInfo(engine="system", id=vid, label=label, language=lang)
            for vid, label, lang in found
            if lang is not None
        ]

    def synthesize(self, text: str, settings: VoiceSettings) -> Audio:
        if not has_words(text):
            return silence(DEFAULT_RATE)
        with _LOCK, tempfile.TemporaryDirectory(prefix="nexus-ark-voice-") as folder:
            engine = self._ready()
            voice = settings.voice.strip()
            if voice:
                known = [vid for vid, _, _ in self._voices()]
                if voice not in known:
                    raise VoiceError(
                        notice("The system has no voice {voice}.", voice=clipped(voice)),
                        hint=notice("`nexus-ark voice list` shows the system's voices."),
                    )
                engine.setProperty("voice", voice)
            rate = max(1, round((self._base_rate or 200) * settings.speed))
            engine.setProperty("rate", rate)
            _wait_for_rate(engine, rate)
            target = Path(folder) / "speech.wav"
            try:
                engine.save_to_file(text, str(target))
                engine.runAndWait()
                data = target.read_bytes()
            except Exception as exc:  # the OS speech service's own errors
                raise VoiceError(
                    notice("The system voice could not speak: {problem}", problem=_first_line(exc))
                ) from None
        return wav_audio(data, notice("The system voice"))

    def _ready(self) -> Any:
        if self._engine is None:
            try:
                import pyttsx3

                self._engine = pyttsx3.init(self._driver) if self._driver else pyttsx3.init()
            except Exception as exc:  # no speech service, or its library missing (libespeak on Linux)
                raise VoiceError(
                    notice("This system offers no voice of its own: {problem}", problem=_first_line(exc)),
                    hint=notice(
                        "On Linux, install eSpeak NG (Debian and Ubuntu: apt install espeak-ng); or choose "
                        "another voice engine in the persona's voice settings."
                    ),
                ) from None
            _quiet_driver()
            self._engine.runAndWait()  # an empty run: later commands run at once, not at the next run
            self._base_rate = int(self._engine.getProperty("rate") or 200)
        return self._engine

    def _voices(self) -> list[tuple[str, str, Language | None]]:
        engine = self._ready()
        found: list[tuple[str, str, Language | None]] = []
        for voice in engine.getProperty("voices") or []:
            found.append((str(voice.id), str(voice.name), _language(getattr(voice, "languages", None) or [])))
        return found


def _language(languages: list[Any]) -> Language | None:
    """Japanese or English from a voice's languages (eSpeak: "en-gb"; SAPI5 and macOS: "en_US", or bytes)."""
    for lang in languages:
        code = (lang.decode(errors="ignore") if isinstance(lang, bytes) else str(lang)).lstrip("\x05").lower()
        if code.startswith("ja"):
            return "ja"
        if code.startswith("en"):
            return "en"
    return None


def _quiet_driver() -> None:
    """pyttsx3's eSpeak driver calls print() for each file it saves: that module's print logs instead."""
    module = sys.modules.get("pyttsx3.drivers.espeak")
    if module is not None:
        module.print = _log_print  # type: ignore[attr-defined]  # shadows the builtin for that module only


def _log_print(*args: object, **_: object) -> None:
    log.debug("pyttsx3: %s", " ".join(str(a) for a in args))


def _wait_for_rate(engine: Any, rate: int, timeout_s: float = 0.3) -> None:
    """Until the speech service has taken the rate (eSpeak NG: milliseconds), at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):  # a driver that cannot say its rate: nothing to wait for
            if abs(float(engine.getProperty("rate")) - rate) <= 1:
                return
        time.sleep(0.005)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
