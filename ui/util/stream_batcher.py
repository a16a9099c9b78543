"""Streamed text held and handed on in batches: one report every `interval_s` (a few tens of
milliseconds), never one per token, so a fast model does not flood the UI thread with signals. The one
batcher the chat's and the rooms' lanes share (ui/chat/session_worker.py, ui/rooms/room_worker.py).

Plain Python, no Qt: it runs on a lane's thread, and what it emits goes through the lane's report."""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_INTERVAL_S = 0.04


class StreamBatcher:
    """Pieces of streamed text, joined and passed to `emit(key, text)` once `interval_s` has passed
    since the last batch (the first piece goes at once). `key` says whose words they are (a room's
    member): a piece with another key hands on what the last one held first, so batches never mix
    speakers. Call flush() when the stream ends or something else is reported, so order is kept."""

    def __init__(
        self,
        emit: Callable[[str, str], None],
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._interval_s = interval_s
        self._clock = clock
        self._key = ""
        self._held: list[str] = []
        self._sent_at: float | None = None

    def add(self, text: str, key: str = "") -> None:
        if key != self._key:
            self.flush()
            self._key = key
        self._held.append(text)
        if self._sent_at is None or self._clock() - self._sent_at >= self._interval_s:
            self.flush()

    def flush(self) -> None:
        """Hand on what is held, if anything."""
        if self._held:
            text = "".join(self._held)
            self._held.clear()
            self._sent_at = self._clock()
            self._emit(self._key, text)
