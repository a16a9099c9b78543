"""A streaming turn run on a persona's queue and read on the caller's thread.

The turn (the person's work: first in line) runs on the queue's thread, which alone drives the persona's
memory; what it yields crosses to the caller through a queue. The caller walking away, or Ctrl-C in a
terminal, stops the reply; the turn's own end (its TurnResult) is still handed back."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from nexus_ark.agent.session import ChatSession
from nexus_ark.providers.base import model_priority
from nexus_ark.runtime.host import StartTurn
from nexus_ark.runtime.work_queue import USER, WorkQueue


class _End:
    pass


_END = _End()


def stream_turn(
    work_queue: WorkQueue,
    name: str,
    open_session: Callable[[], ChatSession],
    start: StartTurn,
    cancel: threading.Event | None,
    after: Callable[[ChatSession], None],
) -> Iterator[Any]:
    """Run `start(session, cancel)` on the queue and yield what it yields; `after(session)` runs on the
    queue's thread once a turn produced something (the work after a turn: drives, compression)."""
    stop = cancel or threading.Event()
    out: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def work(_: threading.Event) -> None:
        produced = False
        chat: ChatSession | None = None
        try:
            with model_priority(USER):
                chat = open_session()
                for item in start(chat, stop):
                    produced = True
                    out.put(item)
        except BaseException as exc:
            out.put(exc)
        finally:
            out.put(_END)
        if produced and chat is not None:
            after(chat)

    work_queue.submit(name, work)  # on the first step of the iteration, as a generator does its work
    yield from _read(out, stop)


def _take(out: queue.SimpleQueue[Any]) -> Any:
    """The next item. Waits in short steps: a Ctrl-C whose signal another thread took (the voice, a model
    loading) is only raised when this thread runs Python again, so a stalled reply (a model still loading,
    a slow first token) still stops within a fifth of a second rather than at the next token."""
    while True:
        try:
            return out.get(timeout=0.2)
        except queue.Empty:
            pass


def _read(out: queue.SimpleQueue[Any], stop: threading.Event) -> Iterator[Any]:
    finished = False
    try:
        while True:
            try:
                item = _take(out)
            except KeyboardInterrupt:  # Ctrl-C in a terminal: stop the reply, still hand back its end
                stop.set()
                continue
            if item is _END:
                finished = True
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        if not finished:  # the caller walked away: stop the reply
            stop.set()
