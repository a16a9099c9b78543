"""Run blocking calls off the UI thread and get their results back on it: the window's one way to work in
the background.

Two kinds of thread, both fed through the same dispatcher: run_in_background uses a shared pool (work with
no order to keep), and a SerialWorker is a lane of its own, one thread that runs its tasks in order (work
that shares a SQLite connection, a persona's conversation, imports one after the other).

Qt objects must be created, used and destroyed on their own thread. So the worker threads here are plain
Python threads that never own a Qt object: they run the call and emit one signal on a dispatcher that
lives on the UI thread for the whole process and is never deleted (and, for work that reports as it goes,
one signal per report). The callbacks (and the call itself, which may hold a window) are kept and released
on the UI thread only, so no window or QObject is ever destroyed by a worker thread dropping the last
reference. Closing a lane never blocks the UI: its last task (closing its connection) queues behind the
work under way.
"""

from __future__ import annotations

import gc
import itertools
import sys
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from shiboken6 import isValid

from ui.util.i18n import tr_error

Call = Callable[[], Any]
OnDone = Callable[[Any], None]
OnError = Callable[[str], None]
Report = Callable[[Any], None]  # what a reporting call is given: report(value) reaches on_progress
ReportingCall = Callable[[Report], Any]


class _Dispatcher(QObject):
    """Lives on the UI thread; results and reports arrive queued from worker threads (in the order each
    thread sent them: a call's reports before its result)."""

    delivered = Signal(int, bool, object)  # token, succeeded, value or message
    reported = Signal(int, object)  # token, what the call reported

    def __init__(self) -> None:
        super().__init__()
        self._waiting: dict[int, tuple[Callable[..., Any] | None, OnDone, OnError, OnDone | None]] = {}
        self._tokens = itertools.count()
        self.delivered.connect(self._deliver)
        self.reported.connect(self._report)

    def expect(
        self, fn: Callable[..., Any], on_done: OnDone, on_error: OnError, on_progress: OnDone | None = None
    ) -> int:
        token = next(self._tokens)
        self._waiting[token] = (fn, on_done, on_error, on_progress)
        return token

    def call_of(self, token: int) -> tuple[Callable[..., Any] | None, bool]:
        """What a worker runs for `token`, and whether it reports before its result."""
        fn, _, _, on_progress = self._waiting[token]
        return fn, on_progress is not None

    @Slot(int, bool, object)
    def _deliver(self, token: int, ok: bool, value: Any) -> None:
        _, on_done, on_error, _ = self._waiting.pop(token)  # released here, on the UI thread
        (on_done if ok else on_error)(value)

    @Slot(int, object)
    def _report(self, token: int, value: Any) -> None:
        on_progress = self._waiting[token][3]
        if on_progress is not None:
            on_progress(value)


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
        fn, reporting = dispatcher.call_of(token)
        args = (lambda report: dispatcher.reported.emit(token, report),) if reporting else ()
        try:
            value = fn(*args)  # type: ignore[misc]
        except Exception as exc:  # shown to the person (in their language), never swallowed
            ok, value = False, tr_error(exc)
        else:
            ok = True
        del fn
        dispatcher.delivered.emit(token, ok, value)

    return run


def _submit(
    executor: Executor,
    fn: Callable[..., Any],
    on_done: OnDone,
    on_error: OnError,
    on_progress: OnDone | None = None,
) -> None:
    dispatcher = _the_dispatcher()
    executor.submit(_work(dispatcher.expect(fn, on_done, on_error, on_progress), dispatcher))


def run_in_background(fn: Call, on_done: OnDone, on_error: OnError) -> None:
    """Call fn on a shared worker thread; on_done(result) or on_error(message) then runs on the UI thread."""
    global _shared
    if _shared is None:
        _shared = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ui-task")
    _submit(_shared, fn, on_done, on_error)


def while_open(widget: QObject, callback: Callable[..., None]) -> Callable[..., None]:
    """A callback for a window the person may close (and Qt delete) before the worker's result arrives:
    the result is then dropped instead of reaching a deleted widget."""

    def deliver(*args: Any) -> None:
        if isValid(widget):
            callback(*args)

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
    """A lane: one background thread, named `name`, that runs tasks in order (work sharing one SQLite
    connection, see ui/util/readers.py, or one persona's conversation), with results delivered on the UI
    thread. Closing never blocks the UI: a final task (e.g. closing the connection) is queued behind the
    running work, which is expected to stop at its next cancel check. Work asked for once it is closed
    is dropped (a window closing no longer wants it), and closing twice is harmless."""

    def __init__(self, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._pending = 0
        self._closed = False

    @property
    def idle(self) -> bool:
        return self._pending == 0

    @property
    def closed(self) -> bool:
        return self._closed

    def run(self, fn: Call, on_done: OnDone, on_error: OnError) -> None:
        self._run(fn, on_done, on_error, None)

    def run_reporting(
        self, fn: ReportingCall, on_progress: OnDone, on_done: OnDone, on_error: OnError
    ) -> None:
        """fn(report) on the lane; each report(value) it makes reaches on_progress(value) on the UI thread,
        in order and before on_done. Report sparingly (a streamed reply coalesces its tokens first)."""
        self._run(fn, on_done, on_error, on_progress)

    def _run(
        self, fn: Callable[..., Any], on_done: OnDone, on_error: OnError, on_progress: OnDone | None
    ) -> None:
        if self._closed:
            return

        # Counted on the UI thread only: incremented here, decremented where the result is delivered.
        def done(value: Any) -> None:
            self._pending -= 1
            on_done(value)

        def error(message: str) -> None:
            self._pending -= 1
            on_error(message)

        self._pending += 1
        _submit(self._executor, fn, done, error, on_progress)

    def close(self, final: Callable[[], None] | None = None) -> None:
        """Queue final (it must hold no window or other Qt object: the lane's thread drops it) and let the
        thread end once its queue is done."""
        if self._closed:
            return
        self._closed = True
        if final is not None:
            self._executor.submit(final)
        self._executor.shutdown(wait=False)

    def wait(self) -> None:
        """For tests and for process exit: close, and block until every queued task has run."""
        self._closed = True
        self._executor.shutdown(wait=True)
