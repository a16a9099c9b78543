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

import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

from nexus_ark.errors import ModelError
from nexus_ark.notices import notice
from nexus_ark.providers.base import (
    Capabilities,
    ChatBackend,
    ChatRequest,
    StreamChunk,
    openai_messages,
)
from nexus_ark.providers.llama_cpp_contexts import DONE, EvalStats, Job, parameter_count
from nexus_ark.providers.llama_cpp_inference import InferenceThread

GGUF_MAGIC = b"GGUF"
TEXT_TOOLS_MIN_PARAMS = 1_000_000_000


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


class LlamaCppBackend(ChatBackend):
    """`contexts` llama.cpp contexts share the model (see the module's note): with 2 or more, a chat turn
    that follows an internal request (emotion, dreaming) on the same model finds the chat's prefix still
    in its own context. `state_cache_mb` > 0 applies with a single context only: it keeps the KV state of
    recent prompts in RAM and restores it, copying the whole state each time. The model and its contexts
    belong to the backend's inference thread (`inference`), which it hands every request."""

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
        self.model_path = model_path
        self.model_id = f"gguf:{model_path.name}"
        self.n_ctx = n_ctx
        self.inference = InferenceThread(
            model_path,
            n_ctx=n_ctx,
            # llama.cpp defaults to half the cores; a desktop app with one active chat wants them all.
            n_threads=n_threads or max(1, os.cpu_count() or 1),
            contexts=max(1, contexts),
            state_cache_mb=state_cache_mb,
        )

    @property
    def last_eval(self) -> EvalStats | None:
        """What llama.cpp did for the last finished request (which context, how many tokens evaluated)."""
        return self.inference.last_eval

    # -- public -----------------------------------------------------------------------------------
    def ensure_ready(self) -> None:
        self.inference.ensure_ready()

    def describe(self) -> str:
        return self.model_path.stem

    def _learn_capabilities(self) -> Capabilities | None:
        llm = self.inference.model
        if llm is None:
            return None  # known once loaded
        # Below about a billion parameters a model writes tool calls nobody asked for, or none at all.
        params = parameter_count(llm)
        meta: dict[str, str] = dict(getattr(llm, "metadata", None) or {})
        arch = meta.get("general.architecture", "")
        trained = meta.get(f"{arch}.context_length", "")
        # general.languages, where a GGUF has it, is an array GGUF readers give as text ('["en", "ja"]').
        languages = [x.strip(' "') for x in meta.get("general.languages", "").strip("[]").split(",")]
        return Capabilities(
            structured=self.structured_mode,
            text_tools=params >= TEXT_TOOLS_MIN_PARAMS,
            parameters=params,
            context_length=int(trained) if trained.isdigit() else self.n_ctx,
            languages=tuple(lang for lang in languages if lang),
            chat_template=meta.get("tokenizer.chat_template", ""),
        )

    def count_tokens(self, text: str) -> int:
        """Exactly, with the model's own tokenizer (waits for the model to load). Called from the caller's
        thread on purpose: tokenizing reads only the vocabulary, which llama.cpp never changes after
        loading (its server tokenizes on HTTP threads while a slot decodes); the context, which is not
        thread-safe, is not touched. Before the model loads, or after it is unloaded, an estimate."""
        if self.inference.closed:
            return super().count_tokens(text)
        self.inference.ensure_ready()
        llm = self.inference.model
        if llm is None:
            return super().count_tokens(text)
        # special=True like the chat template's own tokenization (and the inference thread's fitting).
        return len(llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        if self.inference.closed:
            raise ModelError(notice("The model {name} has been unloaded.", name=self.model_path.name))
        self.inference.ensure_ready()
        job = Job(
            openai_messages(request.messages),
            request.params,
            threading.Event(),
            request.json_schema,
            priority=request.priority,
        )
        outer_cancel = request.cancel
        self.inference.submit(job)
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
                if item is DONE:
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
        self.inference.close()
