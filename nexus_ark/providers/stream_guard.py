"""Timeouts, cancellation and retries around a network stream, for every HTTP backend alike.

The blocking stream runs on a producer thread; the consumer waits with deadlines: `first_token_s` for the
first item (all attempts together), `between_tokens_s` for each next one. A stalled server raises
ProviderTimeoutError instead of hanging. Transient errors are retried with exponential backoff, but only
before the first item arrived (after that a retry would repeat text the person has already read) and only
within the first item's time.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from nexus_ark.errors import ProviderError, ProviderTimeoutError
from nexus_ark.model_config import Timeouts
from nexus_ark.notices import notice

__all__ = ["RetryPolicy", "Timeouts", "guarded_stream"]

T = TypeVar("T")
_END = object()


class RetryPolicy(BaseModel):
    attempts: int = Field(default=3, ge=1, le=10)
    backoff_s: float = Field(default=0.5, ge=0)


def guarded_stream(
    open_stream: Callable[[], Iterator[T]],
    *,
    timeouts: Timeouts,
    cancel: threading.Event | None,
    what: str,
    retry: RetryPolicy | None = None,
) -> Iterator[T]:
    """Yield the items of `open_stream()`; returns early (no error) when `cancel` is set."""
    retry = retry or RetryPolicy()
    # `first_token_s` is the person's whole wait for the first word, retries included: three stalled
    # attempts took three times as long while the message named one.
    first_by = time.monotonic() + timeouts.first_token_s
    for attempt in range(retry.attempts):
        received_any = False
        try:
            for item in _one_attempt(open_stream, timeouts, cancel, what, first_by):
                received_any = True
                yield item
            return
        except ProviderError as exc:
            last_try = attempt == retry.attempts - 1
            delay = retry.backoff_s * (2**attempt)
            if received_any or not exc.transient or last_try or time.monotonic() + delay >= first_by:
                raise
            if cancel is not None and cancel.wait(delay):
                return
            if cancel is None:
                time.sleep(delay)


def _one_attempt(
    open_stream: Callable[[], Iterator[T]],
    timeouts: Timeouts,
    cancel: threading.Event | None,
    what: str,
    first_by: float,
) -> Iterator[T]:
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()
    stop = threading.Event()

    def produce() -> None:
        stream = None
        try:
            stream = open_stream()
            for item in stream:
                if stop.is_set():
                    break
                items.put(item)
            items.put(_END)
        except BaseException as exc:  # handed to the consumer, which raises it on its own thread
            items.put(exc)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()

    threading.Thread(target=produce, name=f"stream-{what}", daemon=True).start()
    first = True
    try:
        while True:
            limit = timeouts.first_token_s if first else timeouts.between_tokens_s
            deadline = first_by if first else time.monotonic() + limit
            while True:
                if cancel is not None and cancel.is_set():
                    return
                try:
                    item = items.get(timeout=min(0.05, max(0.0, deadline - time.monotonic())))
                    break
                except queue.Empty:
                    if time.monotonic() >= deadline:
                        phase = notice("the first token") if first else notice("the next token")
                        raise ProviderTimeoutError(
                            notice(
                                "{server} sent nothing for {seconds:g} s while waiting for {phase}.",
                                server=what,
                                seconds=limit,
                                phase=phase,
                            ),
                            hint=notice("The server may be overloaded or stuck; the reply so far was kept."),
                        ) from None
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            first = False
            yield item
    finally:
        stop.set()  # the producer stops at its next item; a stalled one ends at the HTTP read timeout
