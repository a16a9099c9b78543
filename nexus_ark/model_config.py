"""Which model to use, where it runs and how long to wait for it: the settings every layer shares.

Kept at the bottom (no imports from the rest of the core) so app settings and persona settings can both
hold model choices.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nexus_ark.errors import ModelError
from nexus_ark.notices import clipped, notice

BUNDLED = "bundled"
Kind = Literal["bundled", "gguf", "ollama", "litellm"]
SPEC_USAGE = notice('Use "bundled", "gguf:/path/to/model.gguf", "ollama:MODEL" or "litellm:PROVIDER/MODEL".')
_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class ModelSpec(BaseModel):
    kind: Kind
    target: str = ""

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        spec = spec.strip()
        if spec in ("", BUNDLED):
            return cls(kind=BUNDLED)
        kind, sep, target = spec.partition(":")
        if not sep or not target.strip():
            raise ModelError(
                notice("The model setting {spec!r} is not understood.", spec=clipped(spec)), hint=SPEC_USAGE
            )
        if kind not in ("gguf", "ollama", "litellm"):
            raise ModelError(
                notice(
                    "The model backend {kind!r} in {spec!r} is not known.",
                    kind=clipped(kind, 30),
                    spec=clipped(spec),
                ),
                hint=SPEC_USAGE,
            )
        return cls(kind=kind, target=target.strip())

    def __str__(self) -> str:
        return BUNDLED if self.kind == BUNDLED else f"{self.kind}:{self.target}"


def is_key_reference(value: str) -> bool:
    """A key reference is "${ENV_VAR}" or "keyring:SERVICE/NAME" (or empty: the provider's usual variable)."""
    return not value or bool(_ENV_REF.match(value)) or value.startswith("keyring:")


def env_reference(value: str) -> str | None:
    m = _ENV_REF.match(value or "")
    return m.group(1) if m else None


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    connect_s: float = Field(default=5.0, gt=0)
    first_token_s: float = Field(default=120.0, gt=0)
    between_tokens_s: float = Field(default=30.0, gt=0)


class ModelConfig(BaseModel):
    """Which model, where, and how long to wait for it. An empty spec means "the default"."""

    model_config = ConfigDict(extra="forbid")

    spec: str = Field(
        default="", description='"bundled", "gguf:PATH", "ollama:NAME", "litellm:MODEL"; "" = default'
    )
    api_base: str = Field(default="", description="server URL for Ollama or an OpenAI-compatible server")
    api_key: str = Field(
        default="", description='a reference: "${ENV_VAR}" or "keyring:SERVICE/NAME"; never a key'
    )
    context_size: int = Field(default=4096, ge=512, le=262144)
    # llama.cpp only: keep the KV state of recent prompts in RAM, so internal requests (emotion, dreaming)
    # on the same model do not evict the conversation's cached prefix.
    state_cache_mb: int = Field(default=256, ge=0, le=65536)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    # LiteLLM only: how to ask for JSON. "auto": json_schema where LiteLLM knows the provider supports it;
    # for a local OpenAI-compatible server (api_base set) json_object with the schema attached, which
    # llama.cpp's server constrains to; else plain JSON mode. Validation happens in any case.
    structured_output: Literal["auto", "json_schema", "json_object_schema", "json_object"] = "auto"

    @field_validator("spec")
    @classmethod
    def _valid_spec(cls, value: str) -> str:
        if value.strip():
            try:
                ModelSpec.parse(value)
            except ModelError as exc:
                raise ValueError(exc.message) from None
        return value.strip()

    @field_validator("api_base")
    @classmethod
    def _base_is_url(cls, value: str) -> str:
        """A server address is checked when read: "bundled" or "localhost" was accepted and failed only at
        the first message ("Port could not be cast", "Ollama is not running at bundled")."""
        value = value.strip()
        if not value:
            return value
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 (raises ValueError for a port that is not a number 0-65535)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                notice(
                    "not a server address: it starts with http:// or https:// and names a host, "
                    'e.g. "http://127.0.0.1:11434"'
                )
            )
        return value

    @field_validator("api_key")
    @classmethod
    def _key_is_reference(cls, value: str) -> str:
        if not is_key_reference(value):
            raise ValueError(
                notice(
                    'this looks like a plain API key; use "${{ENV_VAR}}" or save it in the OS keyring '
                    "from the model settings"
                )
            )
        return value

    def parsed(self) -> ModelSpec:
        return ModelSpec.parse(self.spec)

    def is_default(self) -> bool:
        return not self.spec

    def pool_key(self) -> tuple[str, ...]:
        """Configs with equal keys may share one backend: every setting a backend is built from is in it
        (a persona with its own timeouts gets its own backend, not the first one's)."""
        return (
            str(self.parsed()),
            *(
                getattr(self, name) if isinstance(getattr(self, name), str) else repr(getattr(self, name))
                for name in ModelConfig.model_fields
                if name != "spec"
            ),
        )
