"""The composition root: data directory, settings, personas, models and sessions.

The CLI and the window both act through NexusApp; neither reaches below it except for data types. Its
jobs live in the modules beside this one (models, runtimes, admin, embedding), mixed in here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from nexus_ark.app.admin import AdminMixin
from nexus_ark.app.embedding import EmbeddingMixin
from nexus_ark.app.models import BUNDLED_HINT_KEY, ModelCheck, ModelsMixin, Purpose
from nexus_ark.app.rooms import RoomsMixin
from nexus_ark.app.runtimes import RuntimesMixin
from nexus_ark.app.soul import SoulMixin
from nexus_ark.clock import Clock, SystemClock
from nexus_ark.config import AppSettings, SettingsStore, load_app_settings
from nexus_ark.events import EventHub
from nexus_ark.instance_lock import InstanceLock
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.notify import Notifier, NullNotifier, OnClick
from nexus_ark.paths import DataLayout, resolve_data_dir, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.registry import BackendFactory, BackendPool, default_factory
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from nexus_ark.runtime.scheduler import RuntimeScheduler

__all__ = ["BUNDLED_HINT_KEY", "ModelCheck", "NexusApp", "Purpose"]

log = logging.getLogger(__name__)


class NexusApp(ModelsMixin, RuntimesMixin, RoomsMixin, SoulMixin, AdminMixin, EmbeddingMixin):
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
        self._stopping = threading.Event()
        # Held while the scheduler starts or stops, so start_life on a worker and close() never interleave.
        self._life_lock = threading.Lock()
        self._opened = False
        # What the core reports (a turn done, drives recomputed, a dream's progress): the window bridges it
        # onto its own thread. Topics and payloads: docs/architecture.md "Core events".
        self.events = EventHub()
        self.events.subscribe("autonomous_message", self._written_first_in_room)  # rooms hear it too
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
            self.personas.default_user_name = self.settings.user_name
            self.settings_store.subscribe(self._user_name_changed)
            seeded = self.personas.seed_from(self._shipped, self.settings.seeded_personas)
            if seeded or not self.layout.config_file.exists():
                self.settings_store.update(seeded_personas=sorted({*self.settings.seeded_personas, *seeded}))
        except BaseException:
            self._lock.release()
            raise
        self._opened = True
        return self

    def _user_name_changed(self, changes: dict[str, object]) -> None:
        """The app's name for the person changed (Settings, the first start, `setup --name`): personas
        that have no name of their own for the person use it from their next turn."""
        if "user_name" not in changes:
            return
        self.personas.default_user_name = self.settings.user_name
        for runtime in self.runtimes():
            runtime.reload_persona()

    def __enter__(self) -> NexusApp:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the scheduler and background work (it checks the stop flag between small steps), then
        close each persona's runtime (its conversation ends, its queue stops, its memory closes).
        Callers stop their own users of a session (a turn in progress) before calling this.

        The stop flag is set first: a runtime or the scheduler still being started on another thread (the
        window's start-up wake, when the app quits at once) then closes itself or does not start, instead
        of living on past this call into the interpreter's shutdown."""
        self._stopping.set()
        with self._life_lock:
            self.scheduler.shutdown()
        for runtime in self.runtimes():
            try:
                runtime.close()
            except Exception as exc:  # closing must go on whatever one persona's memory does
                log.warning("closing %s failed: %s", runtime.slug, exc)
        with self._state_lock:
            self._runtimes = {}
        self.pool.close()
        self.notifier.close()
        if self._opened:
            self._lock.release()
            self._opened = False
