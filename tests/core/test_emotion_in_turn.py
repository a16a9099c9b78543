"""The internal model's second opinion inside the conversation: after the reply, a better reader than the
bundled model revises the emotion log's reading of the person's message (and the timeline says so); the
bundled model is never asked; the person's next turn makes the confirmation give way. The head is the real
one on the real e5; the internal models are scripted stand-ins for their answers."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from nexus_ark.agent.session import ChatSession
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.mind.emotion_confirm import BUNDLED_MODEL_ID
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.scripted import ScriptedBackend

SARCASM = "Oh great, my train is cancelled again. I just love standing in the rain for an hour."


@pytest.fixture(scope="module")
def detector() -> EmotionDetector:
    return EmotionDetector()


def session(tmp_path: Path, detector: EmotionDetector, internal: ScriptedBackend) -> ChatSession:
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    return ChatSession(
        persona, memory, ScriptedBackend(["Oh no, I'm sorry."]), emotions=detector, internal=internal
    )


def test_a_better_internal_model_revises_the_logged_emotion_after_the_reply(tmp_path, detector):
    internal = ScriptedBackend(
        [json.dumps({"label": "anger", "confidence": 0.95})], model_id="ollama:qwen2.5:7b"
    )
    chat = session(tmp_path, detector, internal)
    first = detector.classify(SARCASM)
    list(chat.send(SARCASM))
    (logged,) = chat.memory.components.emotions()
    assert logged.emotion == first.label  # inside the turn: the head's reading, in tens of milliseconds
    chat.after_turn()
    (logged,) = chat.memory.components.emotions()
    assert (logged.emotion, logged.value) == ("anger", -1.0)
    revised = [e for e in chat.memory.activity.query(kinds=["emotion"]) if e.data.get("revised_from")]
    assert revised and revised[0].data["by"] == "ollama:qwen2.5:7b" and first.label != "anger"


def test_the_bundled_model_is_never_asked_for_a_second_opinion(tmp_path, detector):
    internal = ScriptedBackend(["{}"], model_id=BUNDLED_MODEL_ID)
    chat = session(tmp_path, detector, internal)
    list(chat.send(SARCASM))
    chat.after_turn()
    assert internal.requests == []


def test_the_persons_next_turn_makes_the_confirmation_give_way(tmp_path, detector):
    slow = ScriptedBackend(
        [json.dumps({"label": "anger", "confidence": 0.95})], delay_s=0.5, model_id="ollama:x"
    )
    chat = session(tmp_path, detector, slow)
    first = detector.classify(SARCASM)
    list(chat.send(SARCASM))
    threading.Timer(0.2, chat.interrupt_background).start()  # the person sends again
    chat.confirm_emotion()
    (logged,) = chat.memory.components.emotions()
    assert logged.emotion == first.label
