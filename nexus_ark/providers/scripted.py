"""A deterministic backend for unit tests of logic (never used for what a person runs)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from nexus_ark.providers.base import Capabilities, ChatBackend, ChatMessage, ChatRequest, StreamChunk

Script = Callable[[Sequence[ChatMessage]], str]


class ScriptedBackend(ChatBackend):
    """Replies from a list (cycled) or a function of the conversation, streamed word by word."""

    def __init__(
        self,
        replies: list[str] | Script,
        *,
        delay_s: float = 0.0,
        model_id: str = "scripted",
        text_tools: bool = False,
        chunk_size: int = 0,
        parameters: int | None = None,
    ) -> None:
        """text_tools: behave like a model big enough for the text tool protocol (default: like a tiny
        one). chunk_size: stream fixed-size pieces of characters instead of words (to split markup).
        parameters: the size its capability record reports (None: unknown, as a cloud model's)."""
        self._parameters = parameters
        self._text_tools = text_tools
        self._chunk_size = chunk_size
        self._replies = replies
        self._delay_s = delay_s
        self._turn = 0
        self.model_id = model_id
        self.requests: list[list[ChatMessage]] = []

    def _reply_for(self, messages: Sequence[ChatMessage]) -> str:
        if callable(self._replies):
            return self._replies(messages)
        reply = self._replies[self._turn % len(self._replies)]
        self._turn += 1
        return reply

    def _learn_capabilities(self) -> Capabilities | None:
        return Capabilities(
            structured=self.structured_mode, text_tools=self._text_tools, parameters=self._parameters
        )

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        params, cancel = request.params, request.cancel
        self.requests.append(list(request.messages))
        reply = self._reply_for(request.messages)
        if self._chunk_size:
            size = self._chunk_size
            words = [reply[i : i + size] for i in range(0, len(reply), size)]
        else:
            words = reply.split(" ")
        for i, word in enumerate(words[: params.max_tokens]):
            if cancel is not None and cancel.is_set():
                yield StreamChunk(finish_reason="cancelled")
                return
            if self._delay_s:
                time.sleep(self._delay_s)
            yield StreamChunk(text=word if i == 0 or self._chunk_size else " " + word)
        yield StreamChunk(finish_reason="length" if len(words) > params.max_tokens else "stop")
