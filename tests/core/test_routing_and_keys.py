"""Per-purpose model routing and API keys by reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.config import save_toml_model
from nexus_ark.errors import ConfigError, MissingApiKeyError
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.providers.secrets import resolve_key, store_key


@pytest.fixture
def app(tmp_path: Path, shipped_copy: Path):
    made: list[ModelConfig] = []

    def factory(config: ModelConfig):
        made.append(config)
        return ScriptedBackend(["ok"], model_id=str(config.parsed()))

    core = NexusApp(tmp_path / "data", backend_factory=factory, shipped_personas=shipped_copy).open()
    core.made = made  # type: ignore[attr-defined]
    yield core
    core.close()


def _write(folder: Path, text: str) -> None:
    (folder / "persona.toml").write_text(text, encoding="utf-8")


def test_internal_defaults_to_the_chat_model(app: NexusApp) -> None:
    persona = app.personas.load("aria")
    assert app.models.model_config(persona, "chat").spec == "bundled"
    assert app.models.model_config(persona, "internal") == app.models.model_config(persona, "chat")


def test_persona_routes_internal_work_elsewhere(app: NexusApp) -> None:
    folder = app.personas.load("aria").folder
    _write(
        folder,
        'name = "Aria"\n[model]\nspec = "ollama:qwen2.5:7b"\napi_base = "http://127.0.0.1:11434"\n'
        '[internal_model]\nspec = "bundled"\n',
    )
    persona = app.personas.load("aria")
    assert app.models.model_config(persona, "chat").spec == "ollama:qwen2.5:7b"
    assert app.models.model_config(persona, "internal").spec == "bundled"


def test_empty_spec_uses_the_app_default(app: NexusApp) -> None:
    app.settings.chat_model = ModelConfig(spec="litellm:openai/local", api_base="http://127.0.0.1:8000/v1")
    app.settings.internal_model = ModelConfig(spec="bundled")
    save_toml_model(app.layout.config_file, app.settings)
    folder = app.personas.load("aria").folder
    _write(folder, 'name = "Aria"\n[model]\nspec = ""\ncontext_size = 2048\n')
    persona = app.personas.load("aria")
    chat = app.models.model_config(persona, "chat")
    assert (chat.spec, chat.api_base, chat.context_size) == (
        "litellm:openai/local",
        "http://127.0.0.1:8000/v1",
        2048,
    )
    assert app.models.model_config(persona, "internal").spec == "bundled"


def test_personas_on_one_model_share_one_backend(app: NexusApp) -> None:
    a = app.personas.session("aria")
    h = app.personas.session("hikari")
    assert a.backend is h.backend and len(app.made) == 1


def test_save_persona_models_round_trips(app: NexusApp) -> None:
    app.personas.save_models(
        "aria", {"spec": "ollama:llama3.2", "api_base": "http://127.0.0.1:11434"}, ModelConfig(spec="bundled")
    )
    persona = app.personas.load("aria")
    assert persona.settings.model.spec == "ollama:llama3.2"
    assert persona.settings.model.temperature == 0.7, "other settings are kept"
    assert persona.settings.internal_model.spec == "bundled"


def test_plain_key_in_persona_toml_is_refused_with_its_file(app: NexusApp) -> None:
    folder = app.personas.load("aria").folder
    _write(folder, 'name = "Aria"\n[model]\nspec = "litellm:openai/gpt-4o"\napi_key = "sk-abc123"\n')
    with pytest.raises(ConfigError) as err:
        app.personas.load("aria")
    assert "persona.toml" in str(err.value) and "model.api_key" in str(err.value)
    assert "plain API key" in str(err.value)


def test_env_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NX_TEST_KEY", "secret-1")
    assert resolve_key("${NX_TEST_KEY}") == "secret-1"
    monkeypatch.delenv("NX_TEST_KEY")
    with pytest.raises(MissingApiKeyError) as err:
        resolve_key("${NX_TEST_KEY}", provider="openai", required=True)
    assert "NX_TEST_KEY" in str(err.value)


def test_provider_default_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert resolve_key("", provider="openai") == "sk-env"


class _MemoryKeyring:
    """An in-memory keyring backend: this machine has no OS keyring service to talk to."""

    priority = 1

    def __init__(self) -> None:
        self.store: dict[tuple[str, str], str] = {}

    def set_password(self, service: str, user: str, password: str) -> None:
        self.store[(service, user)] = password

    def get_password(self, service: str, user: str) -> str | None:
        return self.store.get((service, user))


def test_keyring_reference_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring

    backend = _MemoryKeyring()
    monkeypatch.setattr(keyring, "set_password", backend.set_password)
    monkeypatch.setattr(keyring, "get_password", backend.get_password)
    reference = store_key("aria-openai", "sk-from-keyring")
    assert reference == "keyring:nexus-ark/aria-openai"
    assert resolve_key(reference) == "sk-from-keyring"
    assert ModelConfig(spec="litellm:openai/gpt-4o", api_key=reference).api_key == reference


def test_personas_with_their_own_timeouts_get_their_own_backend(app: NexusApp) -> None:
    folder = app.personas.load("aria").folder
    _write(
        folder,
        'name = "Aria"\n[model]\nspec = "bundled"\ntemperature = 0.3\n[model.timeouts]\nfirst_token_s = 7\n',
    )
    aria, hikari = app.personas.session("aria"), app.personas.session("hikari")
    assert aria.backend is not hikari.backend
    made = {config.timeouts.first_token_s for config in app.made}
    assert made == {7.0, 120.0}, "each backend is built with its own persona's timeouts"


def test_sampling_settings_alone_do_not_split_a_shared_model(app: NexusApp) -> None:
    folder = app.personas.load("aria").folder
    _write(folder, 'name = "Aria"\n[model]\nspec = "bundled"\ntemperature = 0.3\n')
    assert app.personas.session("aria").backend is app.personas.session("hikari").backend


def test_structured_output_setting_reaches_the_litellm_backend() -> None:
    from nexus_ark.providers.registry import BackendPool

    pool = BackendPool()
    plain = ModelConfig(spec="litellm:openai/local", api_base="http://127.0.0.1:9/v1")
    json_mode = plain.model_copy(update={"structured_output": "json_object"})
    backend = pool.get(json_mode)
    assert backend is not pool.get(plain), "a different structured_output is a different backend"
    assert backend.structured_output == "json_object"  # type: ignore[attr-defined]
