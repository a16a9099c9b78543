"""app.personas: the personas in the data folder and the open ones alive. Each open persona has one
runtime (its memory's owner, its conversations and its work queue), opened once per process; the ways in
to a persona's memory (as its owner on its queue, or on a read-only connection), its drives, dreams and the
prompt a turn would send go through here. The folders themselves are `.store` (personas/store.py)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import date
from typing import Literal, TypeVar

from pydantic import ValidationError

from nexus_ark.agent.prompt import BuiltPrompt
from nexus_ark.agent.session import ChatSession
from nexus_ark.app.host import AppRoot
from nexus_ark.app.models import Models
from nexus_ark.config import problem_list
from nexus_ark.dreaming.dream import DreamProgress, DreamResult
from nexus_ark.errors import ConfigError, DatabaseError, NexusArkError, PersonaError
from nexus_ark.memory.importer import WriteGate
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind import state as drive_state
from nexus_ark.mind.drives import DriveReport
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.notices import notice
from nexus_ark.personas.model import PersonaInfo
from nexus_ark.personas.store import Persona, PersonaStore
from nexus_ark.runtime.host import RuntimeHost
from nexus_ark.runtime.owner_trace import borrow
from nexus_ark.runtime.persona_runtime import PersonaRuntime

log = logging.getLogger(__name__)
T = TypeVar("T")


class Personas:
    """Given the root's shared objects, the personas' folders, the models part (a persona's backend), what
    a runtime is given (RuntimeHost, built by the root) and the app's stop flag (set first when the app
    closes: nothing opens after it)."""

    def __init__(
        self,
        root: AppRoot,
        store: PersonaStore,
        models: Models,
        host: RuntimeHost,
        stopping: threading.Event,
    ) -> None:
        self.store = store
        self._root = root
        self._models = models
        self._host = host
        self._stopping = stopping
        # Each open persona's runtime: the owner of its memory, its conversation and its work queue.
        self._runtimes: dict[str, PersonaRuntime] = {}
        # _state_lock guards these dicts only and is never held across slow work; each persona has its
        # own lock for opening (model load, memory, backup), so one persona's load never stalls another's.
        self._state_lock = threading.Lock()
        self._persona_locks: dict[str, threading.RLock] = {}

    # -- the folders --------------------------------------------------------------------------------
    def load(self, slug: str) -> Persona:
        return self.store.load(slug)

    def all(self) -> list[PersonaInfo]:
        return self.store.list()

    def create(self, name: str, language: str = "en", description: str = "") -> PersonaInfo:
        persona = self.store.create(name, language, description)
        return next(p for p in self.all() if p.slug == persona.slug)

    def lock(self, slug: str) -> threading.RLock:
        """The persona's own lock, held while it opens, is released, restored or deleted."""
        with self._state_lock:
            return self._persona_locks.setdefault(slug, threading.RLock())

    # -- the open ones --------------------------------------------------------------------------------
    def runtime(self, slug: str) -> PersonaRuntime:
        """The persona's runtime, opened once per process: its memory is migrated and recovered here (and
        nowhere else), its work queue started. Blocks on the disk (a backup may be taken): call it off
        the UI thread. The chat model loads later, on the runtime's own thread."""
        with self.lock(slug):
            with self._state_lock:
                existing = self._runtimes.get(slug)
                if self._stopping.is_set():
                    raise PersonaError(notice("Nexus Ark is closing."))
            if existing is not None:
                return existing
            runtime = PersonaRuntime(slug, self._host)
            with self._state_lock:
                # close() may have run while this one opened (the window's start-up wake meeting a quick
                # quit): registered now, close() never sees it, and its thread and memory outlive the app.
                closing = self._stopping.is_set()
                if not closing:
                    self._runtimes[slug] = runtime
            if closing:
                runtime.close()
                raise PersonaError(notice("Nexus Ark is closing."))
            return runtime

    def open_all(self) -> list[PersonaRuntime]:
        """Open every usable persona (the window and `nexus-ark run` do, so each lives on its own);
        one that cannot be opened is logged and skipped."""
        opened = []
        for info in self.all():
            if not info.ok:
                continue
            try:
                opened.append(self.runtime(info.slug))
            except NexusArkError as exc:
                log.warning("%s cannot live in the background: %s", info.slug, exc)
        return opened

    def runtimes(self) -> list[PersonaRuntime]:
        with self._state_lock:
            return list(self._runtimes.values())

    def runtime_if_open(self, slug: str) -> PersonaRuntime | None:
        """The persona's runtime when it is open, without opening it (never blocks: the UI thread may ask)."""
        with self._state_lock:
            return self._runtimes.get(slug)

    def reload(self, slug: str) -> None:
        """The persona's files changed: an open runtime loads them again (a turn running finishes on the
        old ones; the next turn uses the new)."""
        runtime = self.runtime_if_open(slug)
        if runtime is not None:
            runtime.reload_persona()

    def release(self, slug: str) -> None:
        """Close a persona's runtime (its queued work finishes, its memory closes): a restore or a delete
        needs the database to itself. The next use opens it again."""
        with self.lock(slug):
            with self._state_lock:
                runtime = self._runtimes.pop(slug, None)
            if runtime is not None:
                runtime.close()

    def close(self) -> None:
        """Close every runtime (its conversation ends, its queue stops, its memory closes); the app's stop
        flag is set already, so none opens meanwhile."""
        for runtime in self.runtimes():
            try:
                runtime.close()
            except Exception as exc:  # closing must go on whatever one persona's memory does
                log.warning("closing %s failed: %s", runtime.slug, exc)
        with self._state_lock:
            self._runtimes = {}

    # -- conversations and models ---------------------------------------------------------------------
    def session(
        self, slug: str, model_override: str | None = None, api_base: str | None = None
    ) -> ChatSession:
        """The conversation with a persona (its runtime's). Blocks while the model loads: call it from a
        worker, never from the UI thread. An override (--model, --api-base) replaces the runtime's model."""
        runtime = self.runtime(slug)
        if model_override is None and api_base is None:
            return runtime.queue.call("open", runtime.session)
        config = self._models.model_config(self.load(slug), "chat")
        if model_override:
            ModelSpec.parse(model_override)  # a clear ModelError for a bad --model
        config = config.model_copy(
            update={"spec": model_override or config.spec, "api_base": api_base or config.api_base}
        )
        try:  # validate the override too
            config = ModelConfig.model_validate(config.model_dump())
        except ValidationError as exc:
            raise ConfigError(
                notice("--model / --api-base: {problems}", problems=problem_list(exc))
            ) from None
        backend = self._models.backend(config)
        return runtime.queue.call("open", lambda: runtime.use_backend(backend))

    def use_model(self, slug: str, spec: str) -> None:
        """Switch a persona's conversation to a model (a downloaded file, an Ollama model); the internal
        work follows it unless the persona chose its own."""
        persona = self.load(slug)
        kind = ModelSpec.parse(spec).kind
        api_base = self._models.ollama_host(slug) if kind == "ollama" else ""
        own = persona.settings.internal_model
        internal = own if own is not None and not own.is_default() else None
        self.save_models(slug, {"spec": spec, "api_base": api_base, "api_key": ""}, internal)

    def save_models(self, slug: str, chat: dict[str, object], internal: ModelConfig | None) -> None:
        """Write a persona's model choice to its persona.toml (edited in place: the person's comments and
        order stay); the next turn opens on the new model, one running finishes on the old."""
        self.store.save_models(slug, chat, internal)
        self.reload(slug)

    def preview_prompt(self, slug: str, text: str) -> BuiltPrompt:
        """The exact messages `text` would be sent with to the persona's chat model, and each section's
        tokens (a dry run: `nexus-ark prompt`). Nothing is stored: the memory is read on a read-only
        connection, no background embedding starts, and the model is used for counting tokens only.
        Blocks while the model loads: never call it on the UI thread."""
        persona = self.load(slug)
        backend = self._models.backend(self._models.model_config(persona, "chat"))
        embedder, problem = self._models.embedder_for_recall()
        memory = self.open_memory(slug, read_only=True)
        try:
            session = ChatSession(persona, memory, backend, embedder=embedder, recall_problem=problem)
            return session.preview_prompt(text)
        finally:
            memory.close()

    # -- memory ---------------------------------------------------------------------------------------
    def memory(self, slug: str) -> MemoryStore:
        """A persona's memory as its owner (the runtime) opened it, once per process, on its queue's
        thread. The caller must not close it (close() does). Use it on that thread
        (`runtime.queue.call`), as the command line and the window do; tests plant data through it
        while nothing else runs: it waits for the queue to be idle, then the calling thread borrows the
        connection (owner_trace.borrow). Waiting for the queue keeps two threads from interleaving their
        transactions on the one connection."""
        runtime = self.runtime(slug)
        if not runtime.queue.on_its_thread():
            runtime.queue.wait_idle(600)
        borrow(runtime.memory)
        return runtime.memory

    def change_memory(self, slug: str, name: str, change: Callable[[MemoryStore], T]) -> T:
        """Run `change(memory)` on the persona's queue with its owner connection, as the person's work
        (first in line), and return its result: the one way to write a persona's memory from outside its
        runtime (the command line's memory, goals and questions commands). Blocks: not on the UI thread."""
        runtime = self.runtime(slug)
        return runtime.queue.call(name, lambda: change(runtime.memory))

    def writer(self, slug: str, name: str) -> WriteGate:
        """change_memory as a function an importer can hand each batch to (memory/importer.py WriteGate)."""
        return lambda change: self.change_memory(slug, name, change)

    def open_memory(self, slug: str, *, read_only: Literal[True] = True) -> MemoryStore:
        """A read-only connection to a persona's memory, for reading off the owner's thread (the caller
        closes it). It neither migrates nor recovers. Writes go through the owner: change_memory/writer."""
        persona = self.load(slug)
        try:  # searching needs no recovery: a read-only file can still be searched
            return MemoryStore(persona.memory_path, self._root.clock, role="reader")
        except DatabaseError:
            pass  # not created or not up to date yet: let the owner do that first
        self.memory(slug)
        return MemoryStore(persona.memory_path, self._root.clock, role="reader")

    def drives(self, slug: str, *, record: bool = True) -> DriveReport:
        """The persona's drives now, with their inputs, dominant drive and narrative. Recorded in
        drive_history unless record=False (then nothing is written). Off the UI thread: it reads memory."""
        if record:
            return self.runtime(slug).drives(record=True)
        settings = self.load(slug).settings
        store = self.open_memory(slug, read_only=True)
        try:
            return drive_state.current(
                store, self._root.clock.now(), settings.drives.thresholds(), settings.language
            )
        finally:
            store.close()

    def dream(
        self,
        slug: str,
        *,
        level: int | None = None,
        day: date | None = None,
        progress: Callable[[DreamProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> DreamResult:
        """Dream now, on the persona's internal model, and wait for it (call it from a worker). The dream
        is background work on the persona's queue: a turn sent meanwhile is served first (the dream's
        current model step stops and the dream resumes after it); progress and the end are also published
        as core events."""
        return self.runtime(slug).dreams.dream(level=level, day=day, progress=progress, cancel=cancel)
