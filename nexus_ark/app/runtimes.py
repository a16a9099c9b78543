"""NexusApp's runtimes: each open persona alive (its memory's owner, conversation and queue), the inbox,
the scheduler's tick, and the ways in to a persona's memory (mixed into NexusApp)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import date
from typing import Literal, TypeVar

from pydantic import ValidationError

from nexus_ark.agent.prompt import BuiltPrompt
from nexus_ark.agent.session import ChatSession
from nexus_ark.config import problem_list
from nexus_ark.dreaming.dream import DreamProgress, DreamResult
from nexus_ark.errors import ConfigError, DatabaseError, NexusArkError, PersonaError
from nexus_ark.memory.importer import WriteGate
from nexus_ark.memory.inbox import Inbox, InboxEntry
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind import state as drive_state
from nexus_ark.mind.drives import DriveReport
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.notices import notice
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.owner_trace import borrow
from nexus_ark.runtime.persona_runtime import PersonaRuntime, RuntimeHost

log = logging.getLogger(__name__)
T = TypeVar("T")


class RuntimesMixin:
    def _persona_lock(self, slug: str) -> threading.RLock:
        with self._state_lock:
            return self._persona_locks.setdefault(slug, threading.RLock())

    def runtime(self, slug: str) -> PersonaRuntime:
        """The persona's runtime, opened once per process: its memory is migrated and recovered here (and
        nowhere else), its work queue started. Blocks on the disk (a backup may be taken): call it off
        the UI thread. The chat model loads later, on the runtime's own thread."""
        with self._persona_lock(slug):
            with self._state_lock:
                existing = self._runtimes.get(slug)
                if self._stopping.is_set():
                    raise PersonaError(notice("Nexus Ark is closing."))
            if existing is not None:
                return existing
            runtime = PersonaRuntime(slug, self._host())
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

    def open_runtimes(self) -> list[PersonaRuntime]:
        """Open every usable persona (the window and `nexus-ark run` do, so each lives on its own);
        one that cannot be opened is logged and skipped."""
        opened = []
        for info in self.list_personas():
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

    def inbox(self, *, unread_only: bool = False) -> list[tuple[str, InboxEntry]]:
        """Every open persona's inbox, newest first, read on read-only connections (off the UI thread)."""
        entries: list[tuple[str, InboxEntry]] = []
        for runtime in self.runtimes():
            store = self.open_memory(runtime.slug, read_only=True)
            try:
                found = Inbox(store, self.clock).entries(unread_only=unread_only)
                entries += [
                    (runtime.slug, e.model_copy(update={"room_title": self.room_title(e.room)}))
                    if e.room.startswith("room:")
                    else (runtime.slug, e)
                    for e in found
                ]
            finally:
                store.close()
        return sorted(entries, key=lambda pair: pair[1].created_at, reverse=True)

    def unread_counts(self) -> dict[str, int]:
        """Unread messages each open persona wrote first (read-only connections; off the UI thread)."""
        counts: dict[str, int] = {}
        for runtime in self.runtimes():
            store = self.open_memory(runtime.slug, read_only=True)
            try:
                counts[runtime.slug] = Inbox(store, self.clock).unread()
            finally:
                store.close()
        return counts

    def mark_read(self, slug: str, message_ids: list[int] | None = None) -> int:
        """The person saw these (or all of this persona's) messages; on the persona's queue (a write)."""
        runtime = self.runtime(slug)
        return runtime.queue.call("mark read", lambda: runtime.inbox.mark_read(message_ids))

    def _host(self) -> RuntimeHost:
        return RuntimeHost(
            clock=self.clock,
            events=self.events,
            load_persona=self.personas.load,
            chat_backend=lambda persona: self.backend(self.model_config(persona, "chat")),
            internal_backend=lambda persona: self.backend(self.model_config(persona, "internal")),
            embedder=self._embedder_for_recall,
            emotions=self._emotions,
            backups_dir=lambda slug: self.layout.backups_dir / slug,
            notify=self._notify,
            autonomy_paused=lambda: self.autonomy_paused,
            room_title=self.room_title,
        )

    def _notify(self, title: str, body: str, slug: str) -> bool:
        if not self.settings.desktop_notifications:  # turned off in Settings: the inbox holds it
            return False
        on_click = self.notification_click(slug) if self.notification_click is not None else None
        try:
            return self.notifier.notify(title, body, on_click=on_click)
        except Exception as exc:  # the inbox holds the message either way
            log.warning("desktop notification failed: %s", exc)
            return False

    def set_autonomy_paused(self, paused: bool) -> None:
        self.autonomy_paused = paused

    def start_life(self, interval_s: float = 60.0) -> None:
        """Start the scheduler: every open persona looks at what is due now (missed runs coalesce into one
        at once) and then every `interval_s` seconds. Once close() has begun it starts nothing: a scheduler
        started after close() stopped it would tick into the interpreter's shutdown."""
        with self._life_lock:
            if self._stopping.is_set():
                return
            self.scheduler.start(interval_s)

    def _tick_all(self) -> None:
        for runtime in self.runtimes():
            try:
                tick(runtime)
            except Exception as exc:  # one persona's trouble must not stop the others' lives
                log.warning("%s: scheduled work not queued: %s", runtime.slug, exc)

    def session(
        self, slug: str, model_override: str | None = None, api_base: str | None = None
    ) -> ChatSession:
        """The conversation with a persona (its runtime's). Blocks while the model loads: call it from a
        worker, never from the UI thread. An override (--model, --api-base) replaces the runtime's model."""
        runtime = self.runtime(slug)
        if model_override is None and api_base is None:
            return runtime.queue.call("open", runtime.session)
        persona = self.personas.load(slug)
        config = self.model_config(persona, "chat")
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
        backend = self.backend(config)
        return runtime.queue.call("open", lambda: runtime.use_backend(backend))

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

    def drives(self, slug: str, *, record: bool = True) -> DriveReport:
        """The persona's drives now, with their inputs, dominant drive and narrative. Recorded in
        drive_history unless record=False (then nothing is written). Off the UI thread: it reads memory."""
        if record:
            return self.runtime(slug).drives(record=True)
        persona = self.personas.load(slug)
        settings = persona.settings
        store = self.open_memory(slug, read_only=True)
        try:
            return drive_state.current(
                store, self.clock.now(), settings.drives.thresholds(), settings.language
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
        return self.runtime(slug).dream(level=level, day=day, progress=progress, cancel=cancel)

    def open_memory(self, slug: str, *, read_only: Literal[True] = True) -> MemoryStore:
        """A read-only connection to a persona's memory, for reading off the owner's thread (the caller
        closes it). It neither migrates nor recovers. Writes go through the owner: change_memory/writer."""
        persona = self.personas.load(slug)
        try:  # searching needs no recovery: a read-only file can still be searched
            return MemoryStore(persona.memory_path, self.clock, role="reader")
        except DatabaseError:
            pass  # not created or not up to date yet: let the owner do that first
        self.memory(slug)
        return MemoryStore(persona.memory_path, self.clock, role="reader")

    def preview_prompt(self, slug: str, text: str) -> BuiltPrompt:
        """The exact messages `text` would be sent with to the persona's chat model, and each section's
        tokens (a dry run: `nexus-ark prompt`). Nothing is stored: the memory is read on a read-only
        connection, no background embedding starts, and the model is used for counting tokens only.
        Blocks while the model loads: never call it on the UI thread."""
        persona = self.personas.load(slug)
        backend = self.backend(self.model_config(persona, "chat"))
        embedder, problem = self._embedder_for_recall()
        memory = self.open_memory(slug, read_only=True)
        try:
            session = ChatSession(persona, memory, backend, embedder=embedder, recall_problem=problem)
            return session.preview_prompt(text)
        finally:
            memory.close()

    def release_persona(self, slug: str) -> None:
        """Close a persona's runtime (its queued work finishes, its memory closes): a restore or a delete
        needs the database to itself. The next use opens it again."""
        with self._persona_lock(slug):
            with self._state_lock:
                runtime = self._runtimes.pop(slug, None)
            if runtime is not None:
                runtime.close()
