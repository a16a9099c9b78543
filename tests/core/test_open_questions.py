"""Open questions resolved at the end of a conversation (agent/open_questions.py), on scripted models."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.agent.session import ChatSession, ReplyDelta
from nexus_ark.clock import FixedClock
from nexus_ark.errors import ModelError
from nexus_ark.memory.components import OpenQuestion
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend

START = datetime(2026, 4, 1, 20, 0, tzinfo=UTC)


@pytest.fixture
def persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def memory(tmp_path: Path, clock: FixedClock):
    store = MemoryStore(tmp_path / "m.db", clock)
    yield store
    store.close()


def _questions(memory: MemoryStore) -> tuple[int, int]:
    sister = memory.components.add_question(OpenQuestion(question="What is Mika's sister called?"))
    tea = memory.components.add_question(OpenQuestion(question="Does Mika like green tea?"))
    return sister, tea


class Judge(ScriptedBackend):
    """An internal model that finds the message naming Keiko and cites it (or a made-up one)."""

    def __init__(self, *, evidence_offset: int = 0) -> None:
        super().__init__(self._verdicts, model_id="internal")
        self.evidence_offset = evidence_offset

    def _verdicts(self, messages: Sequence[ChatMessage]) -> str:
        text = messages[-1].content
        ids = {int(i): line for i, line in re.findall(r"\[message (\d+)\] (.*)", text)}
        questions = [int(q) for q in re.findall(r"- question (\d+):", text)]
        keiko = next((i for i, line in ids.items() if "Keiko" in line), None)
        verdicts = [
            {
                "question_id": q,
                "answered": "sister" in text.split(f"question {q}:")[1].split("\n")[0] and keiko is not None,
                "evidence_message_id": keiko + self.evidence_offset if keiko is not None else None,
            }
            for q in questions
        ]
        return json.dumps({"verdicts": verdicts})


def _send(session: ChatSession, text: str) -> int:
    result = [i for i in session.send(text) if not isinstance(i, ReplyDelta)][-1]
    return result.user_message_id


def _session(persona, memory, internal) -> ChatSession:
    return ChatSession(persona, memory, ScriptedBackend(["How lovely."]), internal=internal)


def test_the_end_marks_answered_questions_with_their_evidence(persona, memory) -> None:
    sister, tea = _questions(memory)
    internal = Judge()
    session = _session(persona, memory, internal)
    _send(session, "I went hiking today.")
    said = _send(session, "My sister Keiko is coming to visit!")
    assert internal.requests == [], "nothing is judged while the conversation goes on"

    report = session.end_conversation()

    assert report is not None and [(r.question_id, r.evidence_message_id) for r in report.resolved] == [
        (sister, said)
    ]
    still_open = memory.components.open_questions()
    assert [q.id for q in still_open] == [tea]
    resolved = next(q for q in memory.components.open_questions(include_resolved=True) if q.id == sister)
    assert resolved.resolved_at and f"msg:{said}" in resolved.source_ids
    entry = memory.activity.query(kinds=["memory_write"])[-1]
    assert entry.message_id == said and "resolved: What is Mika's sister called?" in entry.summary


def test_a_made_up_evidence_id_is_rejected(persona, memory, caplog) -> None:
    sister, _ = _questions(memory)
    session = _session(persona, memory, Judge(evidence_offset=9000))
    said = _send(session, "My sister Keiko is coming to visit!")
    report = session.end_conversation()
    assert report is not None and report.resolved == []
    assert report.rejected == [
        f"question {sister}: evidence message {said + 9000} is not in the conversation"
    ]
    assert sister in [q.id for q in memory.components.open_questions()]
    assert "evidence message" in caplog.text


def test_each_end_reads_only_what_was_said_since_the_last(persona, memory) -> None:
    _questions(memory)
    internal = Judge()
    session = _session(persona, memory, internal)
    _send(session, "I went hiking today.")
    session.end_conversation()
    assert session.end_conversation() is None, "nothing new was said"
    assert len(internal.requests) == 1
    _send(session, "My sister Keiko is coming to visit!")
    report = session.end_conversation()
    assert report is not None and len(report.resolved) == 1
    assert "hiking" not in internal.requests[-1][-1].content


def test_idleness_ends_the_conversation(persona, memory, clock) -> None:
    _questions(memory)
    internal = Judge()
    session = _session(persona, memory, internal)
    _send(session, "My sister Keiko is coming to visit!")
    idle = timedelta(minutes=persona.settings.conversation.idle_minutes_end)
    assert session.end_if_idle(clock.now() + idle - timedelta(minutes=1)) is None
    assert internal.requests == []
    report = session.end_if_idle(clock.now() + idle)
    assert report is not None and len(report.resolved) == 1
    assert session.end_if_idle(clock.now() + 2 * idle) is None, "it ended already"


class Flaky(Judge):
    """Down until told otherwise."""

    down = True

    def _stream(self, request):
        if self.down:
            raise ModelError("the internal model is not loaded")
        yield from super()._stream(request)


def test_a_failing_model_leaves_the_questions_open_for_the_next_end(persona, memory) -> None:
    sister, tea = _questions(memory)
    internal = Flaky()
    session = _session(persona, memory, internal)
    _send(session, "My sister Keiko is coming to visit!")
    assert session.end_conversation() is None
    assert {q.id for q in memory.components.open_questions()} == {sister, tea}
    assert any("not loaded" in e.summary for e in memory.activity.query(kinds=["error"]))
    internal.down = False  # the model is back: the same conversation is read again
    report = session.end_conversation()
    assert report is not None and [r.question_id for r in report.resolved] == [sister]


def test_with_no_open_question_the_internal_model_is_not_even_loaded(persona, memory) -> None:
    loads: list[str] = []

    def load() -> ScriptedBackend:
        loads.append("internal")
        return Judge()

    session = ChatSession(persona, memory, ScriptedBackend(["How lovely."]), internal=load)
    _send(session, "My sister Keiko is coming to visit!")
    report = session.end_conversation()
    assert report is not None and report.resolved == [] and loads == []
