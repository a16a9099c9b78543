"""What the voice's own threads say, carried onto the UI thread.

The speech queue reports from its playback thread and the listener from the microphone's thread and its
transcribing worker (nexus_ark/voice). Each report is emitted on one bridge that lives on the UI thread
for the whole process and is never deleted (as ui/util/tasks.py does for results): no voice thread ever
holds or releases a window's object. Each receiver takes its own reports off the bridge by its token.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from shiboken6 import isValid


class _Bridge(QObject):
    """Lives on the UI thread; reports arrive queued from any thread."""

    arrived = Signal(int, str, object)  # token, what happened, its value


_bridge: _Bridge | None = None
_tokens = itertools.count(1)


def _the_bridge() -> _Bridge:
    global _bridge
    if _bridge is None:  # first use is on the UI thread (a window's voice controller being made)
        _bridge = _Bridge()
    return _bridge


class VoiceReports(QObject):
    """A receiver's reports, re-emitted on the UI thread as `arrived(kind, value)`. `sender(kind)` is the
    plain function a voice thread calls; it holds no Qt object but the bridge."""

    arrived = Signal(str, object)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.token = next(_tokens)
        _the_bridge().arrived.connect(self._take)

    def sender_of(self, kind: str) -> Callable[..., None]:
        bridge, token = _the_bridge(), self.token

        def send(value: Any = None) -> None:
            bridge.arrived.emit(token, kind, value)

        return send

    @Slot(int, str, object)
    def _take(self, token: int, kind: str, value: Any) -> None:
        if token == self.token and isValid(self):
            self.arrived.emit(kind, value)
