"""The composition root: data directory, settings, personas, models and sessions.

The CLI and the window both act through NexusApp; neither reaches below it except for data types.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from nexus_ark.agent.prompt import BuiltPrompt
from nexus_ark.agent.session import ChatSession
from nexus_ark.clock import Clock, SystemClock
from nexus_ark.config import AppSettings, SettingsStore, load_app_settings, problem_list
from nexus_ark.dreaming.dream import DreamProgress, DreamResult
from nexus_ark.errors import ConfigError, DatabaseError, ModelError, NexusArkError, PersonaError
from nexus_ark.events import EventHub
from nexus_ark.instance_lock import InstanceLock
from nexus_ark.memory.chatgpt_import import ChatGPTImportReport, import_chatgpt
from nexus_ark.memory.chatgpt_import import Progress as ChatGPTProgress
from nexus_ark.memory.importer import record_import
from nexus_ark.memory.inbox import Inbox, InboxEntry
from nexus_ark.memory.portability import SAFETY_PREFIX, BackupInfo, copy_database, list_backups
from nexus_ark.memory.store import MemoryStore, StoreRole
from nexus_ark.mind import state as drive_state
from nexus_ark.mind.drives import DriveReport
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.mind.imported import read_unread_feelings
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.notices import notice
from nexus_ark.notify import Notifier, NullNotifier, OnClick
from nexus_ark.paths import DataLayout, resolve_data_dir, shipped_personas_dir
from nexus_ark.personas.model import MEMORY_FILE, PersonaInfo
from nexus_ark.personas.store import Persona, PersonaStore
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams
from nexus_ark.providers.catalogue import (
    CatalogueEntry,
    LanguageAdvice,
    advice_key,
    language_advice,
    load_catalogue,
    total_ram_gb,
)
from nexus_ark.providers.embedders import Embedder, backlog_work, make_embedder
from nexus_ark.providers.model_download import ProgressFn
from nexus_ark.providers.model_store import ModelStatus, get_model, model_statuses
from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaModelInfo
from nexus_ark.providers.registry import BackendFactory, BackendPool, default_factory
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.persona_runtime import PersonaRuntime, RuntimeHost
from nexus_ark.runtime.scheduler import RuntimeScheduler

log = logging.getLogger(__name__)

Purpose = Literal["chat", "internal"]
T = TypeVar("T")


class ModelCheck(BaseModel):
    model: str
    reply: str
    seconds: float


def _read_feelings(store: MemoryStore, detector: EmotionDetector) -> None:
    """Emotion readings for imported history (the drives and the emotion plot read them); an import
    succeeds without them when the detector cannot load."""
    try:
        read_unread_feelings(store, detector)
    except NexusArkError as exc:
        log.warning("the imported messages' feelings were not read: %s", exc)


# The dismissed-advice key of the first start's line about the bundled model.
BUNDLED_HINT_KEY = "bundled-model-hint"


class NexusApp:
    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        backend_factory: BackendFactory = default_factory,
        clock: Clock | None = None,
        shipped_personas: Path | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        self.layout = DataLayout(resolve_data_dir(data_dir))
        self.clock = clock or SystemClock()
        self.personas = PersonaStore(self.layout.personas_dir)
        self.pool = BackendPool(backend_factory)
        self.settings = AppSettings()
        self.settings_store = SettingsStore(self.layout.config_file, self.settings)
        self._shipped = shipped_personas if shipped_personas is not None else shipped_personas_dir()
        self._lock = InstanceLock(self.layout.lock_file)
        # Each open persona's runtime: the owner of its memory, its conversation and its work queue.
        self._runtimes: dict[str, PersonaRuntime] = {}
        # _state_lock guards these dicts only and is never held across slow work; each persona has its
        # own lock for opening (model load, memory, backup), so one persona's load never stalls another's.
        self._state_lock = threading.Lock()
        self._persona_locks: dict[str, threading.RLock] = {}
        self._embedder_lock = threading.Lock()
        # Reads each message's emotion on the bundled e5 vectors its head was trained on (loaded on use).
        self._emotions = EmotionDetector()
        self._embedder: Embedder | None = None
        self._embedder_spec: tuple[str, ...] = ()
        self._embedding: set[str] = set()
        # Asked for again while a persona's background embedding ran: it makes one more pass (items
        # written after its last look for pending ones), with the embedder asked for last.
        self._embed_again: dict[str, Embedder] = {}
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._opened = False
        # What the core reports (a turn done, drives recomputed, a dream's progress): the window bridges it
        # onto its own thread. Topics and payloads: docs/architecture.md "Core events".
        self.events = EventHub()
        # Desktop notifications for messages a persona writes first: the window and `nexus-ark run` set
        # the real one (nexus_ark.notify.default_notifier); the window sets what a click opens.
        self.notifier: Notifier = notifier or NullNotifier()
        self.notification_click: Callable[[str], OnClick] | None = None
        self.autonomy_paused = False  # the tray's "Pause": no persona writes first until resumed
        self.scheduler = RuntimeScheduler(self._tick_all)

    @property
    def data_dir(self) -> Path:
        return self.layout.root

    def open(self) -> NexusApp:
        """Claim the data directory, read settings and seed the shipped personas (first run only)."""
        self.layout.create()
        self._lock.acquire()
        try:
            self.settings = load_app_settings(self.layout.config_file)
            self.settings_store = SettingsStore(self.layout.config_file, self.settings)
            seeded = self.personas.seed_from(self._shipped, self.settings.seeded_personas)
            if seeded or not self.layout.config_file.exists():
                self.settings_store.update(seeded_personas=sorted({*self.settings.seeded_personas, *seeded}))
        except BaseException:
            self._lock.release()
            raise
        self._opened = True
        return self

    def __enter__(self) -> NexusApp:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- personas ---------------------------------------------------------------------------------
    def list_personas(self) -> list[PersonaInfo]:
        return self.personas.list()

    def default_persona(self) -> str:
        """The persona the window opens on: the last one used, else the first usable one."""
        usable = [p for p in self.list_personas() if p.ok]
        if not usable:
            raise PersonaError(
                notice("There is no usable persona in {folder}.", folder=str(self.layout.personas_dir)),
                hint=notice("Create one with `nexus-ark persona create NAME`."),
            )
        slugs = [p.slug for p in usable]
        return self.settings.last_persona if self.settings.last_persona in slugs else slugs[0]

    def remember_persona(self, slug: str) -> None:
        if self.settings.last_persona != slug:
            self.update_settings(last_persona=slug)

    def set_language(self, language: str) -> None:
        self.update_settings(language=language)

    def create_persona(self, name: str, language: str = "en", description: str = "") -> PersonaInfo:
        persona = self.personas.create(name, language, description)
        return next(p for p in self.list_personas() if p.slug == persona.slug)

    # -- models -----------------------------------------------------------------------------------
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
            c.text for c in backend.stream_chat([ChatMessage(role="user", content="Say OK.")], params)
        ).strip()
        return ModelCheck(model=backend.describe(), reply=reply, seconds=time.perf_counter() - started)

    @staticmethod
    def list_ollama_models(host: str) -> list[OllamaModelInfo]:
        from nexus_ark.providers.ollama_backend import OllamaBackend

        return OllamaBackend("", host).list_models()

    # -- getting models (the catalogue's downloads and Ollama pulls) --------------------------------
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
        """Download or pull a catalogue model (resuming what is there); returns the spec to use it by."""
        return get_model(
            entry,
            self.layout.models_dir,
            accepted_license=accepted_license,
            ollama_host=self.ollama_host(slug),
            progress=progress,
            cancel=cancel,
        )

    def use_model(self, slug: str, spec: str) -> None:
        """Switch a persona's conversation to a model (a downloaded file, an Ollama model); the internal
        work follows it unless the persona chose its own."""
        persona = self.personas.load(slug)
        kind = ModelSpec.parse(spec).kind
        api_base = self.ollama_host(slug) if kind == "ollama" else ""
        own = persona.settings.internal_model
        internal = own if own is not None and not own.is_default() else None
        self.save_persona_models(slug, {"spec": spec, "api_base": api_base, "api_key": ""}, internal)

    # -- runtimes: each open persona, alive -------------------------------------------------------
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
                self._runtimes[slug] = runtime
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

    # -- the inbox: messages personas wrote first --------------------------------------------------
    def inbox(self, *, unread_only: bool = False) -> list[tuple[str, InboxEntry]]:
        """Every open persona's inbox, newest first, read on read-only connections (off the UI thread)."""
        entries: list[tuple[str, InboxEntry]] = []
        for runtime in self.runtimes():
            store = self.open_memory(runtime.slug, read_only=True)
            try:
                found = Inbox(store, self.clock).entries(unread_only=unread_only)
                entries += [(runtime.slug, e) for e in found]
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
            embed_in_background=self._embed_in_background,
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
        at once) and then every `interval_s` seconds."""
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
        while nothing else runs."""
        return self.runtime(slug).memory

    def change_memory(self, slug: str, name: str, change: Callable[[MemoryStore], T]) -> T:
        """Run `change(memory)` on the persona's queue with its owner connection, as the person's work
        (first in line), and return its result: the one way to write a persona's memory from outside its
        runtime (the command line's memory, goals and questions commands). Blocks: not on the UI thread."""
        runtime = self.runtime(slug)
        return runtime.queue.call(name, lambda: change(runtime.memory))

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

    def open_memory(self, slug: str, *, read_only: bool = False) -> MemoryStore:
        """Another connection to a persona's memory, for work off the owner's thread (the caller closes
        it): a peer that may write, or a read-only reader. Neither migrates nor recovers."""
        persona = self.personas.load(slug)
        role: StoreRole = "reader" if read_only else "peer"
        if read_only:
            try:  # searching needs no recovery: a read-only file can still be searched
                return MemoryStore(persona.memory_path, self.clock, role=role)
            except DatabaseError:
                pass  # not created or not up to date yet: let the owner do that first
        self.memory(slug)
        return MemoryStore(persona.memory_path, self.clock, role=role)

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

    def save_persona_models(self, slug: str, chat: dict, internal: ModelConfig | None) -> None:
        """Write a persona's model choice to its persona.toml (edited in place: the person's comments and
        order stay); the next session uses it."""
        self.personas.save_models(slug, chat, internal)
        with self._state_lock:
            runtime = self._runtimes.get(slug)
        if runtime is not None:  # the next turn opens on the new model; one running finishes on the old
            runtime.reload_persona()

    # -- the settings window and the persona editor ------------------------------------------------
    def update_settings(self, **changes: object) -> AppSettings:
        """Change app settings and save config.toml, through its one owner (config.SettingsStore: one
        lock, atomic write, change events). Validated as a whole first: a bad value raises ConfigError
        naming it and nothing changes. The settings object stays the same one (callers that hold it see
        the change). It writes a file: not on the UI thread."""
        return self.settings_store.update(**changes)

    def save_persona(
        self, slug: str, *, soul: str | None = None, settings: Mapping[str, object] | None = None
    ) -> Persona:
        """Save what the persona editor changed: settings first (validated; a bad value writes nothing,
        the soul included), then persona.md. The persona's next turn uses them."""
        if settings:
            self.personas.save_settings(slug, settings)
        if soul is not None:
            self.personas.save_soul(slug, soul)
        with self._state_lock:
            runtime = self._runtimes.get(slug)
        if runtime is not None:  # a turn running on the old settings finishes as it was
            runtime.reload_persona()
        return self.personas.load(slug)

    def set_persona_avatar(self, slug: str, png: bytes) -> Path:
        return self.personas.set_avatar(slug, png)

    @property
    def emotions(self) -> EmotionDetector:
        """The detector every turn reads the person's feelings with (also for imported history)."""
        return self._emotions

    def import_chatgpt_export(
        self,
        slug: str,
        path: Path,
        *,
        progress: ChatGPTProgress | None = None,
        stop: threading.Event | None = None,
    ) -> ChatGPTImportReport:
        """A ChatGPT data export into the persona's earlier conversations, on a connection of its own (so
        the persona's runtime goes on), then vectors for them in the background. Blocks: off the UI thread."""
        store = self.open_memory(slug)
        try:
            report = import_chatgpt(path, store.messages, store.archive, slug, progress=progress, stop=stop)
            record_import(store.activity, report, path, "chatgpt")
            if report.imported:
                _read_feelings(store, self._emotions)
        finally:
            store.close()
        if report.imported:
            try:
                self._embed_in_background(slug, self.embedder())
            except NexusArkError as exc:  # keyword search finds them now; vectors at the next start
                log.warning("imported conversations not embedded now: %s", exc)
        return report

    def duplicate_persona(self, slug: str, name: str) -> PersonaInfo:
        """A new persona with a copy of this one's folder and memory (taken with SQLite's backup API, so a
        persona in use is copied consistently)."""
        source = self.personas.load(slug)
        copy = self.personas.duplicate(slug, name)
        try:
            if source.memory_path.exists():
                copy_database(source.memory_path, copy.memory_path)
        except NexusArkError:
            self.personas.remove(copy.slug)
            raise
        return next(p for p in self.list_personas() if p.slug == copy.slug)

    def delete_persona(self, slug: str) -> Path:
        """Delete a persona's folder after keeping a whole copy of it (memory included) in
        backups/<slug>/deleted-<time>/. Returns that copy's folder."""
        with self._persona_lock(slug):
            self.release_persona(slug)
            kept = self._unused(self.layout.backups_dir / slug / f"deleted-{self._stamp()}")
            self.personas.copy_files(slug, kept)
            memory_path = self.layout.personas_dir / slug / MEMORY_FILE
            if memory_path.exists():
                copy_database(memory_path, kept / MEMORY_FILE)
            self.personas.remove(slug)
        if self.settings.last_persona == slug:
            self.update_settings(last_persona="")
        return kept

    def list_backups(self, slug: str) -> list[BackupInfo]:
        """The persona's memory backups, newest first (reads each: off the UI thread)."""
        return list_backups(self.layout.backups_dir / slug)

    def restore_backup(self, slug: str, backup: Path) -> Path | None:
        """Put a backup's content into the persona's memory.db, keeping the memory as it is now in
        backups/<slug>/before-restore-<time>.db first (returned; None when there was no memory yet).

        The persona's runtime is closed around the copy (its queued work finishes first) and opens again
        on the next use, so a backup from an older version is migrated. Blocks: off the UI thread."""
        persona = self.personas.load(slug)
        folder = self.layout.backups_dir / slug
        if not any(b.path == backup and b.messages is not None for b in list_backups(folder)):
            raise NexusArkError(
                notice(
                    "{path} is not a readable memory backup of {name}.",
                    path=str(backup),
                    name=persona.settings.name,
                )
            )
        with self._persona_lock(slug):
            with self._state_lock:
                if slug in self._embedding:
                    raise NexusArkError(
                        notice("{name}'s memory is being indexed right now.", name=persona.settings.name),
                        hint=notice("Try again in a moment; nothing was changed."),
                    )
            # Closing the runtime may rotate the daily backups (one may be the chosen one): copy it aside.
            chosen = self._unused(folder / f"restoring-{self._stamp()}.tmp")
            copy_database(backup, chosen)
            try:
                self.release_persona(slug)
                safety = None
                if persona.memory_path.exists():
                    safety = self._unused(folder / f"{SAFETY_PREFIX}{self._stamp()}.db")
                    copy_database(persona.memory_path, safety)
                copy_database(chosen, persona.memory_path)
            finally:
                chosen.unlink(missing_ok=True)
        return safety

    def release_persona(self, slug: str) -> None:
        """Close a persona's runtime (its queued work finishes, its memory closes): a restore or a delete
        needs the database to itself. The next use opens it again."""
        with self._persona_lock(slug):
            with self._state_lock:
                runtime = self._runtimes.pop(slug, None)
            if runtime is not None:
                runtime.close()

    def _stamp(self) -> str:
        return self.clock.now().strftime("%Y%m%d-%H%M%S")

    @staticmethod
    def _unused(path: Path) -> Path:
        """`path`, or the same name with -2, -3… before its suffix when it is taken (two in one second)."""
        candidate, n = path, 2
        while candidate.exists():
            candidate, n = path.with_name(f"{path.stem}-{n}{path.suffix}"), n + 1
        return candidate

    def embedder(self) -> Embedder:
        """The app's embedder (one per process). Cheap to create: models load and servers are reached on
        first use, so call what uses it off the UI thread."""
        with self._embedder_lock:
            config = self.settings.embedder
            if self._embedder is None or self._embedder_spec != config.pool_key():
                self._embedder = make_embedder(
                    config.spec or "bundled",
                    api_base=config.api_base,
                    api_key_ref=config.api_key,
                    timeouts=config.timeouts,
                )
                self._embedder_spec = config.pool_key()
            return self._embedder

    def _embedder_for_recall(self) -> tuple[Embedder | None, str]:
        """The embedder, or None and why: a chat goes on with keyword recall when it cannot be had."""
        try:
            return self.embedder(), ""
        except NexusArkError as exc:
            log.warning("recall by meaning unavailable: %s", exc)
            return None, str(exc)

    def _embed_in_background(self, slug: str, embedder: Embedder) -> None:
        """Give every memory of a persona a vector from the current embedder, on a thread of its own
        with its own connection: after an import, a crash, or a change of embedder. Resumable, and a
        no-op when nothing is pending. Asked again while it runs, it makes one more pass when done."""
        with self._state_lock:
            if self._stopping.is_set():
                return
            if slug in self._embedding:
                self._embed_again[slug] = embedder
                return
            self._embedding.add(slug)

        def run() -> None:
            current: Embedder | None = embedder
            while current is not None:
                try:
                    store = self.open_memory(slug)
                    try:
                        with backlog_work():
                            store.archive.embed_pending(current, cancel=self._stopping)
                    finally:
                        store.close()
                except Exception as exc:  # logged, and resumed at the next start: nothing is lost
                    log.warning("background embedding for %s stopped: %s", slug, exc)
                with self._state_lock:
                    current = None if self._stopping.is_set() else self._embed_again.pop(slug, None)
                    if current is None:
                        self._embedding.discard(slug)
                        self._embed_again.pop(slug, None)

        thread = threading.Thread(target=run, name=f"embed-{slug}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def close(self) -> None:
        """Stop the scheduler and background work (it checks the stop flag between small steps), then
        close each persona's runtime (its conversation ends, its queue stops, its memory closes).
        Callers stop their own users of a session (a turn in progress) before calling this."""
        self.scheduler.shutdown()
        self._stopping.set()
        for runtime in self.runtimes():
            try:
                runtime.close()
            except Exception as exc:  # closing must go on whatever one persona's memory does
                log.warning("closing %s failed: %s", runtime.slug, exc)
        for thread in self._threads:
            thread.join(timeout=60)
            if thread.is_alive():  # it holds its own connection and closes it itself
                log.warning("%s is still running at exit", thread.name)
        with self._state_lock:
            self._runtimes = {}
        self.pool.close()
        self.notifier.close()
        if self._opened:
            self._lock.release()
            self._opened = False
