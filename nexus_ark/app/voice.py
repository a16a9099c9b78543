"""app.voice: how each persona sounds and how the person is heard (issue 36).

A persona's voice is persona.toml's [voice] table (settings_for / save_settings). synthesizer_for(slug) is
the one way text becomes the persona's speech: the names it knows read as the entity store says (their
`reading`), Markdown, code and URLs left out (voice/speech_text.py), then its engine with its speed and
pitch. The engines are made on first use, kept for the app's life and closed with it (voice/registry.py).
Everything here blocks (a model loads, a server answers): call it off the UI thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from nexus_ark.app.host import AppRoot
from nexus_ark.config import read_toml
from nexus_ark.memory.components import Entity
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import Joined, joined, notice
from nexus_ark.personas.store import Persona, PersonaStore
from nexus_ark.providers.hub_file import DownloadCancelled, DownloadError
from nexus_ark.providers.hub_transfer import OFFLINE_HINT
from nexus_ark.providers.model_download import ProgressFn
from nexus_ark.runtime.autonomy import in_quiet_hours
from nexus_ark.voice.base import (
    Audio,
    EngineName,
    Language,
    Transcriber,
    VoiceError,
    VoiceInfo,
    VoiceSettings,
)
from nexus_ark.voice.catalogue import catalogue_entries, entry_by_id
from nexus_ark.voice.downloads import download_voice, installed_voices, remove_voice, voices_dir
from nexus_ark.voice.registry import Engines
from nexus_ark.voice.remote_transcribe import OpenAITranscriber
from nexus_ark.voice.speech_text import speakable
from nexus_ark.voice.whisper_local import PACKAGED_MODEL_ID, WhisperTranscriber, packaged_model_dir


@dataclass(frozen=True)
class Recogniser:
    """A Whisper model as `voice list` shows it."""

    id: str
    language: str
    installed: bool
    size_bytes: int


T = TypeVar("T")


class VoicePersonas(Protocol):
    """What app.voice asks of app.personas: the folders, and the ways in to a persona's memory."""

    @property
    def store(self) -> PersonaStore: ...

    def load(self, slug: str) -> Persona: ...

    def open_memory(self, slug: str, *, read_only: Literal[True] = True) -> MemoryStore: ...

    def change_memory(self, slug: str, name: str, change: Callable[[MemoryStore], T]) -> T: ...

    def reload(self, slug: str) -> None: ...


def voice_changes(chosen: VoiceSettings, table: Mapping[str, Any]) -> dict[str, Any]:
    """What save_settings writes into [voice]: each value the person chose that is not the default or is
    already written in the file (so a line they wrote stays theirs); an unset engine removes its key."""
    changes: dict[str, Any] = {}
    for name, field in VoiceSettings.model_fields.items():
        value = getattr(chosen, name)
        if value is None:
            changes[name] = None
        elif name in table or value != field.default:
            changes[name] = value
    return {"voice": changes}


