"""Errors a person can read: each names the file, field or value at fault and what to do next.

The message and hint are notices (nexus_ark.notices) wherever the words are ours: the CLI prints them
in English as they are, the window shows them in the person's language (ui.i18n.tr_error)."""

from __future__ import annotations

from nexus_ark.notices import joined


class NexusArkError(Exception):
    """Base for every error we show to a person (CLI prints it, the window puts it in a dialog)."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        # The message, then the hint on its own line; a Joined keeps both parts' notices (so an error
        # carried as text, e.g. a failed turn's error, can still be shown translated).
        return joined((self.message, self.hint), "\n") if self.hint else self.message


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


class ProviderError(ModelError):
    """A model backend failed. `transient` errors may succeed when retried (after a backoff)."""

    transient = False


class ProviderUnavailableError(ProviderError):
    """The server cannot be reached (not running, wrong address, refused)."""

    transient = True


class ModelNotInstalledError(ProviderError):
    """The server runs but does not have the model asked for."""


class MissingApiKeyError(ProviderError):
    """A provider that needs a key has none configured."""


class ProviderTimeoutError(ProviderError):
    """No first token, or no next token, within the configured time."""

    transient = True


class ProviderProtocolError(ProviderError):
    """The server answered with something that is not the documented wire format."""


class ProviderHTTPError(ProviderError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, *, status: int, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.status = status
        # 408/425/429 and 5xx are worth another try; 4xx mean the request itself is wrong.
        self.transient = status in (408, 425, 429) or status >= 500


class StructuredOutputError(ModelError):
    """The model's answer did not validate against the requested schema, even after a repair attempt."""


class ToolsUnsupportedError(ProviderHTTPError):
    """The server refused a request because the model cannot call tools (Ollama answers HTTP 400
    "... does not support tools"). The request can be sent again without them."""
