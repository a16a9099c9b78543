"""The turns as the model's chat template takes them (issue 32): the prompt puts the notes (how the persona
feels, what it recalled) in a second system message right before the person's words, where the cached
prefix stays whole; a template that refuses a system message after the first gets them in front of the
person's words instead. Which templates keep a late system message is decided here from the template's
text (and Gemma by name)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from nexus_ark.providers.base import ChatMessage

# Said in a chat template that refuses a system message after the first (Gemma's Jinja templates).
_REFUSES_LATE_SYSTEM = ("System role not supported", "roles must alternate")
# A Go template (Ollama's): Ollama lifts every system message into the template's .System at the top
# unless the template's loop over the messages places system messages itself.
_GO_TEMPLATE = re.compile(r"\.Messages\b|\.Prompt\b|\.System\b")


def late_system_accepted(chat_template: str, model_id: str) -> bool:
    """Whether the model's chat template keeps a system message where it stands among the turns: ChatML
    (SmolLM2, Qwen2.5, Qwen3) does; Gemma's refuses one after the first (its Jinja raises; on Ollama its
    template turns it into a user turn, which two user turns in a row then break); an Ollama template that
    does not place system messages in its loop lifts them to the top (the cached prefix would change every
    turn). An unknown template (a cloud model through LiteLLM) is taken to accept it, Gemma by name aside."""
    if "gemma" in model_id.casefold():
        return False
    if any(refusal in chat_template for refusal in _REFUSES_LATE_SYSTEM):
        return False
    if _GO_TEMPLATE.search(chat_template):
        return 'eq .Role "system"' in chat_template
    return True


def for_template(messages: Sequence[ChatMessage], late_system: bool) -> list[ChatMessage]:
    """The messages as the model's chat template takes them: unchanged where a system message may follow
    the turns (late_system), else each system message after the first is put in front of the user message
    that follows it (the notes before the person's words, as one user turn)."""
    if late_system:
        return list(messages)
    out: list[ChatMessage] = []
    pending: list[str] = []
    for i, message in enumerate(messages):
        if message.role == "system" and i > 0:
            pending.append(message.content)
            continue
        if pending and message.role == "user":
            message = message.model_copy(update={"content": "\n\n".join([*pending, message.content])})
            pending = []
        out.append(message)
    if pending:  # notes with no user message after them (none is built so): kept as a user turn
        out.append(ChatMessage(role="user", content="\n\n".join(pending)))
    return out
