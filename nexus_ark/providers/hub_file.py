"""Which file a model download fetches, and from where: a file of a Hugging Face repository at a pinned
revision (HubFile), from the Hub or the mirror HF_ENDPOINT names; and the errors a download ends in."""

from __future__ import annotations

import os
from typing import ClassVar

from pydantic import BaseModel, Field, field_validator

from nexus_ark.errors import NexusArkError

DEFAULT_ENDPOINT = "https://huggingface.co"


class DownloadError(NexusArkError):
    """A model download that could not finish; what is on disk is kept unless it is known to be wrong."""


class DownloadCancelled(DownloadError):
    """The person stopped it; the part file stays, so the next attempt goes on from there."""


class HubFile(BaseModel):
    """One file of a Hugging Face repository at a pinned revision, with what it must hash to."""

    repo: str = Field(min_length=3, pattern=r"^[\w.-]+/[\w.-]+$")
    file: str = Field(min_length=1)
    revision: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(gt=0)
    # The kinds of file a download may be (a voice's catalogue, nexus_ark/voice/catalogue.py, widens it).
    suffixes: ClassVar[tuple[str, ...]] = (".gguf",)

    @field_validator("file")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        # The file lands in models/ under this name: no folders, no way out of it.
        if "/" in value or "\\" in value or value.startswith(".") or not value.endswith(cls.suffixes):
            raise ValueError(f"{value!r} is not a plain {' or '.join(cls.suffixes)} file name")
        return value

    def url(self, endpoint: str | None = None) -> str:
        base = (endpoint or hub_endpoint()).rstrip("/")
        return f"{base}/{self.repo}/resolve/{self.revision}/{self.file}"


def hub_endpoint() -> str:
    """The Hub, or the mirror HF_ENDPOINT names (huggingface_hub's variable: one setting serves both)."""
    return os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT
