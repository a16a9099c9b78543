"""Builds the messages sent to the model.

Stable parts come first (the soul), changing parts last (recent turns), so the llama.cpp KV cache of the
previous turn is reused and only the new text is evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence

from nexus_ark.memory.messages import StoredMessage
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatMessage

_FALLBACK_SOUL = "You are {name}, a friendly companion."
# Messages whose text was cut short still belong to the conversation; failed ones with no text do not.
_PROMPT_STATUSES = {"complete", "stopped", "interrupted", "error"}


def system_prompt(persona: Persona) -> str:
    soul = persona.soul.strip() or _FALLBACK_SOUL.format(name=persona.settings.name)
    return soul


def build_messages(persona: Persona, history: Sequence[StoredMessage], user_text: str) -> list[ChatMessage]:
    """System prompt, then up to `history_messages` earlier turns, then the new user message."""
    limit = persona.settings.conversation.history_messages
    turns = [
        ChatMessage(role="assistant" if m.role == "assistant" else "user", content=m.content)
        for m in history
        if m.role in ("user", "assistant") and m.status in _PROMPT_STATUSES and m.content.strip()
    ][-limit:]
    return [
        ChatMessage(role="system", content=system_prompt(persona)),
        *turns,
        ChatMessage(role="user", content=user_text),
    ]
