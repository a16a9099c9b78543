"""API keys by reference, never in plain text in a settings file.

A reference is "${ENV_VAR}" (read from the environment) or "keyring:SERVICE/NAME" (the OS keyring:
Keychain, Windows Credential Locker, Secret Service). An empty reference falls back to the provider's usual
environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), which LiteLLM reads by itself.
"""

from __future__ import annotations

import os

from nexus_ark.errors import ConfigError, MissingApiKeyError
from nexus_ark.model_config import env_reference
from nexus_ark.notices import notice
from nexus_ark.providers.failures import PERSONA_SETTING

KEYRING_SERVICE = "nexus-ark"
# Providers whose models need a key, and the variable LiteLLM reads for each.
PROVIDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
}


def resolve_key(
    reference: str, *, provider: str = "", required: bool = False, setting: str = PERSONA_SETTING
) -> str | None:
    """The key a reference points at, or None where there is none (and none is required). `setting`
    names where the person enters the key."""
    key: str | None = None
    if env := env_reference(reference):
        key = os.environ.get(env) or None
        source = notice("the environment variable {name}", name=env)
    elif reference.startswith("keyring:"):
        service, _, name = reference.removeprefix("keyring:").partition("/")
        key = _keyring_get(service or KEYRING_SERVICE, name)
        source = notice("the OS keyring entry {entry}", entry=f"{service}/{name}")
    else:
        env = PROVIDER_KEY_ENV.get(provider, "")
        key = os.environ.get(env) if env else None
        source = notice("the environment variable {name}", name=env) if env else notice("the model settings")
    if required and not key:
        raise MissingApiKeyError(
            notice(
                "The API key for provider {provider} is missing (looked in {source}).",
                provider=provider or notice("this model"),
                source=source,
            ),
            hint=notice("Enter the key in {setting}, or set the environment variable.", setting=setting),
        )
    return key


def api_key_for(model: str, *, api_base: str, reference: str, setting: str = PERSONA_SETTING) -> str | None:
    """The key to send to a LiteLLM model: required by the big providers, not by a local server (whose
    OpenAI client still insists on one)."""
    provider = provider_of(model)
    needs_key = provider in PROVIDER_KEY_ENV and not api_base
    key = resolve_key(reference, provider=provider, required=needs_key, setting=setting)
    return key or ("not-needed" if api_base else None)


def provider_of(model: str) -> str:
    """ "anthropic/claude-…" → "anthropic"; a bare model name is OpenAI's, as LiteLLM reads it."""
    return model.split("/", 1)[0] if "/" in model else "openai"


def store_key(service_name: str, key: str) -> str:
    """Save a key in the OS keyring and return the reference to put in settings."""
    import keyring

    try:
        keyring.set_password(KEYRING_SERVICE, service_name, key)
    except Exception as exc:  # keyring raises backend-specific errors
        raise ConfigError(
            notice("The OS keyring refused to store the key: {problem}.", problem=str(exc)),
            hint=notice("Use an environment variable reference (${{OPENAI_API_KEY}}) instead."),
        ) from exc
    return f"keyring:{KEYRING_SERVICE}/{service_name}"


def _keyring_get(service: str, name: str) -> str | None:
    try:
        import keyring

        return keyring.get_password(service, name)
    except Exception:
        return None
