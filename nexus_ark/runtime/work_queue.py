"""A persona's serial work queue: one thread does everything that writes its memory, the person first.

Work is either the person's (a turn, an edit, a delete: run as soon as the running step ends) or background
(dreams, compression, heartbeats, scheduled jobs). A background item runs in steps: its function returns
AGAIN to be called once more, and between two calls the person's work goes first. When the person's work
arrives while a background step runs, that step's cancel event is set: the step stops at its next token or
between its own small steps, and (returning AGAIN) resumes afterwards from what it recorded. So a waiting
turn is served within one model step, and no two writers ever share the persona's connection.

Background items may carry a key: a second item with the key of one queued or running is refused (no two
runs of one scheduled job overlap).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

log = logging.getLogger(__name__)

USER: Final = 0
BACKGROUND: Final = 1


class _Again:
    def __repr__(self) -> str:
        return "AGAIN"


AGAIN: Final = _Again()  # returned by a background step that has more to do


class QueueStopped(RuntimeError):
    """The queue was stopped before the item ran."""


@dataclass(eq=False)
class WorkItem:
    name: str
    priority: int
    fn: Callable[[threading.Event], Any]
    key: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None
    steps: int = 0
    abandoned: bool = False  # cancelled for good (the person stopped a dream): no further step
    started_at: float | None = None

    def wait(self, timeout: float | None = None) -> Any:
        """The item's result (its exception re-raised); TimeoutError if it has not finished in time."""
        if not self.done.wait(timeout):
            raise TimeoutError(f"{self.name} did not finish within {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result


class WorkQueue:
    def __init__(self, name: str) -> None:
        self.name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[int, int, WorkItem]] = []
        self._seq = itertools.count()
        self._keys: set[str] = set()
        self._current: WorkItem | None = None
        self._stopping = False
        self.on_user_waiting: list[Callable[[], None]] = []  # e.g. "compression, give way"
        self._thread = threading.Thread(target=self._loop, name=f"persona-{name}", daemon=True)
        self._thread.start()

    # -- submitting -------------------------------------------------------------------------------
    def submit(self, name: str, fn: Callable[[threading.Event], Any]) -> WorkItem:
        """The person's work: runs next, before any queued background item."""
        item = WorkItem(name, USER, fn)
        with self._cond:
            if self._stopping:
                raise QueueStopped(f"{self.name} is closing")
            heapq.heappush(self._heap, (USER, next(self._seq), item))
            current = self._current
            self._cond.notify_all()
        if current is not None and current.priority == BACKGROUND:
            current.cancel.set()  # the running step gives way at its next token or small step
            for hook in list(self.on_user_waiting):
                try:
                    hook()
                except Exception:  # a hook must never keep the person waiting
                    log.exception("give-way hook failed")
        return item

    def submit_background(
        self, name: str, fn: Callable[[threading.Event], Any], *, key: str | None = None
    ) -> WorkItem | None:
        """Background work; None when an item with the same key is already queued or running."""
        item = WorkItem(name, BACKGROUND, fn, key=key)
        with self._cond:
            if self._stopping:
                return None
            if key is not None:
                if key in self._keys:
                    return None
                self._keys.add(key)
            heapq.heappush(self._heap, (BACKGROUND, next(self._seq), item))
            self._cond.notify_all()
        return item

    def abandon(self, item: WorkItem) -> None:
        """Stop a background item for good: the running step is told to stop, no further step runs."""
        with self._cond:
            item.abandoned = True
            item.cancel.set()
            self._cond.notify_all()

    def call(self, name: str, fn: Callable[[], Any], timeout: float | None = None) -> Any:
        """Run a short piece of the person's work on the queue's thread and return its result."""
        if threading.current_thread() is self._thread:
            return fn()  # already on the queue: no deadlock waiting on ourselves
        return self.submit(name, lambda _cancel: fn()).wait(timeout)

    def on_its_thread(self) -> bool:
        return threading.current_thread() is self._thread

    # -- state ------------------------------------------------------------------------------------
    @property
    def running(self) -> str | None:
        with self._cond:
            return self._current.name if self._current else None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is queued or running (tests, simulation, shutdown)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._heap or self._current is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- stopping ---------------------------------------------------------------------------------
    def stop(self, timeout: float = 60, *, final: Callable[[], None] | None = None) -> None:
        """The person's queued work still runs; background work not yet started is dropped (a dream and
        the scheduled jobs resume from their records at the next start); the running step is told to stop.
        `final` runs on the queue's thread after the person's work, last of all (closing what the thread
        owns: a persona's memory is opened and closed on its queue's thread)."""
        with self._cond:
            self._stopping = True
            kept = [e for e in self._heap if e[0] == USER]
            dropped = [e[2] for e in self._heap if e[0] != USER]
            self._heap = kept
            if final is not None:
                last = WorkItem("close", USER, lambda _cancel: final())
                self._heap.append((USER, next(self._seq), last))
            heapq.heapify(self._heap)
            if self._current is not None and self._current.priority == BACKGROUND:
                self._current.cancel.set()
            self._cond.notify_all()
        for item in dropped:
            self._finish(item, error=QueueStopped(f"{item.name} was not run: {self.name} closed"))
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("%s's work queue still runs %s at exit", self.name, self.running)

    # -- the thread -------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._heap and not self._stopping:
                    self._cond.wait()
                if not self._heap:
                    return  # stopping, and nothing of the person's left
                priority, seq, item = heapq.heappop(self._heap)
                if item.abandoned:
                    self._cond.notify_all()
                    dropped = True
                else:
                    dropped = False
                    # A step that gave way runs again with a fresh flag; a stop request stays set.
                    if item.priority == BACKGROUND and item.steps:
                        item.cancel.clear()
                    self._current = item
            if dropped:
                self._finish(item, error=QueueStopped(f"{item.name} was cancelled"))
                continue
            again = False
            try:
                if item.started_at is None:
                    item.started_at = time.monotonic()
                item.steps += 1
                result = item.fn(item.cancel)
                again = result is AGAIN and not item.abandoned
                if not again:
                    item.result = None if result is AGAIN else result
            except BaseException as exc:  # reported to whoever waits on the item
                if item.priority == BACKGROUND:
                    log.warning("%s: background work %s failed: %s", self.name, item.name, exc)
                item.error = exc
            with self._cond:
                self._current = None
                if again and not self._stopping:
                    # Same place in line: it goes on as soon as the person's work is done.
                    heapq.heappush(self._heap, (priority, seq, item))
                    self._cond.notify_all()
                    continue
            if again:
                item.error = QueueStopped(f"{item.name} stopped: {self.name} closed")
            self._finish(item)

    def _finish(self, item: WorkItem, error: BaseException | None = None) -> None:
        if error is not None:
            item.error = error
        with self._cond:
            if item.key is not None:
                self._keys.discard(item.key)
            self._cond.notify_all()
        item.done.set()
