"""The interface every chat backend implements."""

from __future__ import annotations

import contextvars
import json
import logging
import math
import re
import threading
from abc import ABC
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nexus_ark.errors import ToolsUnsupportedError

log = logging.getLogger(__name__)

# Who is waiting for a model request: 0, the person (a chat turn); higher, background work (a dream, a
# compression). A local model that queues requests serves the lowest number first; the runtime sets it.
_MODEL_PRIORITY: contextvars.ContextVar[int] = contextvars.ContextVar("model_priority", default=0)


def current_model_priority() -> int:
    return _MODEL_PRIORITY.get()


@contextmanager
def model_priority(level: int) -> Iterator[None]:
    token = _MODEL_PRIORITY.set(level)
    try:
        yield
    finally:
        _MODEL_PRIORITY.reset(token)


Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "cancelled", "tool_calls"]
StructuredMode = Literal["schema", "json", "none"]
# Measured on the bundled SmolLM2-135M (issue 21): its dreams wrote insights, episodes and questions the
# conversation never held. Models from about 1B (Qwen2.5 1.5B) keep to their material.
REFLECTION_MIN_PARAMS = 1_000_000_000


class ToolCall(BaseModel):
    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolSpec(BaseModel):
    """A tool the model may call: `parameters` is a JSON schema (an object)."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def openai_format(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class ChatMessage(BaseModel):
    role: Role
    content: str
    # Native tool calling: an assistant turn that called tools, and the tool result that answers one.
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class GenerationParams(BaseModel):
    max_tokens: int = Field(default=256, ge=1, le=32768)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    top_p: float = Field(default=0.95, gt=0.0, le=1.0)
    repeat_penalty: float = Field(default=1.1, ge=0.5, le=2.0)
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """One piece of a streamed reply. The last chunk of a stream carries the finish reason
    (and, for native tool calling, the calls the model made)."""

    text: str = ""
    finish_reason: FinishReason | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class Capabilities(BaseModel):
    """What a model can do: facts about the model, known before its first turn (see ChatBackend)."""

    model_config = ConfigDict(frozen=True)

    tools: bool = False  # takes `tools` and answers with native tool calls
    structured: StructuredMode = "none"  # how well it keeps to a JSON schema
    # Follows the text tool protocol well enough to use it in conversation (tiny models invent calls).
    text_tools: bool = True
    # The capability record: facts read from the model itself (a GGUF's metadata, Ollama's /api/show)
    # or the catalogue. None / empty where nobody can tell (a cloud model): then nothing is held back.
    parameters: int | None = None
    context_length: int | None = None
    languages: tuple[str, ...] = ()
    chat_template: str = ""

    @property
    def reflects(self) -> bool:
        """Whether the model can write reflection (insights, values, questions, episodes in its own
        words) that stays true to its material: below about a billion parameters it invents."""
        return self.parameters is None or self.parameters >= REFLECTION_MIN_PARAMS


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One call of stream_chat, as a backend's `_stream` receives it (tools only where they may be sent)."""

    messages: Sequence[ChatMessage]
    params: GenerationParams
    cancel: threading.Event | None = None
    json_schema: dict[str, Any] | None = None
    tools: tuple[ToolSpec, ...] = ()
    # Who waits for it (0 the person, higher background work), fixed when the request is made: a local
    # model that queues requests serves the lowest first. Data on the request, so it survives threads.
    priority: int = 0


class ChatBackend(ABC):  # noqa: B024 - subclasses implement _stream (older ones stream_chat)
    """A model that streams chat replies.

    stream_chat may be called from any thread; implementations serialize work themselves.
    Setting `cancel` stops generation between tokens and ends the stream with finish_reason "cancelled".
    `json_schema` asks for output that validates against it (how well: `capabilities().structured`);
    `tools` are sent only where `capabilities().tools` is true (else see providers.tools' text protocol),
    and a server that refuses them anyway gets the request again without them, and never again after.

    Backends implement `_stream`; `_learn_capabilities` where the answer depends on the model or its
    server (it may do I/O: ensure_ready, which runs off the UI thread, learns them first).
    """

    model_id: str = ""
    structured_mode: StructuredMode = "none"
    _known: Capabilities | None = None

    def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        cancel: threading.Event | None = None,
        *,
        json_schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] | None = None,
        priority: int | None = None,
    ) -> Iterator[StreamChunk]:
        """`priority`: who waits (None: the model_priority of the code making the request)."""
        offer = tuple(tools) if tools and self.capabilities().tools else ()
        level = current_model_priority() if priority is None else priority
        request = ChatRequest(messages, params, cancel, json_schema, offer, level)
        if not offer:
            yield from self._stream(request)
            return
        stream = self._stream(request)
        try:
            chunk = next(stream, None)  # a refusal comes before anything streams
        except ToolsUnsupportedError as exc:
            log.warning("%s refused tools; going on without them: %s", self.describe(), exc.message)
            self._known = self.capabilities().model_copy(update={"tools": False})
            yield from self._stream(replace(request, tools=()))
            return
        try:
            if chunk is not None:
                yield chunk
                yield from stream
        finally:
            if isinstance(stream, Generator):  # every backend's _stream is one: its finally runs now
                stream.close()

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        raise NotImplementedError(f"{type(self).__name__} implements neither _stream nor stream_chat")

    def capabilities(self) -> Capabilities:
        """What this model can do; asks the server the first time where the backend must (off the UI
        thread). Where it cannot tell yet (the server is down) it assumes the least and asks again."""
        if self._known is None:
            learned = self._learn_capabilities()
            if learned is None:
                return Capabilities(structured=self.structured_mode)
            self._known = learned
        return self._known

    def _learn_capabilities(self) -> Capabilities | None:
        return Capabilities(structured=self.structured_mode)

    def ensure_ready(self) -> None:  # noqa: B027 - optional hook, most backends are ready at once
        """Block until the model is usable; raise ModelError if it is not."""

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is for this model. An estimate here; backends with the model's own
        tokenizer at hand (llama.cpp) count exactly. Safe to call from any thread."""
        return estimate_tokens(text)

    def describe(self) -> str:
        return self.model_id

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free the model. Safe to call twice."""


def context_window(backend: object, configured: int) -> int:
    """A model's context window in tokens: the one the loaded model was opened with (llama.cpp's n_ctx)
    where the backend has it, else `configured` (context_size in persona.toml). Every budget of a turn,
    a compression and a dream step is cut from this."""
    return getattr(backend, "n_ctx", None) or configured


# CJK ideographs, kana and hangul: about one token each in the usual multilingual vocabularies.
_DENSE_SCRIPT = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]"
)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate, for models whose tokenizer is not at hand (remote ones): one token per
    CJK character, one per four other characters (English averages about that)."""
    dense = len(_DENSE_SCRIPT.findall(text))
    return dense + math.ceil((len(text) - dense) / 4)


def openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Messages in the OpenAI chat format that llama.cpp, LiteLLM and Ollama all accept."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                }
                for i, c in enumerate(m.tool_calls)
            ]
        if m.tool_call_id:
            item["tool_call_id"] = m.tool_call_id
        if m.name:
            item["name"] = m.name
        out.append(item)
    return out
