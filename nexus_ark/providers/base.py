"""The interface every chat backend implements."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "cancelled", "tool_calls"]
StructuredMode = Literal["schema", "json", "none"]


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


class ChatBackend(ABC):
    """A model that streams chat replies.

    stream_chat may be called from any thread; implementations serialize work themselves.
    Setting `cancel` stops generation between tokens and ends the stream with finish_reason "cancelled".
    `json_schema` asks for output that validates against it (how well depends on `structured_mode`);
    `tools` are offered natively only where `native_tools` is true (else see providers.tools).
    """

    model_id: str = ""
    native_tools: bool = False
    structured_mode: StructuredMode = "none"

    @abstractmethod
    def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        cancel: threading.Event | None = None,
        *,
        json_schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[StreamChunk]: ...

    def ensure_ready(self) -> None:  # noqa: B027 - optional hook, most backends are ready at once
        """Block until the model is usable; raise ModelError if it is not."""

    def describe(self) -> str:
        return self.model_id

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free the model. Safe to call twice."""


def openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Messages in the OpenAI chat format that llama.cpp, LiteLLM and Ollama all accept."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            import json

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
