"""Run blocking calls off the UI thread and get their results back on it.

Qt objects must be created, used and destroyed on their own thread. So the worker threads here are plain
Python threads that never own a Qt object: they run the call and emit one signal on a dispatcher that
lives on the UI thread for the whole process and is never deleted. The callbacks (and the call itself,
which may hold a window) are kept and released on the UI thread only, so no window or QObject is ever
destroyed by a worker thread dropping the last reference.
"""

from __future__ import annotations

import gc
import itertools
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from shiboken6 import isValid

from ui.util.i18n import tr_error

Call = Callable[[], Any]
OnDone = Callable[[Any], None]
OnError = Callable[[str], None]


class _Dispatcher(QObject):
    """Lives on the UI thread; results arrive queued from worker threads."""

    delivered = Signal(int, bool, object)  # token, succeeded, value or message

    def __init__(self) -> None:
        super().__init__()
        self._waiting: dict[int, tuple[Call | None, OnDone, OnError]] = {}
        self._tokens = itertools.count()
        self.delivered.connect(self._deliver)

    def expect(self, fn: Call, on_done: OnDone, on_error: OnError) -> int:
        token = next(self._tokens)
        self._waiting[token] = (fn, on_done, on_error)
        return token

    @Slot(int, bool, object)
    def _deliver(self, token: int, ok: bool, value: Any) -> None:
        _, on_done, on_error = self._waiting.pop(token)  # released here, on the UI thread
        (on_done if ok else on_error)(value)


_dispatcher: _Dispatcher | None = None
_shared: ThreadPoolExecutor | None = None


def _the_dispatcher() -> _Dispatcher:
    global _dispatcher
    if _dispatcher is None:  # first use is on the UI thread (a window asking for work)
        _dispatcher = _Dispatcher()
    return _dispatcher


def _work(token: int, dispatcher: _Dispatcher) -> Callable[[], None]:
    """What a worker thread runs: the call, then one signal. It holds no reference to the call after
    running it (the dispatcher keeps that, on the UI thread)."""

    def run() -> None:
        fn = dispatcher._waiting[token][0]
        try:
            value = fn()  # type: ignore[misc]
        except Exception as exc:  # shown to the person (in their language), never swallowed
            ok, value = False, tr_error(exc)
        else:
            ok = True
        del fn
        dispatcher.delivered.emit(token, ok, value)

    return run


def run_in_background(fn: Call, on_done: OnDone, on_error: OnError) -> None:
    """Call fn on a shared worker thread; on_done(result) or on_error(message) then runs on the UI thread."""
    global _shared
    if _shared is None:
        _shared = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ui-task")
    dispatcher = _the_dispatcher()
    _shared.submit(_work(dispatcher.expect(fn, on_done, on_error), dispatcher))


def while_open(widget: QObject, callback: OnDone) -> OnDone:
    """A callback for a window the person may close (and Qt delete) before the worker's result arrives:
    the result is then dropped instead of reaching a deleted widget."""

    def deliver(value: Any) -> None:
        if isValid(widget):
            callback(value)

    return deliver


def freeze_long_lived() -> None:
    """Take what exists once the window is built out of every later garbage collection; call it once, then.

    A full collection holds the interpreter lock while it walks every tracked object, so whichever thread
    sets it off (a worker allocating thousands of objects while it imports a document or a card) stops the
    window's thread for as long as the walk takes: 48-63 ms here with the modules, the core and the window
    loaded (docs/benchmarks.md). Those objects live as long as the app; frozen, they are never walked again
    and a full collection walks only what was made since. The garbage made while starting is collected
    first, before the window's loop runs, so none of it is kept."""
    gc.collect()
    gc.freeze()


# How long a thread running Python may keep the interpreter lock once another thread asks for it.
UI_SWITCH_INTERVAL_S = 0.0005


def favour_the_ui_thread() -> float:
    """Let the UI thread have the interpreter lock back within half a millisecond (Python's default: 5 ms).

    The UI thread gives the lock up many times a frame (whenever it waits for events, and in Qt calls), and
    each time a worker is running Python it waited for that worker's whole turn to get it back: with one
    worker busy in Python (parsing, a dream's bookkeeping, a document's text) the window stalled 46-234 ms
    while scrolling, streaming or switching personas, and 8-26 ms with the shorter turn
    (bench.chat_view_stall --busy-python, docs/benchmarks.md).
    Workers in C (SQLite, llama.cpp, the embedder) release the lock and lose nothing; one in Python changes
    hands more often, a cost of microseconds a switch. Returns the interval it replaced."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(UI_SWITCH_INTERVAL_S)
    return previous


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

    def run(self, fn: Call, on_done: OnDone, on_error: OnError) -> None:
        # Counted on the UI thread only: incremented here, decremented where the result is delivered.
        def done(value: Any) -> None:
            self._pending -= 1
            on_done(value)

        def error(message: str) -> None:
            self._pending -= 1
            on_error(message)

        dispatcher = _the_dispatcher()
        self._pending += 1
        self._executor.submit(_work(dispatcher.expect(fn, done, error), dispatcher))

    def close(self, final: Callable[[], None] | None = None) -> None:
        if final is not None:
            self._executor.submit(final)
        self._executor.shutdown(wait=False)

    def wait(self) -> None:
        """For tests and for process exit: block until every queued task has run."""
        self._executor.shutdown(wait=True)
