"""The inference thread of a llama.cpp model, a part LlamaCppBackend owns: it loads the model, takes
requests in order of priority, fits each to the context, routes it to a context and streams the reply,
serving a more urgent request between two steps of a running one. Everything it touches (the request
queue, the contexts, the loaded model) is its own; the backend hands it requests (`submit`) and reads the
model only to count tokens and learn what it can do (`model`)."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from pathlib import Path
from typing import Any

from nexus_ark.errors import ModelError
from nexus_ark.notices import notice
from nexus_ark.providers.base import FinishReason, StreamChunk
from nexus_ark.providers.llama_cpp_contexts import (
    CLOSE,
    DONE,
    Cancelled,
    EvalStats,
    Job,
    NoFreeContext,
    Slot,
    context_pointer,
    flatten,
    shared_prefix,
    stoppable_prefill,
)

log = logging.getLogger(__name__)

# Tokens reserved beyond the reply for the chat template's role markers.
_TEMPLATE_OVERHEAD_PER_MESSAGE = 8


class InferenceThread:
    """The model's one inference thread and its state. `contexts` llama.cpp contexts share the model;
    `state_cache_mb` > 0 applies with a single context only (see LlamaCppBackend)."""

    def __init__(
        self, model_path: Path, *, n_ctx: int, n_threads: int, contexts: int, state_cache_mb: int
    ) -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.contexts = contexts
        self.state_cache_mb = state_cache_mb
        self.last_eval: EvalStats | None = None  # set on the inference thread before a request ends
        self._slots = [Slot(i) for i in range(contexts)]
        self._clock = 0
        # Requests by priority (the person's before background work), then in order of arrival: a chat
        # turn waits for the request being generated, never for a queue of a dream's next steps.
        self._jobs: queue.PriorityQueue[tuple[int, int, Job | None]] = queue.PriorityQueue()
        self._arrivals = itertools.count()
        self._loaded = threading.Event()
        self._load_error: ModelError | None = None
        self._llm: Any = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"llama-{model_path.stem}", daemon=True)
        self._thread.start()

    # -- the caller's side --------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def model(self) -> Any:
        """The loaded Llama (its first context), None before it loads, after it failed or was unloaded.
        Only its vocabulary and metadata may be read from another thread: the contexts are this thread's."""
        return self._llm if self._loaded.is_set() else None

    def ensure_ready(self) -> None:
        """Wait for the model to load; raise its ModelError if it could not."""
        self._loaded.wait()
        if self._load_error is not None:
            raise self._load_error

    def submit(self, job: Job) -> None:
        """Queue a request; its chunks (and a ModelError) arrive on `job.out`, then DONE."""
        self._jobs.put((job.priority, next(self._arrivals), job))

    def close(self) -> None:
        """Unload after every request already queued (waits up to 30 s). Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put((CLOSE, next(self._arrivals), None))
        self._thread.join(timeout=30)

    # -- on the inference thread --------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._llm = self._load()
            self._slots[0].llm = self._llm
        except ModelError as exc:
            self._load_error = exc
        finally:
            self._loaded.set()
        while True:
            _, _, job = self._jobs.get()
            if job is None:
                break
            self._answer(job)
        self._llm = None
        for slot in self._slots:
            slot.llm = None

    def _load(self) -> Any:
        from llama_cpp import Llama  # heavy import, kept off the caller's thread

        try:
            llm = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                verbose=False,
            )
            if self.state_cache_mb > 0 and self.contexts == 1:
                from llama_cpp import LlamaRAMCache

                llm.set_cache(LlamaRAMCache(capacity_bytes=self.state_cache_mb << 20))
            return llm
        except Exception as exc:
            raise ModelError(
                notice(
                    "llama.cpp could not load the model file {path}: {problem}",
                    path=str(self.model_path),
                    problem=str(exc),
                ),
                hint=notice("The file may be damaged or made for a newer llama.cpp; try another GGUF file."),
            ) from exc

    def _fit_to_context(self, messages: list[dict[str, Any]], max_tokens: int) -> list[dict[str, Any]]:
        """Drop the oldest turns (never the system prompt or the newest message) until the prompt fits."""
        budget = self.n_ctx - max_tokens
        costs = [
            len(self._llm.tokenize(m["content"].encode("utf-8"), add_bos=False, special=True))
            + _TEMPLATE_OVERHEAD_PER_MESSAGE
            for m in messages
        ]
        keep = list(range(len(messages)))
        total = sum(costs)
        first_droppable = 1 if messages and messages[0]["role"] == "system" else 0
        while total > budget and len(keep) - first_droppable > 1:
            dropped = keep.pop(first_droppable)
            total -= costs[dropped]
        if total > budget:
            raise ModelError(
                notice(
                    "The message is too long for the model's context of {context} tokens (it needs about "
                    "{needed}).",
                    context=self.n_ctx,
                    needed=total + max_tokens,
                ),
                hint=notice(
                    "Shorten the message or the persona's soul, or raise context_size in persona.toml."
                ),
            )
        return [messages[i] for i in keep]

    def _pick_slot(self, flat: str) -> Slot:
        """The context whose last prompt this one extends the most (at least half of it shared, as
        llama.cpp's server picks a slot); else an idle loaded one, else a new one, else the least recently
        used. Runs on the inference thread."""
        free = [s for s in self._slots if not s.busy]
        best = max(free, key=lambda s: shared_prefix(s.text, flat) if s.llm is not None else -1)
        if best.llm is not None and shared_prefix(best.text, flat) * 2 >= len(flat):
            return best
        for slot in free:
            if slot.llm is not None and not slot.text:
                return slot
        for slot in free:
            if slot.llm is None:
                try:
                    slot.llm = self._load()
                    return slot
                except ModelError:  # e.g. no memory for another KV cache: share the ones there are
                    log.warning("could not add a context for %s", self.model_path.name, exc_info=True)
                    # Not tried again at every request: the contexts there are will do.
                    self._slots = [s for s in self._slots if s.llm is not None]
                    break
        loaded = [s for s in self._slots if s.llm is not None and not s.busy]
        if not loaded:  # a more urgent request found no context free (one could not be added)
            raise NoFreeContext
        return min(loaded, key=lambda s: s.used)

    def _serve_waiting(self, running: Job) -> None:
        """Between two steps of a request (a token, a prompt step): a more urgent request waiting (the
        person's turn, any persona's on this shared model) is answered now, on another context, and this
        one then goes on where it was, its own context untouched. With one context it waits its turn."""
        while True:
            with self._jobs.mutex:
                waiting = self._jobs.queue[0] if self._jobs.queue else None
            if waiting is None or waiting[2] is None or waiting[0] >= running.priority:
                return
            if not any(not s.busy and (s.llm is not None or not self._closed) for s in self._slots):
                return  # every context is answering someone
            _, _, job = self._jobs.get_nowait()  # the head, or one at least as urgent put meanwhile
            if job is None:  # closing: put it back, it goes after everything
                self._jobs.put((CLOSE, next(self._arrivals), None))
                return
            if not self._answer(job):
                return

    def _answer(self, job: Job) -> bool:
        """Answer one request; False when it went back in line (no context was free for it)."""
        if self._load_error is not None:
            job.out.put(self._load_error)
            job.out.put(DONE)
            return True
        try:
            self._generate(job)
        except NoFreeContext:
            self._jobs.put((job.priority, next(self._arrivals), job))
            return False
        except ModelError as exc:
            job.out.put(exc)
        except Exception as exc:  # llama.cpp raises ValueError/RuntimeError for many things
            log.exception("generation failed")
            job.out.put(
                ModelError(
                    notice(
                        "The model {name} failed while answering: {problem}",
                        name=self.model_path.name,
                        problem=str(exc),
                    )
                )
            )
        job.out.put(DONE)
        return True

    def _generate(self, job: Job) -> None:
        p = job.params
        messages = self._fit_to_context(job.messages, p.max_tokens)
        flat = flatten(messages)
        slot = self._pick_slot(flat)
        self._clock += 1
        slot.used = self._clock
        slot.text = flat  # until it answers: a failed request leaves an unknown state, never a false prefix
        slot.busy = True
        llm = slot.llm
        from llama_cpp import llama_perf_context, llama_perf_context_reset

        llama_perf_context_reset(context_pointer(llm))
        reply: list[str] = []
        try:
            self._complete(llm, job, messages, reply)
        finally:
            slot.busy = False
            slot.text = flat + flatten([{"role": "assistant", "content": "".join(reply)}])
            perf = llama_perf_context(context_pointer(llm))
            self.last_eval = EvalStats(slot.index, int(perf.n_p_eval), int(llm.n_tokens))

    def _complete(self, llm: Any, job: Job, messages: list[dict[str, Any]], reply: list[str]) -> None:
        p = job.params
        stream = llm.create_chat_completion(
            messages=messages,
            stream=True,
            max_tokens=p.max_tokens,
            temperature=p.temperature,
            top_p=p.top_p,
            repeat_penalty=p.repeat_penalty,
            stop=p.stop or None,
            seed=p.seed,
            response_format={"type": "json_object", "schema": job.json_schema} if job.json_schema else None,
        )
        finish: str | None = None
        try:
            with stoppable_prefill(llm, job.cancel, lambda: self._serve_waiting(job)):
                for part in stream:
                    if job.cancel.is_set():
                        finish = "cancelled"
                        break
                    choice = part["choices"][0]
                    text = choice["delta"].get("content")
                    if text:
                        reply.append(text)
                        job.out.put(StreamChunk(text=text))
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
                    else:
                        self._serve_waiting(job)
        except Cancelled:
            finish = "cancelled"
        finally:
            stream.close()
        ended: FinishReason = (
            "length" if finish == "length" else "cancelled" if finish == "cancelled" else "stop"
        )
        job.out.put(StreamChunk(finish_reason=ended))
