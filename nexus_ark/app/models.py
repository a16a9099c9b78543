"""NexusApp's models: per-purpose routing, the backends pool, checks, the catalogue's advice and
downloads (mixed into NexusApp)."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Literal

from pydantic import BaseModel

from nexus_ark.config import AppSettings
from nexus_ark.errors import ModelError, NexusArkError
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.personas.store import Persona
from nexus_ark.prompts.protocol import MODEL_CHECK
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams
from nexus_ark.providers.catalogue import (
    CatalogueEntry,
    LanguageAdvice,
    advice_key,
    language_advice,
    load_catalogue,
    total_ram_gb,
)
from nexus_ark.providers.model_download import ProgressFn
from nexus_ark.providers.model_store import ModelStatus, get_model, model_statuses
from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaModelInfo

log = logging.getLogger(__name__)

Purpose = Literal["chat", "internal"]
# The dismissed-advice key of the first start's line about the bundled model.
BUNDLED_HINT_KEY = "bundled-model-hint"


class ModelCheck(BaseModel):
    model: str
    reply: str
    seconds: float


class ModelsMixin:
    def language_advice(self, slug: str) -> LanguageAdvice | None:
        """Whether the persona's chat model speaks the persona's language, with the catalogue's suggestion
        when it does not (reads files: not for the UI thread). Dismissed advice stays dismissed."""
        persona = self.personas.load(slug)
        spec = self.model_config(persona, "chat").spec or "bundled"
        advice = language_advice(spec, persona.settings.language, load_catalogue(), total_ram_gb())
        if advice is None or advice_key(slug, advice) in self.settings.dismissed_advice:
            return None
        return advice

    def bundled_hint(self, slug: str) -> bool:
        """Whether to say, once, that the persona runs on the bundled model and a better one is a click
        away (until the person closes that line: then never again, for any persona)."""
        if BUNDLED_HINT_KEY in self.settings.dismissed_advice:
            return False
        return self.model_config(self.personas.load(slug), "chat").parsed().kind == "bundled"

    def dismiss_advice(self, slug: str, advice: LanguageAdvice | str) -> None:
        keys = [advice] if isinstance(advice, str) else [advice_key(slug, advice)]
        if not isinstance(advice, str) and advice.spec == "bundled":
            keys.append(BUNDLED_HINT_KEY)  # one notice about the bundled model closed is enough

        def dismissed(settings: AppSettings) -> dict[str, object]:
            new = [key for key in keys if key not in settings.dismissed_advice]
            return {"dismissed_advice": [*settings.dismissed_advice, *new]} if new else {}

        self.settings_store.change(dismissed)

    def model_config(self, persona: Persona, purpose: Purpose = "chat") -> ModelConfig:
        """Per-purpose routing: the persona's choice, else the app default; internal falls back to chat."""
        chat = persona.settings.model
        if chat.is_default():
            default = self.settings.chat_model
            chat_config = default.model_copy(
                update={"context_size": chat.context_size, "state_cache_mb": chat.state_cache_mb}
            )
        else:
            chat_config = ModelConfig.model_validate(chat.model_dump(include=set(ModelConfig.model_fields)))
        if purpose == "chat":
            return chat_config
        for candidate in (persona.settings.internal_model, self.settings.internal_model):
            if candidate is not None and not candidate.is_default():
                return candidate
        return chat_config

    def backend(self, config: ModelConfig) -> ChatBackend:
        """The shared backend for a model, ready to use.

        Blocks (model load, server check): never call it on the UI thread."""
        backend = self.pool.get(config)
        try:
            backend.ensure_ready()
        except ModelError:
            self.pool.discard(config)
            raise
        return backend

    def check_model(self, config: ModelConfig) -> ModelCheck:
        """Load or reach the model and have it say a few words: the settings' "Test connection"."""
        started = time.perf_counter()
        backend = self.backend(config)
        params = GenerationParams(max_tokens=8, temperature=0.0)
        reply = "".join(
            c.text for c in backend.stream_chat([ChatMessage(role="user", content=MODEL_CHECK)], params)
        ).strip()
        return ModelCheck(model=backend.describe(), reply=reply, seconds=time.perf_counter() - started)

    @staticmethod
    def list_ollama_models(host: str) -> list[OllamaModelInfo]:
        from nexus_ark.providers.ollama_backend import OllamaBackend

        return OllamaBackend("", host).list_models()

    def ollama_host(self, slug: str | None = None) -> str:
        """Where Ollama is for this persona: its setting, else OLLAMA_HOST, else the usual port."""
        config = self.model_config(self.personas.load(slug), "chat") if slug else self.settings.chat_model
        if config.parsed().kind == "ollama" and config.api_base:
            return config.api_base
        return os.environ.get("OLLAMA_HOST", "").strip() or DEFAULT_HOST  # Ollama's own variable

    def model_statuses(self, slug: str | None = None) -> list[ModelStatus]:
        """The catalogue with what is on this machine (reads files, asks Ollama: not for the UI thread)."""
        try:
            names: list[str] | None = [m.name for m in self.list_ollama_models(self.ollama_host(slug))]
        except NexusArkError:
            names = None
        return model_statuses(load_catalogue(), self.layout.models_dir, total_ram_gb(), names)

    def get_model(
        self,
        entry: CatalogueEntry,
        *,
        slug: str | None = None,
        accepted_license: bool = False,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """Download or pull a catalogue model (resuming what is there); returns the spec to use it by. The
        speed it reached is remembered for the first start's estimate of the next one."""
        from nexus_ark.app.first_start import SpeedRecorder

        recorder = SpeedRecorder(self.layout.models_dir, progress)
        try:
            return get_model(
                entry,
                self.layout.models_dir,
                accepted_license=accepted_license,
                ollama_host=self.ollama_host(slug),
                progress=recorder,
                cancel=cancel,
            )
        finally:
            recorder.save()

    def use_model(self, slug: str, spec: str) -> None:
        """Switch a persona's conversation to a model (a downloaded file, an Ollama model); the internal
        work follows it unless the persona chose its own."""
        persona = self.personas.load(slug)
        kind = ModelSpec.parse(spec).kind
        api_base = self.ollama_host(slug) if kind == "ollama" else ""
        own = persona.settings.internal_model
        internal = own if own is not None and not own.is_default() else None
        self.save_persona_models(slug, {"spec": spec, "api_base": api_base, "api_key": ""}, internal)

    def save_persona_models(self, slug: str, chat: dict, internal: ModelConfig | None) -> None:
        """Write a persona's model choice to its persona.toml (edited in place: the person's comments and
        order stay); the next session uses it."""
        self.personas.save_models(slug, chat, internal)
        with self._state_lock:
            runtime = self._runtimes.get(slug)
        if runtime is not None:  # the next turn opens on the new model; one running finishes on the old
            runtime.reload_persona()
