"""A tiny Qt-free publish/subscribe hub.

Core code reports what happened here; the UI subscribes and moves callbacks onto its own thread.
Callbacks run on the publisher's thread, so a subscriber must be quick and thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Handler = Callable[[str, dict[str, Any]], None]


class EventHub:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handlers: dict[str, list[Handler]] = defaultdict(list)

    def subscribe(self, topic: str, handler: Handler) -> Callable[[], None]:
        """Subscribe to a topic ("*" for all); returns a function that unsubscribes."""
        with self._lock:
            self._handlers[topic].append(handler)

        def unsubscribe() -> None:
            with self._lock:
                if handler in self._handlers[topic]:
                    self._handlers[topic].remove(handler)

        return unsubscribe

    def publish(self, topic: str, **payload: Any) -> None:
        with self._lock:
            handlers = [*self._handlers.get(topic, ()), *self._handlers.get("*", ())]
        for handler in handlers:
            try:
                handler(topic, payload)
            except Exception:  # one broken subscriber must not break the publisher
                log.exception("event handler failed for %s", topic)
