"""What the inference thread of a llama.cpp model keeps track of: the requests queued to it, the model's
contexts (slots) and the prompt each last evaluated (to route the next one to the context it extends), and
a prompt evaluated in steps so a request can stop, or give way to a more urgent one, part-way."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from nexus_ark.providers.base import GenerationParams

DONE = object()  # the last item a request's `out` queue carries
CLOSE = 1 << 30  # the priority of the request to stop the thread: after every request already queued
# The prompt is evaluated in steps of this many tokens, with a look at the request's cancel flag between
# them: a long prompt (a dream's material) stops within a step when the person's turn is waiting.
PREFILL_STEP = 256  # on 2 busy cores ~1 s a step; 128 was slower overall, 256 no slower than llama.cpp's 512


class Cancelled(Exception):
    """The request was cancelled part-way through evaluating its prompt."""


class NoFreeContext(Exception):
    """Every context is answering someone: the request goes back in line."""


@contextmanager
def stoppable_prefill(
    llm: Any, cancel: threading.Event, between: Callable[[], None] = lambda: None
) -> Iterator[None]:
    """llama-cpp-python evaluates a whole prompt in one call, deaf to cancellation; its generate() calls
    self.eval, so for one request an instance attribute evaluates it in steps instead. `between` runs
    between two steps (a more urgent request is served there)."""
    whole = llm.eval

    def in_steps(tokens: Any) -> None:
        for start in range(0, len(tokens), PREFILL_STEP):
            if cancel.is_set():
                raise Cancelled
            if start:
                between()
            whole(tokens[start : start + PREFILL_STEP])

    llm.eval = in_steps
    try:
        yield
    finally:
        del llm.eval


@dataclass
class Slot:
    """One llama.cpp context of the model, and what it last evaluated (to route the next prompt)."""

    index: int
    llm: Any = None  # loaded on first use: a model used only for chat never pays for a second KV cache
    text: str = ""  # the last prompt and reply, flattened as flatten() does
    used: int = 0  # when it last answered (a counter): the least recently used one is reused first
    busy: bool = False  # a request is being answered on it (one waiting on a more urgent one, too)


@dataclass(frozen=True, slots=True)
class EvalStats:
    """What llama.cpp did for the last finished request: which context answered it and how many prompt
    tokens it evaluated (llama.cpp's own counter; a reused prefix is not evaluated again)."""

    context: int
    prompt_evaluated: int
    context_tokens: int  # the tokens the context holds afterwards (prompt and reply)


def flatten(messages: list[dict[str, Any]]) -> str:
    # Monotonic in the chat template: a shared prefix here is a shared prefix of the prompt's tokens.
    return "".join(f"\x00{m['role']}\x01{m.get('content') or ''}" for m in messages)


def shared_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # binary search on the first difference: prompts run to tens of thousands of chars
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass
class Job:
    messages: list[dict[str, Any]]
    params: GenerationParams
    cancel: threading.Event
    json_schema: dict[str, Any] | None = None
    out: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    priority: int = 0


# llama-cpp-python keeps two things this app needs behind private attributes (0.3.x); each is read in one
# place, here, so a release that renames one breaks one function and not the inference thread.


def context_pointer(llm: Any) -> Any:
    """The llama.cpp context of a Llama, for llama.cpp's performance counters (llama_perf_context):
    llama-cpp-python has no public accessor for it, only the private `_ctx.ctx`."""
    return llm._ctx.ctx


def parameter_count(llm: Any) -> int:
    """How many parameters the loaded model has: llama-cpp-python offers n_params() only on its private
    model wrapper (`_model`)."""
    return int(llm._model.n_params())
