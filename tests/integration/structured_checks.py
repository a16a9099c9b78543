"""What the structured-output tests ask every backend, so that each backend is asked the same."""

from __future__ import annotations

from nexus_ark.mind.schemas import EmotionReading
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams
from nexus_ark.providers.structured import generate_structured

# Greedy decoding: the same answer on every run (the bundled model's answers were checked with 1 and 2
# threads).
GREEDY = GenerationParams(max_tokens=64, temperature=0.0, seed=1)


def read_emotion(backend: ChatBackend, text: str) -> EmotionReading:
    return generate_structured(
        backend,
        [
            ChatMessage(role="system", content="Classify the main emotion of the user's message."),
            ChatMessage(role="user", content=text),
        ],
        EmotionReading,
        params=GREEDY,
    )
