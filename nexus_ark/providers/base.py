"""The interface every chat backend implements."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

Role = Literal["system", "user", "assistant"]
FinishReason = Literal["stop", "length", "cancelled"]


class ChatMessage(BaseModel):
    role: Role
    content: str


class GenerationParams(BaseModel):
    max_tokens: int = Field(default=256, ge=1, le=32768)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    top_p: float = Field(default=0.95, gt=0.0, le=1.0)
    repeat_penalty: float = Field(default=1.1, ge=0.5, le=2.0)
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """One piece of a streamed reply. The last chunk of a stream carries the finish reason."""

    text: str = ""
    finish_reason: FinishReason | None = None


class ChatBackend(ABC):
    """A model that streams chat replies.

    stream_chat may be called from any thread; implementations serialize work themselves.
    Setting `cancel` stops generation between tokens and ends the stream with finish_reason "cancelled".
    """

    model_id: str = ""

    @abstractmethod
    def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamChunk]: ...

    def ensure_ready(self) -> None:  # noqa: B027 - optional hook, most backends are ready at once
        """Block until the model is loaded; raise ModelError if it cannot be."""

    def describe(self) -> str:
        return self.model_id

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free the model. Safe to call twice."""
