"""The app's two files in the data directory, kept apart as qutebrowser keeps its config and its state:
config.toml holds the person's preferences (they may edit it by hand; it carries a schema version), and
state.toml holds what the app remembers for itself (the last persona, the notices closed, the shipped
personas already copied). Choosing a persona writes state.toml only, never the person's config.toml."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nexus_ark.config.toml_files import one_line_name, problem_list, save_toml_model
from nexus_ark.errors import ConfigError
from nexus_ark.model_config import ModelConfig, is_key_reference
from nexus_ark.notices import notice

# The layout of config.toml this version writes. A file without the field is version 1 (state and
# preferences in one file); nexus_ark/config/versions.py moves an older file forward, and refuses a newer one.
SETTINGS_VERSION = 2


class TranscriptionSettings(BaseModel):
    """[transcription] in config.toml: an OpenAI-compatible speech-to-text server (issue 36), used where no
    downloaded Whisper model knows the language. Unset (model "") until the person names one."""

    model_config = ConfigDict(extra="forbid")

    model: str = ""  # e.g. "whisper-1"; "" = no server
    api_base: str = ""  # e.g. "http://127.0.0.1:8000/v1"; "" = OpenAI itself
    api_key: str = ""  # a reference ("${ENV_VAR}" or "keyring:SERVICE/NAME"), never a key

    @field_validator("api_key")
    @classmethod
    def _key_is_reference(cls, value: str) -> str:
        if not is_key_reference(value):
            raise ValueError(notice('this looks like a plain API key; use "${{ENV_VAR}}" or the OS keyring'))
        return value


class VoiceAppSettings(BaseModel):
    """[voice] in config.toml: how the app hears and sounds, for every persona (issue 36; each persona's own
    voice is its persona.toml [voice]). Settings → Voice writes it."""

    model_config = ConfigDict(extra="forbid")

    # A device as nexus_ark.voice.audio_out.output_devices() / audio_in.input_devices() name it ("NAME, HOST
    # API"; a part of a name works too); "" = the system's default device.
    output_device: str = ""
    input_device: str = ""
    # Each utterance heard is also kept as a WAV file in the data folder's recordings/ (off: no audio is
    # ever written).
    keep_recordings: bool = False
    # Hands-free mode sends what was heard at once; off, it waits in the message box to be sent or edited.
    hands_free_sends: bool = True


class AppSettings(BaseModel):
    """The person's preferences (config.toml). Never secrets: keys live in the OS keyring or ${ENV}."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = SETTINGS_VERSION
    language: Literal["auto", "en", "ja"] = "auto"
    # What the personas call the person (each persona may override it in persona.toml); empty: not told.
    user_name: str = Field(default="", max_length=80)
    stream_coalesce_ms: int = Field(default=40, ge=10, le=500)
    # Defaults for personas whose persona.toml leaves the model spec empty.
    chat_model: ModelConfig = Field(default_factory=lambda: ModelConfig(spec="bundled"))
    # What turns memories into vectors: "bundled" (multilingual-e5-small) or a spec like the models'.
    # Changing it re-embeds every memory in the background, into the new model's own index.
    embedder: ModelConfig = Field(default_factory=lambda: ModelConfig(spec="bundled"))
    internal_model: ModelConfig | None = None
    # Closing the window hides it in the tray (where the desktop has one) and personas keep living;
    # Quit in the tray's menu ends the app.
    keep_running_in_tray: bool = False
    # A desktop notification when a persona writes first (the in-app inbox and the tray badge hold the
    # message either way).
    desktop_notifications: bool = True
    # The window's look: "system" follows the desktop's light or dark mode.
    theme: Literal["system", "light", "dark"] = "system"
    # The text size in points across the app; 0 keeps the desktop's own.
    font_size: int = Field(default=0, ge=0, le=32)
    # Speech to text on a server, where no downloaded Whisper model knows the language.
    transcription: TranscriptionSettings = Field(default_factory=TranscriptionSettings)
    # The audio devices, keeping recordings, hands-free sending.
    voice: VoiceAppSettings = Field(default_factory=VoiceAppSettings)

    @field_validator("user_name")
    @classmethod
    def one_line_user_name(cls, value: str) -> str:
        return one_line_name(value)

    @field_validator("font_size")
    @classmethod
    def readable_size(cls, value: int) -> int:
        if 0 < value < 6:
            raise ValueError(notice("must be 0 (the desktop's size) or 6 to 32 points"))
        return value


class AppState(BaseModel):
    """What the app remembers for itself between runs (state.toml): written by the app, not meant for
    hand editing, and never a preference."""

    model_config = ConfigDict(extra="ignore")

    # The persona the window opened last (the next start opens it again).
    last_persona: str = ""
    # The first-start flow (who you are, which mind) was finished or skipped: it opens by itself no more.
    setup_done: bool = False
    # Shipped personas already copied into this data dir; a persona the user deleted stays deleted.
    seeded_personas: list[str] = Field(default_factory=list)
    # Notices the person closed ("persona|model spec|language"): a persona's model that does not speak
    # its language is said once, not at every start.
    dismissed_advice: list[str] = Field(default_factory=list)


# The keys version 1 kept in config.toml that are state (moved to state.toml by the migration to 2).
STATE_KEYS = tuple(AppState.model_fields)


S = TypeVar("S", AppSettings, AppState)


class SettingsStore(Generic[S]):
    """One settings file's one owner in a process (config.toml's preferences, or state.toml): every change
    goes through `update` under one lock (the window, its workers and the runtimes' threads all change
    them), is validated as a whole, written atomically and then announced to the listeners. Callers on the
    UI thread hand `update` to a worker: it writes a file. `settings` is the one object everyone reads; it
    changes only here."""

    def __init__(self, path: Path, settings: S) -> None:
        self.path = path
        self.settings: S = settings
        self._model: type[S] = type(settings)
        self._lock = threading.RLock()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []

    def update(self, **changes: Any) -> S:
        """Change and save; a bad value raises ConfigError naming it and nothing changes. A name this file
        does not hold is a programming error (a state key given to the preferences, or the reverse)."""
        if not changes:
            return self.settings
        unknown = sorted(set(changes) - set(self._model.model_fields))
        if unknown:
            raise KeyError(f"{self.path.name} holds no {', '.join(unknown)}")
        with self._lock:
            try:
                updated = self._model.model_validate({**self.settings.model_dump(), **changes})
            except ValidationError as exc:
                raise ConfigError(
                    notice("The settings were not saved: {problems}.", problems=problem_list(exc))
                ) from exc
            save_toml_model(self.path, updated)
            for name in changes:
                setattr(self.settings, name, getattr(updated, name))
        for listener in list(self._listeners):
            listener(dict(changes))
        return self.settings

    def change(self, compute: Callable[[S], dict[str, Any]]) -> S:
        """A change computed from the settings as they are, under the lock (two threads adding to a list
        both keep their item)."""
        with self._lock:
            return self.update(**compute(self.settings))

    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """`listener(changes)` after each saved change, on the thread that made it."""
        self._listeners.append(listener)


__all__ = [
    "SETTINGS_VERSION",
    "STATE_KEYS",
    "AppSettings",
    "AppState",
    "SettingsStore",
    "VoiceAppSettings",
]
