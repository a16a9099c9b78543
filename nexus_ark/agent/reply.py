"""What a turn yields (ReplyDelta pieces, then one TurnResult) and the reply it builds as it streams."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nexus_ark.memory.messages import MessageStatus


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    text: str


@dataclass
class TurnResult:
    user_message_id: int
    reply_id: int | None
    text: str
    status: MessageStatus
    tokens: int = 0
    first_token_s: float | None = None
    tokens_per_s: float | None = None
    error: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    # Things the person should know that did not stop the turn (e.g. recall fell back to keywords).
    warnings: list[str] = field(default_factory=list)
    # The reply ended at the token limit: it can be continued (ChatSession.continue_reply).
    cut_by_limit: bool = False


@dataclass
class Reply:
    """A reply as it is generated: what streamed, where it is stored, how it ended."""

    started: float
    reply_id: int | None = None
    parts: list[str] = field(default_factory=list)
    tokens: int = 0
    first_at: float | None = None
    last_at: float | None = None
    status: MessageStatus = "complete"
    error: str = ""
    finish: str | None = None
    tool_log: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    version_of: int | None = None  # a regenerated reply: the first version's id
    # What is stored when it differs from what the model wrote (reply_shape: whole sentences kept).
    final: str | None = None
    tail: str = ""  # what the token limit cut mid-sentence, kept in meta but not in the reply

    def text(self) -> str:
        return "".join(self.parts)
