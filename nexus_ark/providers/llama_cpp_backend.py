"""GGUF models in process through llama-cpp-python.

A llama.cpp context is not thread-safe, so each loaded model owns one inference thread; every caller
(chat, and the internal work: emotion confirmation, compression, structured output) queues requests to it.
The model stays loaded, so a prompt that extends the previous one only evaluates the new tokens
(llama-cpp-python keeps the KV state of the longest common prefix).

The model has more than one context (`contexts`, default 2), each with its own KV cache, all driven by the
one inference thread. A request goes to the context whose last prompt it extends; a prompt that extends none
(an internal request between two chat turns) takes the least recently used one. So the chat keeps its own
context resident and internal work gets another: the next chat turn evaluates only its new tokens, instead
of restoring a saved copy of the whole KV state (a copy that grows with the conversation). The extra
contexts load the same GGUF again, memory-mapped, so the weights' pages are shared; each costs its KV cache.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexus_ark.errors import ModelError
from nexus_ark.notices import notice
from nexus_ark.providers.base import (
    Capabilities,
    ChatBackend,
    ChatRequest,
    GenerationParams,
    StreamChunk,
    openai_messages,
)

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
TEXT_TOOLS_MIN_PARAMS = 1_000_000_000
_DONE = object()
_CLOSE = 1 << 30  # after every request already queued
# The prompt is evaluated in steps of this many tokens, with a look at the request's cancel flag between
# them: a long prompt (a dream's material) stops within a step when the person's turn is waiting.
PREFILL_STEP = 256  # on 2 busy cores ~1 s a step; 128 was slower overall, 256 no slower than llama.cpp's 512


class _Cancelled(Exception):
    pass


class _NoFreeContext(Exception):
    pass


@contextmanager
def _stoppable_prefill(
    llm: Any, cancel: threading.Event, between: Callable[[], None] = lambda: None
) -> Iterator[None]:
    """llama-cpp-python evaluates a whole prompt in one call, deaf to cancellation; its generate() calls
    self.eval, so for one request an instance attribute evaluates it in steps instead. `between` runs
    between two steps (a more urgent request is served there)."""
    whole = llm.eval

    def in_steps(tokens: Any) -> None:
        for start in range(0, len(tokens), PREFILL_STEP):
            if cancel.is_set():
                raise _Cancelled
            if start:
                between()
            whole(tokens[start : start + PREFILL_STEP])

    llm.eval = in_steps
    try:
        yield
    finally:
        del llm.eval


# Tokens reserved beyond the reply for the chat template's role markers.
_TEMPLATE_OVERHEAD_PER_MESSAGE = 8


def check_gguf_file(path: Path) -> None:
    """Fail early, naming the file, before llama.cpp prints its own cryptic error."""
    hint = notice('Pick another GGUF file in the persona\'s model settings, or set model = "bundled".')
    if not path.exists():
        raise ModelError(notice("The model file {path} does not exist.", path=str(path)), hint=hint)
    if not path.is_file():
        raise ModelError(notice("The model path {path} is not a file.", path=str(path)), hint=hint)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelError(
            notice("Cannot read the model file {path}: {problem}.", path=str(path), problem=exc.strerror),
            hint=hint,
        ) from exc
    if magic != GGUF_MAGIC:
        raise ModelError(
            notice(
                "The model file {path} is not a GGUF model (it may be damaged or only partly downloaded).",
                path=str(path),
            ),
            hint=hint,
        )


@dataclass
class _Slot:
    """One llama.cpp context of the model, and what it last evaluated (to route the next prompt)."""

    index: int
    llm: Any = None  # loaded on first use: a model used only for chat never pays for a second KV cache
    text: str = ""  # the last prompt and reply, flattened as _flatten does
    used: int = 0  # when it last answered (a counter): the least recently used one is reused first
    busy: bool = False  # a request is being answered on it (one waiting on a more urgent one, too)


@dataclass(frozen=True, slots=True)
class EvalStats:
    """What llama.cpp did for the last finished request: which context answered it and how many prompt
    tokens it evaluated (llama.cpp's own counter; a reused prefix is not evaluated again)."""

    context: int
    prompt_evaluated: int
    context_tokens: int  # the tokens the context holds afterwards (prompt and reply)


def _flatten(messages: list[dict[str, Any]]) -> str:
    # Monotonic in the chat template: a shared prefix here is a shared prefix of the prompt's tokens.
    return "".join(f"\x00{m['role']}\x01{m.get('content') or ''}" for m in messages)


def _shared_prefix(a: str, b: str) -> int:
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
class _Job:
    messages: list[dict[str, Any]]
    params: GenerationParams
    cancel: threading.Event
    json_schema: dict[str, Any] | None = None
    out: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    priority: int = 0


class LlamaCppBackend(ChatBackend):
    """`contexts` llama.cpp contexts share the model (see the module's note): with 2 or more, a chat turn
    that follows an internal request (emotion, dreaming) on the same model finds the chat's prefix still
    in its own context. `state_cache_mb` > 0 applies with a single context only: it keeps the KV state of
    recent prompts in RAM and restores it, copying the whole state each time."""

    structured_mode = "schema"  # JSON-schema-constrained decoding (a grammar built from the schema)

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        state_cache_mb: int = 0,
        contexts: int = 2,
    ) -> None:
        check_gguf_file(model_path)
        self.state_cache_mb = state_cache_mb
        self.contexts = max(1, contexts)
        self._slots = [_Slot(i) for i in range(self.contexts)]
        self._clock = 0
        self.last_eval: EvalStats | None = None  # set on the inference thread before a request ends
        self.model_path = model_path
        self.model_id = f"gguf:{model_path.name}"
        self.n_ctx = n_ctx
        # llama.cpp defaults to half the cores; a desktop app with one active chat wants them all.
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        # Requests by priority (the person's before background work), then in order of arrival: a chat
        # turn waits for the request being generated, never for a queue of a dream's next steps.
        self._jobs: queue.PriorityQueue[tuple[int, int, _Job | None]] = queue.PriorityQueue()
        self._arrivals = itertools.count()
        self._loaded = threading.Event()
        self._load_error: ModelError | None = None
        self._llm: Any = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"llama-{model_path.stem}", daemon=True)
        self._thread.start()

    # -- public -----------------------------------------------------------------------------------
    def ensure_ready(self) -> None:
        self._loaded.wait()
        if self._load_error is not None:
            raise self._load_error

    def describe(self) -> str:
        return self.model_path.stem

    def _learn_capabilities(self) -> Capabilities | None:
        if not self._loaded.is_set() or self._llm is None:
            return None  # known once loaded
        # Below about a billion parameters a model writes tool calls nobody asked for, or none at all.
        params = self._llm._model.n_params()
        meta: dict[str, str] = dict(getattr(self._llm, "metadata", None) or {})
        arch = meta.get("general.architecture", "")
        trained = meta.get(f"{arch}.context_length", "")
        # general.languages, where a GGUF has it, is an array GGUF readers give as text ('["en", "ja"]').
        languages = [x.strip(' "') for x in meta.get("general.languages", "").strip("[]").split(",")]
        return Capabilities(
            structured=self.structured_mode,
            text_tools=params >= TEXT_TOOLS_MIN_PARAMS,
            parameters=int(params),
            context_length=int(trained) if trained.isdigit() else self.n_ctx,
            languages=tuple(lang for lang in languages if lang),
            chat_template=meta.get("tokenizer.chat_template", ""),
        )

    def count_tokens(self, text: str) -> int:
        """Exactly, with the model's own tokenizer (waits for the model to load). Called from the caller's
        thread on purpose: tokenizing reads only the vocabulary, which llama.cpp never changes after
        loading (its server tokenizes on HTTP threads while a slot decodes); the context, which is not
        thread-safe, is not touched. Before the model loads, or after it is unloaded, an estimate."""
        if self._closed:
            return super().count_tokens(text)
        self.ensure_ready()
        llm = self._llm
        if llm is None:
            return super().count_tokens(text)
        # special=True like the chat template's own tokenization (and _fit_to_context).
        return len(llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        if self._closed:
            raise ModelError(notice("The model {name} has been unloaded.", name=self.model_path.name))
        self.ensure_ready()
        job = _Job(
            openai_messages(request.messages),
            request.params,
            threading.Event(),
            request.json_schema,
            priority=request.priority,
        )
        outer_cancel = request.cancel
        self._jobs.put((request.priority, next(self._arrivals), job))
        finished = False
        try:
            while True:
                try:
                    item = job.out.get(timeout=0.05)
                except queue.Empty:
                    if outer_cancel is not None and outer_cancel.is_set():
                        job.cancel.set()
                    continue
                if outer_cancel is not None and outer_cancel.is_set():
                    job.cancel.set()
                if item is _DONE:
                    finished = True
                    return
                if isinstance(item, BaseException):
                    finished = True
                    raise item
                yield item
        finally:
            if not finished:  # the consumer walked away: stop generating for nobody
                job.cancel.set()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._jobs.put((_CLOSE, next(self._arrivals), None))
        self._thread.join(timeout=30)

    # -- inference thread -------------------------------------------------------------------------
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

    def _pick_slot(self, flat: str) -> _Slot:
        """The context whose last prompt this one extends the most (at least half of it shared, as
        llama.cpp's server picks a slot); else an idle loaded one, else a new one, else the least recently
        used. Runs on the inference thread."""
        free = [s for s in self._slots if not s.busy]
        best = max(free, key=lambda s: _shared_prefix(s.text, flat) if s.llm is not None else -1)
        if best.llm is not None and _shared_prefix(best.text, flat) * 2 >= len(flat):
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
            raise _NoFreeContext
        return min(loaded, key=lambda s: s.used)

    def _serve_waiting(self, running: _Job) -> None:
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
                self._jobs.put((_CLOSE, next(self._arrivals), None))
                return
            if not self._answer(job):
                return

    def _answer(self, job: _Job) -> bool:
        """Answer one request; False when it went back in line (no context was free for it)."""
        if self._load_error is not None:
            job.out.put(self._load_error)
            job.out.put(_DONE)
            return True
        try:
            self._generate(job)
        except _NoFreeContext:
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
        job.out.put(_DONE)
        return True

    def _generate(self, job: _Job) -> None:
        p = job.params
        messages = self._fit_to_context(job.messages, p.max_tokens)
        flat = _flatten(messages)
        slot = self._pick_slot(flat)
        self._clock += 1
        slot.used = self._clock
        slot.text = flat  # until it answers: a failed request leaves an unknown state, never a false prefix
        slot.busy = True
        llm = slot.llm
        from llama_cpp import llama_perf_context, llama_perf_context_reset

        llama_perf_context_reset(llm._ctx.ctx)
        reply: list[str] = []
        try:
            self._complete(llm, job, messages, reply)
        finally:
            slot.busy = False
            slot.text = flat + _flatten([{"role": "assistant", "content": "".join(reply)}])
            perf = llama_perf_context(llm._ctx.ctx)
            self.last_eval = EvalStats(slot.index, int(perf.n_p_eval), int(llm.n_tokens))

    def _complete(self, llm: Any, job: _Job, messages: list[dict[str, Any]], reply: list[str]) -> None:
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
            with _stoppable_prefill(llm, job.cancel, lambda: self._serve_waiting(job)):
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
        except _Cancelled:
            finish = "cancelled"
        finally:
            stream.close()
        job.out.put(StreamChunk(finish_reason=finish if finish in ("length", "cancelled") else "stop"))