class Voice:
    """The app's voice part: given the root's shared objects and the personas part."""

    def __init__(self, root: AppRoot, personas: VoicePersonas) -> None:
        self._root = root
        self._personas = personas
        self.engines = Engines(self.voices_dir)
        self._lock = threading.Lock()
        self._transcribers: dict[str, Transcriber] = {}

    # -- persona.toml [voice] ------------------------------------------------------------------------
    def settings_for(self, slug: str) -> VoiceSettings:
        return self._personas.load(slug).settings.voice

    def save_settings(self, slug: str, settings: VoiceSettings) -> VoiceSettings:
        """Write the persona's [voice] table in place (the person's comments and order kept); an open
        runtime reads it again. A value persona.toml cannot hold is refused naming it: nothing written."""
        persona = self._personas.load(slug)
        table = _voice_table(persona.folder)
        self._personas.store.save_settings(slug, voice_changes(settings, table))
        self._personas.reload(slug)
        return self.settings_for(slug)

    # -- readings of the names the persona knows ----------------------------------------------------
    def readings(self, slug: str) -> dict[str, str]:
        """Each name in the persona's entity store that has a reading, with it (a read-only connection)."""
        memory = self._personas.open_memory(slug, read_only=True)
        try:
            return memory.components.readings()
        finally:
            memory.close()

    def set_reading(self, slug: str, name: str, reading: str) -> Entity:
        """How a name the persona knows is read aloud ("" forgets it), written on the persona's queue."""
        return self._personas.change_memory(
            slug, "reading", lambda memory: memory.components.set_reading(name, reading)
        )

    # -- speaking ------------------------------------------------------------------------------------
    def synthesizer_for(
        self, slug: str, *, engine: EngineName | None = None, voice: str | None = None
    ) -> Callable[[str], Audio]:
        """Text in the persona's voice: speakable text (its known names read as their readings), then its
        engine at its speed and pitch. `engine`/`voice` override the persona's for this synthesizer (the
        terminal's --engine/--voice, the editor's Preview). The engine is made now (kept for the app's
        life; it loads its model at the first sentence); the readings are read now, once."""
        persona = self._personas.load(slug)
        settings = persona.settings.voice
        if engine is not None or voice is not None:
            update: dict[str, Any] = {"voice": voice if voice is not None else ""}
            if engine is not None:
                update["engine"] = engine
            settings = settings.model_copy(update=update)
        speaker = self.engines.engine_for(settings, persona.settings.language)
        readings = self.readings(slug)

        def synthesize(text: str) -> Audio:
            said = speakable(text, readings)
            if not said.strip():  # only code, a link or an emoji: nothing to say
                return Audio(np.zeros(0, dtype=np.float32), 16000)
            return speaker.synthesize(said, settings)

        return synthesize

    def keep_spoken(self, slug: str, reply_id: int, spoken: str) -> None:
        """A reply the person spoke over (hands-free barge-in): what the persona said is the words spoken
        so far, not the rest that streamed unheard. The stored reply becomes them (status 'stopped') and
        so does what recall finds of it, on the persona's queue after the stopped turn has stored it."""

        def keep(memory: MemoryStore) -> None:
            said = spoken.strip()
            message = memory.messages.get(reply_id)
            items = memory.archive.ids_of_source(f"msg:{reply_id}")
            with memory.db.atomic():
                memory.messages.update_content(reply_id, said, status="stopped")
                if said:
                    for item_id in items:
                        memory.archive.update_text(item_id, f"{message.speaker}: {said}")
                else:  # nothing was heard: nothing to recall (a turn indexes no empty reply either)
                    memory.archive.delete_items(items)

        self._personas.change_memory(slug, "keep spoken words", keep)

    def may_speak_first(self, slug: str) -> bool:
        """Whether a message the persona writes first is spoken: only if the person allowed it
        ([voice] speak_first_messages) and never in the persona's quiet hours ([autonomy] quiet_hours)."""
        settings = self._personas.load(slug).settings
        if not settings.voice.speak_first_messages:
            return False
        return not in_quiet_hours(self._root.clock.now().astimezone(), settings.autonomy.quiet_hours)

    # -- listening -----------------------------------------------------------------------------------
    def transcriber(self, language: Language | None = None) -> Transcriber:
        """The recogniser for `language` (made once, kept): the best downloaded Whisper that knows it, else
        the server config.toml's [transcription] names, else the English Whisper a package ships (for
        English, or a language not said), else VoiceError saying how to get one."""
        model_dir = best_whisper(language, [v.folder for v in installed_voices(self.voices_dir())])
        server = self._root.settings.transcription
        if model_dir is None and server.model:
            key = f"openai\n{server.api_base}\n{server.model}\n{server.api_key}"
            return self._kept(key, lambda: OpenAITranscriber(server.api_base, server.model, server.api_key))
        if model_dir is None and language != "ja":
            model_dir = packaged_model_dir()
        if model_dir is None:
            raise VoiceError(
                notice("No installed speech recogniser understands Japanese.")
                if language == "ja"
                else notice("No speech recogniser is installed."),
                hint=notice(
                    "Download one: `nexus-ark voice get whisper-base` (Japanese and English, 148 MB)."
                ),
            )
        return self._kept(str(model_dir), lambda: WhisperTranscriber(model_dir))

    def _kept(self, key: str, make: Callable[[], Transcriber]) -> Transcriber:
        with self._lock:
            found = self._transcribers.get(key)
            if found is None:
                found = self._transcribers[key] = make()
        return found

    # -- the voices to download ----------------------------------------------------------------------
    def voices_dir(self) -> Path:
        """Where `voice get` puts voices and recognisers (<data>/voices/<id>/)."""
        return voices_dir(self._root.layout.root)

    def voices(self) -> list[VoiceInfo]:
        """Every voice to choose from: the offline engines' and the catalogue's (not installed yet)."""
        return self.engines.all_voices()

    def recognisers(self) -> list[Recogniser]:
        """The Whisper models: the one a package ships (English), the catalogue's, downloaded or not."""
        shipped = packaged_model_dir()
        found = []
        if shipped is not None:
            size = sum(f.stat().st_size for f in shipped.iterdir() if f.is_file())
            found.append(Recogniser(PACKAGED_MODEL_ID, "en", True, size))
        installed = {v.id for v in installed_voices(self.voices_dir())}
        for entry in catalogue_entries():
            if entry.kind != "recogniser" or (shipped is not None and entry.id == PACKAGED_MODEL_ID):
                continue  # a voice, or the model the package already ships
            found.append(Recogniser(entry.id, entry.language, entry.id in installed, entry.size_bytes))
        return found

    def get_voice(
        self, voice_id: str, *, progress: ProgressFn | None = None, cancel: threading.Event | None = None
    ) -> Path:
        """Download a catalogue entry (pinned, verified, resumable) and return its folder."""
        entry = entry_by_id(voice_id)
        if entry is None:
            raise VoiceError(
                notice("There is no voice or recogniser {name} in the catalogue.", name=voice_id),
                hint=notice("Known: {known}.", known=", ".join(e.id for e in catalogue_entries())),
            )
        try:
            return download_voice(entry, self.voices_dir(), progress, cancel=cancel)
        except DownloadCancelled:
            raise
        except DownloadError as exc:  # the model downloader's words, less its advice to pick a GGUF instead
            if isinstance(exc.hint, Joined):
                parts = [part for part in exc.hint.parts if part != OFFLINE_HINT]
                raise DownloadError(exc.message, hint=joined(parts, exc.hint.sep)) from exc
            raise

    def remove_voice(self, voice_id: str) -> Path:
        """Delete a downloaded voice or recogniser; the folder it was in."""
        remove_voice(voice_id, self.voices_dir())
        return self.voices_dir() / voice_id

    def close(self) -> None:
        self.engines.close()
        with self._lock:
            transcribers, self._transcribers = list(self._transcribers.values()), {}
        for transcriber in transcribers:
            close = getattr(transcriber, "close", None)
            if callable(close):
                close()


# Downloaded Whisper models, the best first (larger is more accurate; a multilingual one also hears English).
WHISPER_PREFERENCE = (
    "whisper-small",
    "whisper-small.en",
    "whisper-base",
    "whisper-base.en",
    "whisper-tiny",
    "whisper-tiny.en",  # downloaded where no package ships it
)


def best_whisper(language: Language | None, downloaded: list[Path]) -> Path | None:
    """The folder of the best Whisper for `language` among `downloaded` (voices/<id>/ folders); an English-
    only one only when the language is English."""
    by_id = {folder.name: folder for folder in downloaded}
    for model_id in WHISPER_PREFERENCE:
        if model_id in by_id and (language == "en" or not model_id.endswith(".en")):
            return by_id[model_id]
    return None


def _voice_table(folder: Path) -> dict[str, Any]:
    """The [voice] table as the file has it (the keys the person wrote), {} without one."""
    raw = read_toml(folder / "persona.toml").get("voice", {})
    return raw if isinstance(raw, dict) else {}
