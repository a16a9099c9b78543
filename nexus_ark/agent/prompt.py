"""Builds the messages sent to the model.

Stable parts come first (the soul, core memory, notepad, the latest strategy from the dream diary), then
the recent turns, and the parts that change every turn (memories recalled for this message) ride on the
newest user message. So the llama.cpp KV cache of the previous turn stays a prefix of the next prompt
and only the new text is evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from nexus_ark.memory.messages import StoredMessage
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatMessage

_FALLBACK_SOUL = "You are {name}, a friendly companion."
# Messages whose text was cut short still belong to the conversation; failed ones with no text do not.
_PROMPT_STATUSES = {"complete", "stopped", "interrupted", "error"}


class MemoryContext(BaseModel):
    core_memory: str = ""
    notepad: str = ""
    strategy: str = ""
    recalled: list[str] = Field(default_factory=list)


def system_prompt(persona: Persona, memory: MemoryContext | None = None) -> str:
    parts = [persona.soul.strip() or _FALLBACK_SOUL.format(name=persona.settings.name)]
    if memory is not None:
        if memory.core_memory.strip():
            parts.append("## Core memory\n" + memory.core_memory.strip())
        if memory.notepad.strip():
            parts.append("## Notepad\n" + memory.notepad.strip())
        if memory.strategy.strip():
            parts.append("## What you decided to try\n" + memory.strategy.strip())
    return "\n\n".join(parts)


def build_messages(
    persona: Persona,
    history: Sequence[StoredMessage],
    user_text: str,
    memory: MemoryContext | None = None,
) -> list[ChatMessage]:
    """System prompt, then up to `history_messages` earlier turns, then the new user message."""
    limit = persona.settings.conversation.history_messages
    turns = [
        ChatMessage(role="assistant" if m.role == "assistant" else "user", content=m.content)
        for m in history
        if m.role in ("user", "assistant") and m.status in _PROMPT_STATUSES and m.content.strip()
    ][-limit:]
    final = user_text
    if memory is not None and memory.recalled:
        notes = "\n".join(f"- {r}" for r in memory.recalled)
        final = f"(Things you remember that may matter here:\n{notes})\n\n{user_text}"
    return [
        ChatMessage(role="system", content=system_prompt(persona, memory)),
        *turns,
        ChatMessage(role="user", content=final),
    ]
