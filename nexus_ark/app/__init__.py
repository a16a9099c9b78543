"""The composition root: the data directory, the shared objects, and the parts the CLI and the window act
through (neither reaches below it except for data types).

The root keeps only what every part shares (layout, clock, events, settings and state with their stores,
the backends pool), the wiring, and open/close. The parts, each a class with its own state, given what it
needs (the root through the narrow app/host.py AppRoot, and the parts it acts through):
- app.personas (personas.py): the persona folders (`.store`) and the open personas alive, one runtime each
  (its memory's owner, conversations and queue); sessions, the ways in to a persona's memory, drives,
  dreams, the prompt a turn would send, and a persona's model choice.
- app.models (models.py): per-purpose routing, the backends pool, checks, the catalogue, downloads, the
  app's embedder and emotion reader.
- app.rooms (nexus_ark/rooms/service.py RoomService): the rooms, their open conversations and the one
  delivery of a line into a room (the journal, then the members), which a member writing first uses too.
- app.souls (souls.py): the soul's history and proposals, asked of each persona's runtime (rt.soul).
- app.admin (admin.py): the app's settings and the personas' administration (imports, backups, deletion).
- app.life (life.py): the scheduler's tick, the pause, desktop notifications and the inbox.
- app.tools (tools.py): the MCP servers the personas may use (one hub, servers started on first use and
  stopped with the app), the person's decisions per tool, and the MCP tools a turn is offered.
- app.voice (voice.py): each persona's voice (persona.toml [voice]), its speech with the readings of the
  names it knows, the recogniser, and the voices to download; engines made once and closed with the app.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from nexus_ark.app.admin import Admin
from nexus_ark.app.life import Life, Notifications
from nexus_ark.app.models import BUNDLED_HINT_KEY, ModelCheck, Models, Purpose
from nexus_ark.app.personas import Personas
from nexus_ark.app.souls import Souls
from nexus_ark.app.tools import Tools
from nexus_ark.app.voice import Voice
from nexus_ark.clock import Clock, SystemClock
from nexus_ark.config import AppSettings, AppState, SettingsStore, open_app_files
from nexus_ark.events import EventHub
from nexus_ark.instance_lock import InstanceLock
from nexus_ark.notify import Notifier
from nexus_ark.paths import DataLayout, resolve_data_dir, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.registry import BackendFactory, BackendPool, default_factory
from nexus_ark.rooms.room import RoomStore
from nexus_ark.rooms.service import RoomService
from nexus_ark.runtime.host import RuntimeHost

__all__ = ["BUNDLED_HINT_KEY", "ModelCheck", "NexusApp", "Purpose"]

log = logging.getLogger(__name__)


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
        self.pool = BackendPool(backend_factory)
        self.settings = AppSettings()
        self.settings_store = SettingsStore(self.layout.config_file, self.settings)
        self.state = AppState()
        self.state_store = SettingsStore(self.layout.state_file, self.state)
        # What the core reports (a turn done, drives recomputed, a dream's progress): the window bridges it
        # onto its own thread. Topics and payloads: docs/architecture.md "Core events".
        self.events = EventHub()
        self._shipped = shipped_personas if shipped_personas is not None else shipped_personas_dir()
        self._lock = InstanceLock(self.layout.lock_file)
        self._opened = False
        # Set first when the app closes: no persona opens and no scheduler starts after it.
        self._stopping = threading.Event()
        self._wire(PersonaStore(self.layout.personas_dir), RoomStore(self.layout.rooms_dir), notifier)

    def _wire(self, store: PersonaStore, room_store: RoomStore, notifier: Notifier | None) -> None:
        """The parts, each given what it needs; a runtime's host is made of their public calls."""
        self.models = Models(self, self.pool, store)
        self.tools = Tools(self, store)
        notifications = Notifications(self, notifier)
        host = RuntimeHost(
            clock=self.clock,
            events=self.events,
            load_persona=store.load,
            chat_backend=lambda persona: self.models.backend_for(persona, "chat"),
            internal_backend=lambda persona: self.models.backend_for(persona, "internal"),
            embedder=self.models.embedder_for_recall,
            emotions=self.models.emotions,
            backups_dir=lambda slug: self.layout.backups_dir / slug,
            notify=notifications.notify,
            autonomy_paused=lambda: notifications.paused,
            room_title=room_store.title,
            tools=self.tools,
        )
        self.personas = Personas(self, store, self.models, host, self._stopping)
        self.life = Life(self, self.personas, notifications, room_store.title, self._stopping)
        self.rooms = RoomService(room_store, self.personas, self.clock, self.events)
        self.souls = Souls(self.personas)
        self.admin = Admin(self, self.personas, self.models, self.souls)
        self.voice = Voice(self, self.personas)

    @property
    def data_dir(self) -> Path:
        return self.layout.root

    def open(self) -> NexusApp:
        """Claim the data directory, read settings and seed the shipped personas (first run only)."""
        self.layout.create()
        self._lock.acquire()
        try:
            self.settings, self.state = open_app_files(self.layout.config_file, self.layout.state_file)
            self.settings_store = SettingsStore(self.layout.config_file, self.settings)
            self.state_store = SettingsStore(self.layout.state_file, self.state)
            store = self.personas.store
            store.default_user_name = self.settings.user_name
            self.settings_store.subscribe(self._user_name_changed)
            seeded = store.seed_from(self._shipped, self.state.seeded_personas)
            if seeded or not self.layout.state_file.exists():
                self.state_store.update(seeded_personas=sorted({*self.state.seeded_personas, *seeded}))
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
        self.personas.store.default_user_name = self.settings.user_name
        for runtime in self.personas.runtimes():
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
        self.life.stop()
        self.personas.close()
        self.rooms.close()
        self.tools.close()
        self.voice.close()
        self.pool.close()
        self.life.notifications.notifier.close()
        if self._opened:
            self._lock.release()
            self._opened = False
