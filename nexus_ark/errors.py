"""Errors a person can read: each names the file, field or value at fault and what to do next."""

from __future__ import annotations


class NexusArkError(Exception):
    """Base for every error we show to a person (CLI prints it, the window puts it in a dialog)."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class ConfigError(NexusArkError):
    """A settings file (config.toml, persona.toml) cannot be read or does not validate."""


class DataDirError(NexusArkError):
    """The data directory cannot be created or written."""


class InstanceLockedError(NexusArkError):
    """Another Nexus Ark process already holds the data directory."""


class PersonaError(NexusArkError):
    """A persona folder is missing or unusable."""


class ModelError(NexusArkError):
    """A model cannot be found, loaded or run."""


class DatabaseError(NexusArkError):
    """A memory database cannot be opened or is from a newer version."""
