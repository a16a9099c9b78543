"""app.models: per-purpose routing, the backends pool, checks, the catalogue's advice, downloads, and the
app's embedder and emotion reader (one of each per process)."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Literal

from pydantic import BaseModel

from nexus_ark.app.download_speed import SpeedRecorder
from nexus_ark.app.host import AppRoot
from nexus_ark.config import AppState
from nexus_ark.errors import ModelError, NexusArkError
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.model_config import ModelConfig
from nexus_ark.personas.store import Persona, PersonaStore
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
from nexus_ark.providers.embedders import Embedder, make_embedder
from nexus_ark.providers.model_download import ProgressFn
from nexus_ark.providers.model_store import ModelStatus, get_model, model_statuses
from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaModelInfo
from nexus_ark.providers.registry import BackendPool

log = logging.getLogger(__name__)

Purpose = Literal["chat", "internal"]
# The dismissed-advice key of the first start's line about the bundled model.
BUNDLED_HINT_KEY = "bundled-model-hint"


class ModelCheck(BaseModel):
    model: str
    reply: str
    seconds: float


class Models:
    """The models the personas run on, given the root's shared objects, the backends pool and the personas'
    folders (each persona's model choice is in its persona.toml)."""

    def __init__(self, root: AppRoot, pool: BackendPool, personas: PersonaStore) -> None:
        self._root = root
        self._pool = pool
        self._personas = personas
        self._embedder_lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._embedder_spec: tuple[str, ...] = ()
        # Reads each message's emotion on the bundled e5 vectors its head was trained on (loaded on use).
        self._emotions = EmotionDetector()

    def language_advice(self, slug: str) -> LanguageAdvice | None:
        """Whether the persona's chat model speaks the persona's language, with the catalogue's suggestion
        when it does not (reads files: not for the UI thread). Dismissed advice stays dismissed."""
        persona = self._personas.load(slug)
        spec = self.model_config(persona, "chat").spec or "bundled"
        advice = language_advice(spec, persona.settings.language, load_catalogue(), total_ram_gb())
        if advice is None or advice_key(slug, advice) in self._root.state.dismissed_advice:
            return None
        return advice

    def bundled_hint(self, slug: str) -> bool:
        """Whether to say, once, that the persona runs on the bundled model and a better one is a click
        away (until the person closes that line: then never again, for any persona)."""
        if BUNDLED_HINT_KEY in self._root.state.dismissed_advice:
            return False
        return self.model_config(self._personas.load(slug), "chat").parsed().kind == "bundled"

    def dismiss_advice(self, slug: str, advice: LanguageAdvice | str) -> None:
        keys = [advice] if isinstance(advice, str) else [advice_key(slug, advice)]
        if not isinstance(advice, str) and advice.spec == "bundled":
            keys.append(BUNDLED_HINT_KEY)  # one notice about the bundled model closed is enough

        def dismissed(state: AppState) -> dict[str, object]:
            new = [key for key in keys if key not in state.dismissed_advice]
            return {"dismissed_advice": [*state.dismissed_advice, *new]} if new else {}

        self._root.state_store.change(dismissed)

    def model_config(self, persona: Persona, purpose: Purpose = "chat") -> ModelConfig:
        """Per-purpose routing: the persona's choice, else the app default; internal falls back to chat."""
        chat = persona.settings.model
        if chat.is_default():
            default = self._root.settings.chat_model
            chat_config = default.model_copy(
                update={"context_size": chat.context_size, "state_cache_mb": chat.state_cache_mb}
            )
        else:
            chat_config = ModelConfig.model_validate(chat.model_dump(include=set(ModelConfig.model_fields)))
        if purpose == "chat":
            return chat_config
        for candidate in (persona.settings.internal_model, self._root.settings.internal_model):
            if candidate is not None and not candidate.is_default():
                return candidate
        return chat_config

    def backend_for(self, persona: Persona, purpose: Purpose) -> ChatBackend:
        """The persona's backend for a purpose, ready (blocks: the runtime calls it on its own thread)."""
        return self.backend(self.model_config(persona, purpose))

    def backend(self, config: ModelConfig) -> ChatBackend:
        """The shared backend for a model, ready to use.

        Blocks (model load, server check): never call it on the UI thread."""
        backend = self._pool.get(config)
        try:
            backend.ensure_ready()
        except ModelError:
            self._pool.discard(config)
            raise
        return backend

    def check(self, config: ModelConfig) -> ModelCheck:
        """Load or reach the model and have it say a few words: the settings' "Test connection"."""
        started = time.perf_counter()
        backend = self.backend(config)
        params = GenerationParams(max_tokens=8, temperature=0.0)
        reply = "".join(
            c.text for c in backend.stream_chat([ChatMessage(role="user", content=MODEL_CHECK)], params)
        ).strip()
        return ModelCheck(model=backend.describe(), reply=reply, seconds=time.perf_counter() - started)

    @staticmethod
    def ollama_models(host: str) -> list[OllamaModelInfo]:
        from nexus_ark.providers.ollama_backend import OllamaBackend

        return OllamaBackend("", host).list_models()

    def ollama_host(self, slug: str | None = None) -> str:
        """Where Ollama is for this persona: its setting, else OLLAMA_HOST, else the usual port."""
        config = (
            self.model_config(self._personas.load(slug), "chat") if slug else self._root.settings.chat_model
        )
        if config.parsed().kind == "ollama" and config.api_base:
            return config.api_base
        return os.environ.get("OLLAMA_HOST", "").strip() or DEFAULT_HOST  # Ollama's own variable

    def statuses(self, slug: str | None = None) -> list[ModelStatus]:
        """The catalogue with what is on this machine (reads files, asks Ollama: not for the UI thread)."""
        try:
            names: list[str] | None = [m.name for m in self.ollama_models(self.ollama_host(slug))]
        except NexusArkError:
            names = None
        return model_statuses(load_catalogue(), self._root.layout.models_dir, total_ram_gb(), names)

    def get(
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
        recorder = SpeedRecorder(self._root.layout.models_dir, progress)
        try:
            return get_model(
                entry,
                self._root.layout.models_dir,
                accepted_license=accepted_license,
                ollama_host=self.ollama_host(slug),
                progress=recorder,
                cancel=cancel,
            )
        finally:
            recorder.save()

    # -- the embedder and the emotion reader --------------------------------------------------------
    @property
    def emotions(self) -> EmotionDetector:
        """The detector every turn reads the person's feelings with (also for imported history)."""
        return self._emotions

    def embedder(self) -> Embedder:
        """The app's embedder (one per process). Cheap to create: models load and servers are reached on
        first use, so call what uses it off the UI thread."""
        with self._embedder_lock:
            config = self._root.settings.embedder
            if self._embedder is None or self._embedder_spec != config.pool_key():
                self._embedder = make_embedder(
                    config.spec or "bundled",
                    api_base=config.api_base,
                    api_key_ref=config.api_key,
                    timeouts=config.timeouts,
                )
                self._embedder_spec = config.pool_key()
            return self._embedder

    def embedder_for_recall(self) -> tuple[Embedder | None, str]:
        """The embedder, or None and why: a chat goes on with keyword recall when it cannot be had."""
        try:
            return self.embedder(), ""
        except NexusArkError as exc:
            log.warning("recall by meaning unavailable: %s", exc)
            return None, str(exc)
