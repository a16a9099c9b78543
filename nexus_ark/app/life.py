"""app.life: the personas living between conversations. The scheduler's tick (every open persona looks at
what is due), the tray's pause (no persona writes first until resumed), desktop notifications for what a
persona wrote first, and the inbox that holds those messages."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from nexus_ark.app.host import AppRoot
from nexus_ark.app.personas import Personas
from nexus_ark.memory.inbox import Inbox, InboxEntry
from nexus_ark.memory.room_keys import is_room_key
from nexus_ark.notify import Notifier, NullNotifier, OnClick
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.scheduler import RuntimeScheduler

log = logging.getLogger(__name__)


class Notifications:
    """Desktop notifications and the pause: what a runtime is told by (RuntimeHost.notify and
    autonomy_paused). The window and `nexus-ark run` set the real notifier (nexus_ark.notify.
    default_notifier); the window sets what a click opens."""

    def __init__(self, root: AppRoot, notifier: Notifier | None = None) -> None:
        self._root = root
        self.notifier: Notifier = notifier or NullNotifier()
        self.notification_click: Callable[[str], OnClick] | None = None
        self.paused = False  # the tray's "Pause": no persona writes first until resumed

    def set_paused(self, paused: bool) -> None:
        self.paused = paused

    def notify(self, title: str, body: str, slug: str) -> bool:
        if not self._root.settings.desktop_notifications:  # turned off in Settings: the inbox holds it
            return False
        on_click = self.notification_click(slug) if self.notification_click is not None else None
        try:
            return self.notifier.notify(title, body, on_click=on_click)
        except Exception as exc:  # the inbox holds the message either way
            log.warning("desktop notification failed: %s", exc)
            return False


class Life:
    """Given the root's shared objects, the personas, the notifications, how a room's key reads as its
    title (the inbox names the room a message was written in) and the app's stop flag."""

    def __init__(
        self,
        root: AppRoot,
        personas: Personas,
        notifications: Notifications,
        room_title: Callable[[str], str | None],
        stopping: threading.Event,
    ) -> None:
        self._root = root
        self._personas = personas
        self.notifications = notifications
        self._room_title = room_title
        self._stopping = stopping
        # Held while the scheduler starts or stops, so start() on a worker and stop() never interleave.
        self._life_lock = threading.Lock()
        self.scheduler = RuntimeScheduler(self._tick_all)

    # -- the pause and notifications (the notifications' own, here for the window's tray) --------------
    @property
    def paused(self) -> bool:
        return self.notifications.paused

    def set_paused(self, paused: bool) -> None:
        self.notifications.set_paused(paused)

    # -- the scheduler --------------------------------------------------------------------------------
    def start(self, interval_s: float = 60.0) -> None:
        """Start the scheduler: every open persona looks at what is due now (missed runs coalesce into one
        at once) and then every `interval_s` seconds. Once the app's close has begun it starts nothing: a
        scheduler started after close() stopped it would tick into the interpreter's shutdown."""
        with self._life_lock:
            if self._stopping.is_set():
                return
            self.scheduler.start(interval_s)

    def stop(self) -> None:
        with self._life_lock:
            self.scheduler.shutdown()

    def _tick_all(self) -> None:
        for runtime in self._personas.runtimes():
            try:
                tick(runtime)
            except Exception as exc:  # one persona's trouble must not stop the others' lives
                log.warning("%s: scheduled work not queued: %s", runtime.slug, exc)

    # -- the inbox ------------------------------------------------------------------------------------
    def inbox(self, *, unread_only: bool = False) -> list[tuple[str, InboxEntry]]:
        """Every open persona's inbox, newest first, read on read-only connections (off the UI thread)."""
        entries: list[tuple[str, InboxEntry]] = []
        for runtime in self._personas.runtimes():
            store = self._personas.open_memory(runtime.slug, read_only=True)
            try:
                found = Inbox(store, self._root.clock).entries(unread_only=unread_only)
                entries += [
                    (runtime.slug, e.model_copy(update={"room_title": self._room_title(e.room)}))
                    if is_room_key(e.room)
                    else (runtime.slug, e)
                    for e in found
                ]
            finally:
                store.close()
        return sorted(entries, key=lambda pair: pair[1].created_at, reverse=True)

    def unread_counts(self) -> dict[str, int]:
        """Unread messages each open persona wrote first (read-only connections; off the UI thread)."""
        counts: dict[str, int] = {}
        for runtime in self._personas.runtimes():
            store = self._personas.open_memory(runtime.slug, read_only=True)
            try:
                counts[runtime.slug] = Inbox(store, self._root.clock).unread()
            finally:
                store.close()
        return counts

    def mark_read(self, slug: str, message_ids: list[int] | None = None) -> int:
        """The person saw these (or all of this persona's) messages; on the persona's queue (a write)."""
        runtime = self._personas.runtime(slug)
        return runtime.queue.call("mark read", lambda: runtime.inbox.mark_read(message_ids))
