"""Run a blocking call on Qt's thread pool and get its result back on the UI thread."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
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


class SerialWorker:
    """One background thread that runs tasks in order (for work sharing one SQLite connection), with
    results delivered on the UI thread. Closing never blocks the UI: a final task (e.g. closing the
    connection) is queued behind the running work, which is expected to stop at its next cancel check."""

    def __init__(self, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._pending = 0

    @property
    def idle(self) -> bool:
        return self._pending == 0

    def run(
        self, fn: Callable[[], Any], on_done: Callable[[Any], None], on_error: Callable[[str], None]
    ) -> None:
        # Counted on the UI thread only: incremented here, decremented where the result is delivered.
        def done(value: Any) -> None:
            self._pending -= 1
            on_done(value)

        def error(message: str) -> None:
            self._pending -= 1
            on_error(message)

        relay = _Relay(done, error)
        task = _Task(fn, relay)
        _alive.update({relay, task})
        self._pending += 1
        self._executor.submit(task.run)

    def close(self, final: Callable[[], None] | None = None) -> None:
        if final is not None:
            self._executor.submit(final)
        self._executor.shutdown(wait=False)

    def wait(self) -> None:
        """For tests and for process exit: block until every queued task has run."""
        self._executor.shutdown(wait=True)
