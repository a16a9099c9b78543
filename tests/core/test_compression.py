"""Rolling compression (agent/compression.py) on scripted models: when it runs, what it sends the internal
model, what it stores, and what the next prompt carries."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.errors import ModelError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.summaries import Summaries
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend

# About 40 tokens each (estimate: four characters a token), each with a word no other message has.
FILLER = "we talked about the garden, the weather, the trains and what to cook for dinner tonight"


def _said(i: int) -> str:
    return f"Point {i}: marker{i:03d} {FILLER}."


@pytest.fixture
def persona(tmp_path: Path):
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    # A small window, so a few exchanges fill it.
    persona.settings.model.context_size = 1024
    persona.settings.model.max_tokens = 64
    persona.settings.conversation.compress_at = 0.6
    return persona


@pytest.fixture
def memory(tmp_path: Path):
    store = MemoryStore(tmp_path / "m.db")
    yield store
    store.close()


class Summariser(ScriptedBackend):
    """An internal model that numbers its summaries and names the markers it was shown."""

    def __init__(self) -> None:
        super().__init__(self._summarise, model_id="internal")

    def _summarise(self, messages: Sequence[ChatMessage]) -> str:
        shown = sorted({w.strip(".,:") for w in messages[-1].content.split() if w.startswith("marker")})
        return f"Summary {len(self.requests)} covers {' '.join(shown)}."


def _send(session: ChatSession, text: str) -> TurnResult:
    result = None
    for item in session.send(text):
        if not isinstance(item, ReplyDelta):
            result = item
    assert result is not None
    return result


def _chat(session: ChatSession, start: int, exchanges: int) -> None:
    """Exchanges as the CLI and the window run them: the turn, then after_turn once the reply is shown."""
    for i in range(start, start + exchanges):
        _send(session, _said(i))
        session.after_turn()


def _session(persona, memory, internal) -> tuple[ChatSession, ScriptedBackend]:
    chat = ScriptedBackend(lambda messages: f"Reply to {messages[-1].content.split()[2]} {FILLER}.")
    return ChatSession(persona, memory, chat, internal=internal), chat


def test_nothing_is_compressed_below_the_share(persona, memory) -> None:
    internal = Summariser()
    session, _ = _session(persona, memory, internal)
    _chat(session, 0, 2)
    assert internal.requests == []
    assert Summaries(memory.db, memory.archive, memory.activity).all("main") == []
    assert memory.activity.query(kinds=["compression"]) == []


def test_above_the_share_the_oldest_turns_are_summarised_after_the_reply(persona, memory) -> None:
    internal = Summariser()
    session, _ = _session(persona, memory, internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    sent = 0
    while not summaries.all("main"):
        _send(session, _said(sent))
        assert internal.requests == [], "the turn itself never waits for compression"
        session.after_turn()
        sent += 1
        assert sent < 20, "compression never started"
    assert sent > 2  # not at once: the share had to be passed
    (summary,) = summaries.all("main")
    line = memory.messages.recent("main", 200)
    # The oldest messages, in order, up to a reply; the newest stay verbatim (at least two exchanges).
    assert summary.covered == [m.id for m in line[: len(summary.covered)]]
    assert line[len(summary.covered) - 1].role == "assistant"
    assert len(line) - len(summary.covered) >= 4
    # The internal model read exactly those turns, and nothing is lost from the database.
    covered_markers = {f"marker{i:03d}" for i in range(len(summary.covered) // 2)}
    assert summary.text == f"Summary 1 covers {' '.join(sorted(covered_markers))}."
    assert len(line) == sent * 2 and all(m.content for m in line)
    # The timeline says what was compressed.
    (entry,) = memory.activity.query(kinds=["compression"])
    assert entry.data["first_id"] == summary.covered[0] and entry.data["last_id"] == summary.covered[-1]
    assert "Summary 1" in entry.summary


def test_the_prompt_carries_the_summary_and_only_the_later_turns(persona, memory) -> None:
    internal = Summariser()
    session, chat = _session(persona, memory, internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    sent = 0
    while not summaries.all("main"):
        _chat(session, sent, 1)
        sent += 1
    (summary,) = summaries.all("main")
    _send(session, "What did we say first?")
    request = chat.requests[-1]
    assert summary.text in request[0].content and request[0].role == "system"
    turns = [m.content for m in request[1:-1]]
    covered = {m.id for m in memory.messages.recent("main", 200) if m.id in summary.covered}
    later = [m for m in memory.messages.recent("main", 200) if m.id not in covered]
    assert turns == [m.content for m in later[:-2]]  # the last two: this question and its reply
    assert not any(f"marker{i:03d}" in "".join(turns) for i in range(len(summary.covered) // 2))
    built = session.preview_prompt("And then?")
    assert built.section("summary").tokens > 0


def test_the_next_compression_extends_the_summary_instead_of_redoing_it(persona, memory) -> None:
    internal = Summariser()
    session, _ = _session(persona, memory, internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    sent = 0
    while len(summaries.all("main")) < 2:
        _chat(session, sent, 1)
        sent += 1
        assert sent < 40, "no second compression"
    first, second = summaries.all("main")
    assert second.previous_id == first.id
    assert second.covered[0] > first.last_id  # only turns the first did not cover
    assert summaries.covered_ids(second) == first.covered + second.covered
    # The second request carries the first summary and the next turns, not the old turns again.
    request = internal.requests[1][-1].content
    so_far, turns = request.split("The conversation that follows it:")
    assert first.text in so_far
    old = {f"marker{i:03d}" for i in range(len(first.covered) // 2)}
    shown = {w.strip(".,:") for w in turns.split() if w.startswith("marker")}
    assert shown and shown.isdisjoint(old)
    assert shown == {
        f"marker{i:03d}" for i in range(len(first.covered) // 2, len(summaries.covered_ids(second)) // 2)
    }
    assert len(internal.requests) == 2


def test_a_summary_is_searchable(persona, memory) -> None:
    internal = ScriptedBackend(["Mika adopted a grey cat called Biscuit."], model_id="internal")
    session, _ = _session(persona, memory, internal)
    for i in range(8):
        _chat(session, i, 1)
    assert internal.requests, "compression should have run"
    hits = memory.archive.search("Biscuit", None, mode="fts")
    assert [h.kind for h in hits] == ["summary"]
    assert hits[0].text == "Mika adopted a grey cat called Biscuit."


class Broken(ScriptedBackend):
    def _stream(self, request):
        self.requests.append(list(request.messages))
        raise ModelError("the internal model crashed")


def test_a_failing_internal_model_leaves_the_conversation_intact(persona, memory, caplog) -> None:
    internal = Broken([""], model_id="broken")
    session, chat = _session(persona, memory, internal)
    with caplog.at_level(logging.WARNING):
        _chat(session, 0, 8)
    assert internal.requests, "compression was tried"
    assert Summaries(memory.db, memory.archive, memory.activity).all("main") == []
    line = memory.messages.recent("main", 200)
    assert len(line) == 16 and all(m.status == "complete" for m in line)
    assert "compression failed" in caplog.text
    assert any("the internal model crashed" in e.summary for e in memory.activity.query(kinds=["error"]))
    # The next turn is sent as before: its newest turns verbatim, no summary.
    _send(session, "Still there?")
    assert "marker007" in "".join(m.content for m in chat.requests[-1])
    assert session.preview_prompt("Hello").section("summary").tokens == 0


def test_a_compression_gives_way_when_the_person_sends_again(persona, memory) -> None:
    sessions: list[ChatSession] = []

    def interrupted(messages: Sequence[ChatMessage]) -> str:
        sessions[0].interrupt_background()  # the person pressed send while it was summarising
        return "A summary that must not be kept."

    internal = ScriptedBackend(interrupted, model_id="internal")
    session, _ = _session(persona, memory, internal)
    sessions.append(session)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _chat(session, 0, 8)
    assert internal.requests, "compression was tried"
    assert summaries.all("main") == [], "no half summary is kept"
    assert memory.activity.query(kinds=["error"]) == [], "giving way is not a failure"
    assert len(memory.messages.recent("main", 200)) == 16


def test_the_trigger_is_the_share_of_the_conversations_room() -> None:
    from nexus_ark.agent.compression import is_due
    from nexus_ark.memory.messages import StoredMessage

    def line(tokens_each: int, n: int) -> list[StoredMessage]:
        return [
            StoredMessage(
                id=i + 1,
                room="main",
                speaker="user",
                role="user" if i % 2 == 0 else "assistant",
                content="x" * (tokens_each * 4),
                status="complete",
                created_at="2026-04-01T10:00:00",
            )
            for i in range(n)
        ]

    def due(turns: list[StoredMessage]) -> bool:  # four characters a token, plus 8 per message
        return is_due(turns, 1000, compress_at=0.6, history_messages=40, count=lambda t: len(t) // 4)

    assert not due(line(42, 12))  # 12 × 50 = 600: at the share, not past it
    assert due(line(43, 12))  # 12 × 51 = 612: past it
    assert due(line(1, 40)), "a full message window compresses too (the next turn would drop one)"


def test_a_send_that_comes_before_the_compression_starts_skips_it_until_after_that_turn(
    persona, memory
) -> None:
    internal = ScriptedBackend(["The running summary."], model_id="internal")
    session, _ = _session(persona, memory, internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _chat(session, 0, 7)
    session.interrupt_background()  # the window: the person pressed send while after-turn work was queued
    assert session.compress_if_due(force=True) is None and internal.requests == []
    _send(session, "One more thing.")  # the person's turn runs; background work may follow it again
    assert session.compress_if_due(force=True) is not None
    assert summaries.all("main") and internal.requests


def test_a_summary_the_token_limit_cut_keeps_its_whole_sentences_only(persona, memory) -> None:
    from nexus_ark.agent.compression import summarise
    from nexus_ark.memory.messages import StoredMessage

    said = [
        StoredMessage(
            id=1, room="main", speaker="user", role="user", content="Hi.", status="complete", created_at=""
        )
    ]
    # 40 words of whole sentences, then one the limit (budget 10 + 32 = 42 words) cuts after two words.
    internal = ScriptedBackend(["Luna is twelve years. " * 10 + "The sister visits next weekend."])
    text, _read, _written = summarise(
        internal, persona, "", said, budget=10, count=lambda _: 1, step_budget=100
    )
    assert text.endswith("Luna is twelve years.") and "The sister" not in text
    # Nothing whole before the limit: no summary at all rather than half of one.
    with pytest.raises(ValueError, match="no whole sentence"):
        summarise(
            ScriptedBackend(["word " * 60]), persona, "", said, budget=10, count=lambda _: 1, step_budget=100
        )
