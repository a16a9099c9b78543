"""Run a blocking call on Qt's thread pool and get its result back on the UI thread."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from nexus_ark.errors import NexusArkError

# Python owns the task and relay objects: keep them alive until the result is delivered, or the
# garbage collector may delete them while the pool thread still runs.
_alive: set[object] = set()


class _Relay(QObject):
    """Lives on the UI thread; its slots run there because the signals arrive queued."""

    succeeded = Signal(object)
    failed = Signal(str)

    def __init__(self, on_done: Callable[[Any], None], on_error: Callable[[str], None]) -> None:
        super().__init__()
        self._on_done, self._on_error = on_done, on_error
        self.succeeded.connect(self._done)
        self.failed.connect(self._error)

    @Slot(object)
    def _done(self, value: Any) -> None:
        self._release()
        self._on_done(value)

    @Slot(str)
    def _error(self, message: str) -> None:
        self._release()
        self._on_error(message)

    def _release(self) -> None:
        _alive.difference_update({o for o in _alive if o is self or getattr(o, "relay", None) is self})


class _Task(QRunnable):
    def __init__(self, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self._fn, self.relay = fn, relay

    def run(self) -> None:
        try:
            value = self._fn()
        except NexusArkError as exc:
            self._deliver(self.relay.failed, str(exc))
        except Exception as exc:  # shown to the person, never swallowed
            self._deliver(self.relay.failed, f"{type(exc).__name__}: {exc}")
        else:
            self._deliver(self.relay.succeeded, value)

    @staticmethod
    def _deliver(signal: Any, value: Any) -> None:
        # RuntimeError: the window that asked has been closed meanwhile, so there is nobody to tell.
        with contextlib.suppress(RuntimeError):
            signal.emit(value)


def run_in_background(
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[str], None],
    pool: QThreadPool | None = None,
) -> None:
    """Call fn on a pool thread; on_done(result) or on_error(message) then runs on the UI thread.
    A pool with one thread serializes tasks that share a resource (such as one SQLite connection)."""
    relay = _Relay(on_done, on_error)
    task = _Task(fn, relay)
    task.setAutoDelete(False)  # Python, not the pool, owns the wrapper
    _alive.update({relay, task})
    (pool or QThreadPool.globalInstance()).start(task)
