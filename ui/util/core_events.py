"""Core events (nexus_ark.events.EventHub) as Qt signals on the UI thread.

The hub calls its subscribers on the publisher's thread (a session worker, the scheduler, a dream). Each
subscription here is a plain function that holds no window and no per-window Qt object: it emits on one
bridge that lives on the UI thread for the whole process and is never deleted (as ui/util/tasks.py does for
results), so no worker thread ever owns or releases a window's object. Each `CoreEvents` then takes its
own events off the bridge, on the UI thread, and re-emits them for its persona.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from nexus_ark.events import EventHub

# Topics and payloads: app.events. dream_* come from the dreaming work.
PERSONA_TOPICS = ("turn_done", "drives_changed", "mind_changed", "dream_progress", "dream_finished")
# What the main window follows for every persona: messages they write first, and the runtime's work.
APP_TOPICS = ("autonomous_message", "event_processed")
# A proposal to change a soul made, accepted (the soul changed) or declined: what waits for the person.
SOUL_TOPICS = ("soul_proposal", "soul_changed", "soul_declined")


class _Bridge(QObject):
    """Lives on the UI thread; events arrive queued from any thread."""

    received = Signal(int, str, object)  # subscription token, topic, payload


_bridge: _Bridge | None = None
_tokens = itertools.count(1)


def _the_bridge() -> _Bridge:
    global _bridge
    if _bridge is None:  # first use is on the UI thread (a window subscribing)
        _bridge = _Bridge()
    return _bridge


class CoreEvents(QObject):
    """One persona's core events, re-emitted on the UI thread as `happened(topic, payload)`.

    Owned by a window (pass it as parent); call close() when the window closes. An event published while
    close() runs may still reach the bridge: it is dropped there, since nobody listens for its token."""

    happened = Signal(str, object)

    def __init__(
        self,
        hub: EventHub,
        persona: str | None,
        topics: Iterable[str] = PERSONA_TOPICS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.persona = persona
        self._token = next(_tokens)
        bridge = _the_bridge()
        bridge.received.connect(self._on_received)
        self._unsubscribe: list[Callable[[], None]] = [
            hub.subscribe(topic, _forwarder(bridge, self._token, persona)) for topic in topics
        ]

    @Slot(int, str, object)
    def _on_received(self, token: int, topic: str, payload: Any) -> None:
        if token == self._token:
            self.happened.emit(topic, payload)

    def close(self) -> None:
        """Stop listening at once (never waits on a publisher)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        with contextlib.suppress(RuntimeError, TypeError):  # already disconnected
            _the_bridge().received.disconnect(self._on_received)


def _forwarder(bridge: _Bridge, token: int, persona: str | None) -> Callable[[str, dict[str, Any]], None]:
    """What runs on the publisher's thread: a filter (None: every persona) and one queued signal; it
    references no window."""

    def forward(topic: str, payload: dict[str, Any]) -> None:
        if persona is None or payload.get("persona") == persona:
            bridge.received.emit(token, topic, dict(payload))

    return forward
