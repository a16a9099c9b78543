"""A persona's runtime and its parts (runtime.soul, runtime.rooms) on a scripted model and real SQLite: a
change to the persona reaches every conversation it holds, the one with the person and each room's."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.rooms.conversation import Answered

HAIKU_LINE = "- Answers in haiku, always."


def _from_the_soul(messages: Sequence[ChatMessage]) -> str:
    """The reply says which soul the system prompt carried."""
    return "A haiku, as my soul says." if HAIKU_LINE in messages[0].content else "Plain words."


def _aria_answers(events: Sequence[object]) -> list[str]:
    return [e.result.text for e in events if isinstance(e, Answered) and e.slug == "aria"]


def test_a_soul_saved_while_a_room_is_open_is_the_soul_of_the_next_answer_there_and_alone(
    data_dir: Path,
) -> None:
    backend = ScriptedBackend(_from_the_soul)
    with NexusApp(data_dir, backend_factory=lambda config: backend) as app:
        room = app.rooms.open(
            app.rooms.create("Trip", ["aria", "hikari"], strategy="manual"), random.Random(0)
        )
        try:
            list(room.say("Good evening, everyone."))  # manual order: nobody answers until picked
            assert _aria_answers(list(room.next("Aria"))) == ["Plain words."]
            soul = app.personas.runtime("aria").persona.soul
            app.souls.save("aria", soul.rstrip("\n") + "\n" + HAIKU_LINE + "\n", "a test")
            list(room.say("And how do you answer now?"))
            assert _aria_answers(list(room.next("Aria"))) == ["A haiku, as my soul says."]
        finally:
            room.close()
        assert HAIKU_LINE in app.personas.preview_prompt("aria", "hello").messages[0].content
