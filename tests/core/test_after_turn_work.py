"""After-turn work as a person meets it: the terminal chat never waits for a compression before the next
message, forgetting a message takes it out of the running summaries (and they are rebuilt without it), and
a long conversation that was never summarised is caught up in bounded steps. Scripted models, real memory."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.cli import chat as chat_cli
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.summaries import Summaries
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatMessage, ChatRequest, StreamChunk
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from tests.core.test_archive_vectors import WordEmbedder

DEADLINE_S = 20
COMPRESSION = "The conversation that follows it:"  # in every compression request
FILLER = "we talked about the garden, the weather, the trains and what to cook for dinner tonight"


def _said(i: int) -> str:
    return f"Point {i}: marker{i:03d} {FILLER}."


def _markers(text: str) -> list[str]:
    return sorted({w.strip(".,:") for w in text.split() if w.startswith("marker")})


@pytest.fixture
def persona(tmp_path: Path):
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    persona.settings.model.context_size = 1024  # a small window: a few exchanges fill it
    persona.settings.model.max_tokens = 64
    persona.settings.conversation.compress_at = 0.6
    return persona


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryStore]:
    store = MemoryStore(tmp_path / "m.db")
    yield store
    store.close()


class Summariser(ScriptedBackend):
    """An internal model that names the markers of the turns it was shown (not those of the summary so
    far, so a rebuilt summary shows exactly what it read)."""

    def __init__(self) -> None:
        super().__init__(self._summarise, model_id="internal")
        self.compressions = 0  # compression requests answered (other internal requests not counted)

    def _summarise(self, messages: Sequence[ChatMessage]) -> str:
        if COMPRESSION not in messages[-1].content:  # another internal request (an emotion check): no opinion
            return "{}"
        so_far, turns = messages[-1].content.split(COMPRESSION)
        self.compressions += 1
        kept = _markers(so_far.replace("Summary so far:", ""))
        return f"Summary {self.compressions} covers {' '.join(sorted({*kept, *_markers(turns)}))}."


class HeldSummariser(Summariser):
    """A slow internal model: each request blocks until the test releases it or the compression is
    cancelled (the person sent again). Fails loudly at the deadline instead of hanging the suite."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Semaphore(0)
        self.release = threading.Event()
        self.cancelled = 0

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        if COMPRESSION not in request.messages[-1].content:  # only compressions are held
            yield from super()._stream(request)
            return
        self.requests.append(list(request.messages))
        self.started.release()
        deadline = time.monotonic() + DEADLINE_S
        while not self.release.wait(0.01):
            if request.cancel is not None and request.cancel.is_set():
                self.cancelled += 1
                yield StreamChunk(finish_reason="cancelled")
                return
            if time.monotonic() > deadline:
                raise AssertionError("the held compression was neither released nor cancelled")
        yield StreamChunk(text=self._reply_for(request.messages))
        yield StreamChunk(finish_reason="stop")


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _runtime(
    tmp_path: Path, chat: ScriptedBackend, internal: ScriptedBackend
) -> tuple[NexusApp, PersonaRuntime]:
    """Aria's runtime as `nexus-ark chat` drives it, on the scripted models: the chat model, and the internal
    model (compression) named by its own spec."""
    app = NexusApp(
        tmp_path / "data", backend_factory=lambda config: internal if "summariser" in config.spec else chat
    ).open()
    app.personas.store.save_settings(
        "aria",
        {
            "model": {"context_size": 1024, "max_tokens": 64},
            "internal_model": {"spec": "ollama:summariser"},
            "conversation": {"compress_at": 0.6},
        },
    )
    return app, app.personas.runtime("aria")


def _compression_started(internal: HeldSummariser, runtime: PersonaRuntime) -> bool:
    """After a turn: wait until its after-turn work either holds a compression (True) or has ended."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if internal.started.acquire(timeout=0.01):
            return True
        if runtime.queue.wait_idle(0):
            return internal.started.acquire(timeout=0)
    raise AssertionError("the after-turn work neither ended nor started a compression")


def _chat_backend(*, echo: bool = True) -> ScriptedBackend:
    """echo: the reply names the message's marker (off where a forgotten marker must vanish everywhere)."""
    if not echo:
        return ScriptedBackend([f"Noted: {FILLER}."])
    return ScriptedBackend(lambda messages: f"Reply to {messages[-1].content.split()[2]} {FILLER}.")


def _send(session: ChatSession, text: str) -> TurnResult:
    result = None
    for item in session.send(text):
        if not isinstance(item, ReplyDelta):
            result = item
    assert result is not None
    return result


def _chat_until_summarised(session: ChatSession, memory: MemoryStore, steps: int = 1) -> int:
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    sent = 0
    while len(summaries.all("main")) < steps:
        _send(session, _said(sent))
        session.after_turn()
        sent += 1
        assert sent < 40, "compression never ran"
    return sent


# -- 1. the terminal chat runs after-turn work off the person's path ---------------------------------------
def test_the_terminal_chat_sends_the_next_line_while_a_slow_compression_runs_and_redoes_it(
    tmp_path, monkeypatch, capsys
) -> None:
    internal = HeldSummariser()
    chat = _chat_backend()
    app, runtime = _runtime(tmp_path, chat, internal)
    # The test reads on a connection of its own (the owner's belongs to the persona's queue thread).
    memory = app.personas.open_memory("aria", read_only=True)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    seen_at_send: list[tuple[int, int]] = []  # (summaries stored, compressions cancelled) when a turn began

    def reply(messages: Sequence[ChatMessage]) -> str:
        seen_at_send.append((len(summaries.all("main")), internal.cancelled))
        return f"Reply to {messages[-1].content.split()[2]} {FILLER}."

    chat._replies = reply

    def lines() -> Iterator[str]:
        i = 0
        # Chat until a compression is under way (after-turn work runs on its own thread: the prompt
        # comes back while it may still run).
        while i == 0 or not _compression_started(internal, runtime):
            yield _said(i)
            i += 1
            assert i < 40, "compression never started"
        yield "What did we say first?"  # sent while the compression is held: it must give way
        assert internal.started.acquire(timeout=DEADLINE_S), "the compression was not redone after the turn"
        internal.release.set()  # the redone compression may finish now
        _wait(lambda: bool(summaries.all("main")), "the redone compression")

    feed = lines()

    def fake_input(prompt: str = "") -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    started = time.monotonic()
    try:
        assert chat_cli._chat_interactive(runtime, "Aria", "scripted") == 0
        assert time.monotonic() - started < DEADLINE_S
        assert runtime.queue.wait_idle(DEADLINE_S)
        _check_the_question_was_answered_first(memory, summaries, seen_at_send, capsys)
    finally:
        memory.close()
        app.close()


def _check_the_question_was_answered_first(memory, summaries, seen_at_send, capsys) -> None:
    # The question was answered while the first compression had given way, with nothing summarised yet.
    assert seen_at_send[-1] == (0, 1)
    out = capsys.readouterr().out
    assert f"Aria: Reply to we {FILLER}." in out  # the answer to the question was printed
    (summary,) = summaries.all("main")  # the redone one, kept; the cancelled one left nothing
    # The first answered compression is the one redone (the first asked was cancelled), from the start.
    assert summary.text.startswith("Summary 1 covers marker000")
    assert memory.activity.query(kinds=["error"]) == [], "giving way is not a failure"
    # Every message is there, in order, each answered.
    line = memory.messages.recent("main", 200)
    assert [m.role for m in line] == ["user", "assistant"] * (len(line) // 2)
    assert line[-2].content == "What did we say first?"


def test_leaving_the_terminal_chat_interrupts_a_compression_and_it_is_done_at_the_next_start(
    tmp_path, monkeypatch
) -> None:
    internal = HeldSummariser()
    app, runtime = _runtime(tmp_path, _chat_backend(), internal)

    def lines() -> Iterator[str]:
        i = 0
        while i == 0 or not _compression_started(internal, runtime):
            yield _said(i)
            i += 1
            assert i < 40, "compression never started"
        yield "/quit"  # while the compression is held

    feed = lines()
    monkeypatch.setattr("builtins.input", lambda prompt="": next(feed))
    started = time.monotonic()
    try:
        assert chat_cli._chat_interactive(runtime, "Aria", "scripted") == 0
    finally:
        app.close()  # the queue stops: the held compression is told to give way
    assert time.monotonic() - started < DEADLINE_S
    assert internal.cancelled == 1 and not internal.release.is_set()
    # And the next start's first after-turn work does the compression that gave way.
    internal.release.set()
    app, runtime = _runtime(tmp_path, _chat_backend(), internal)
    try:
        memory = app.personas.memory("aria")
        assert (
            runtime.queue.call(
                "summaries", lambda: Summaries(memory.db, memory.archive, memory.activity).all("main")
            )
            == []
        )
        list(runtime.send("Hello again, Aria."))
        assert runtime.queue.wait_idle(DEADLINE_S)
        assert runtime.queue.call(
            "summaries", lambda: Summaries(memory.db, memory.archive, memory.activity).all("main")
        )
    finally:
        app.close()


# -- 2. forgetting a message rewrites the summaries that covered it --------------------------------------
def test_forgetting_a_message_takes_it_out_of_the_summary_and_the_summary_is_rebuilt_without_it(
    persona, memory
) -> None:
    internal = Summariser()
    embedder = WordEmbedder()
    session = ChatSession(persona, memory, _chat_backend(echo=False), internal=internal, embedder=embedder)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _chat_until_summarised(session, memory)
    (summary,) = summaries.all("main")
    assert "marker001" in summary.text
    memory.archive.embed_pending(embedder)
    hits = memory.archive.search("marker001", embedder, k=20)
    assert "summary" in [h.kind for h in hits]
    forgotten = next(m for m in memory.messages.recent("main", 200) if "marker001" in m.content)
    assert forgotten.id in summary.covered

    session.delete(forgotten.id, forget=True)

    # At once, before any model runs: not in recall (words or meaning), not in the next prompt.
    assert memory.archive.search("marker001", None, mode="fts") == []
    assert all(h.source_id != summary.source_id for h in memory.archive.search("marker001", embedder, k=50))
    table = memory.archive.vec_table(embedder, create=False)
    assert (
        memory.db.execute(f"select count(*) from {table} where item_id = ?", [summary.item_id]).fetchone()[0]
        == 0
    )
    prompt = session.preview_prompt("What did we talk about?")
    assert all("marker001" not in m.content for m in prompt.messages)
    assert "marker000" in "".join(m.content for m in prompt.messages), "the other turns come back verbatim"
    assert summaries.current("main") is None
    # The timeline: the old compression entry no longer quotes it, and says what happened.
    entries = memory.activity.query()
    assert all("marker001" not in e.summary for e in entries)
    assert any("held a forgotten message" in e.summary for e in entries)

    # The rebuild is after-turn work: the internal model reads the remaining covered turns only.
    before = len(internal.requests)
    session.after_turn()
    rebuilt = summaries.current("main")
    assert rebuilt is not None and len(internal.requests) > before
    remaining = [i for i in summary.covered if i != forgotten.id]
    assert summaries.covered_ids(rebuilt) == remaining
    assert "marker001" not in rebuilt.text and "marker000" in rebuilt.text
    assert all("marker001" not in m.content for r in internal.requests[before:] for m in r)
    assert memory.archive.search("marker001", None, mode="fts") == []
    assert any("rebuilt without forgotten messages" in e.summary for e in memory.activity.query())
    prompt = session.preview_prompt("What did we talk about?")
    assert rebuilt.text in prompt.messages[0].content


def test_a_plain_delete_keeps_the_summary_and_the_memory_window_forget_voids_it(persona, memory) -> None:
    internal = Summariser()
    session = ChatSession(persona, memory, _chat_backend(echo=False), internal=internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _chat_until_summarised(session, memory)
    (summary,) = summaries.all("main")
    line = memory.messages.recent("main", 200)
    deleted = next(m for m in line if "marker000" in m.content)
    session.delete(deleted.id)  # without forget: memory derived from it stays
    session.delete(summary.last_id)  # the last turn it covered, too
    assert summaries.current("main") == summary
    assert "marker000" in session.preview_prompt("And then?").messages[0].content
    assert [h.kind for h in memory.archive.search("marker000", None, mode="fts")].count("summary") == 1

    # The memory window deletes an item for good through its own connection (MemoryStore.forget).
    window = MemoryStore(memory.path, role="peer")
    try:
        item = window.db.execute(
            "select id from items where kind = 'message' and text like '%marker001%'"
        ).fetchone()[0]
        assert window.forget([item]) == 1
    finally:
        window.close()
    assert summaries.current("main") is None
    assert memory.archive.search("marker001", None, mode="fts") == []
    assert all("marker001" not in m.content for m in session.preview_prompt("And then?").messages)
    session.after_turn()  # the next after-turn work rebuilds it
    rebuilt = summaries.current("main")
    assert rebuilt is not None
    left = [i for i in summary.covered if _exists(memory, i)]
    assert len(left) == len(summary.covered) - 3
    assert summaries.covered_ids(rebuilt) == left
    assert "marker001" not in rebuilt.text


def _exists(memory: MemoryStore, message_id: int) -> bool:
    return memory.db.execute("select 1 from messages where id = ?", [message_id]).fetchone() is not None


def test_forgetting_a_turn_of_the_first_step_voids_the_later_summaries_too(persona, memory) -> None:
    internal = Summariser()
    session = ChatSession(persona, memory, _chat_backend(echo=False), internal=internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _chat_until_summarised(session, memory, steps=2)
    first, second = summaries.all("main")
    assert "marker001" in second.text  # the rolling summary carries the first step's words on
    forgotten = next(m for m in memory.messages.recent("main", 200) if "marker001" in m.content)
    session.delete(forgotten.id, forget=True)
    assert summaries.all("main") == []
    assert memory.archive.search("marker001", None, mode="fts") == []
    session.after_turn()
    rebuilt = summaries.current("main")
    assert rebuilt is not None and "marker001" not in rebuilt.text
    expected = [i for i in first.covered + second.covered if i != forgotten.id]
    assert summaries.covered_ids(rebuilt) == expected


# -- 3. an old conversation is summarised in bounded, interruptible steps -------------------------------
def _import_history(memory: MemoryStore, n: int) -> list[int]:
    ids = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        ids.append(
            memory.messages.add(
                speaker="user" if role == "user" else "aria", role=role, content=_said(i), room="main"
            )
        )
    return ids


def test_an_imported_history_is_caught_up_in_bounded_steps(persona, memory) -> None:
    persona.settings.conversation.history_messages = 20
    _import_history(memory, 70)
    internal = Summariser()
    chat = _chat_backend()
    session = ChatSession(persona, memory, chat, internal=internal)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _send(session, "Do you remember all that?")
    session.after_turn()
    assert len(internal.requests) >= 3, "one call could not read it all: it takes several steps"
    assert memory.activity.query(kinds=["error"]) == []
    for request in internal.requests:  # each step reads a bounded chunk
        turns = request[-1].content.split("The conversation that follows it:")[1]
        assert chat.count_tokens(turns) < persona.settings.model.context_size
    current = summaries.current("main")
    assert current is not None
    line = memory.messages.recent("main", 200)
    covered = summaries.covered_ids(current)
    assert covered == [m.id for m in line[: len(covered)]], "from the first message on, none skipped"
    # Nothing falls between the summary and the prompt: what the summary does not cover is verbatim.
    prompt = session.preview_prompt("And now?")
    carried = "".join(m.content for m in prompt.messages)
    assert all(m.content in carried for m in line[len(covered) :])
    assert "marker000" in current.text and "marker069" not in current.text
    assert len(line) - len(covered) <= persona.settings.conversation.history_messages // 2


def test_catching_up_gives_way_between_steps_and_goes_on_after_the_next_turn(persona, memory) -> None:
    persona.settings.conversation.history_messages = 20
    _import_history(memory, 70)
    sessions: list[ChatSession] = []
    internal = Summariser()
    original = internal._summarise

    def second_call_is_interrupted(messages: Sequence[ChatMessage]) -> str:
        if len(internal.requests) == 2:
            sessions[0].interrupt_background()  # the person sent while the second step ran
        return original(messages)

    internal._replies = second_call_is_interrupted
    session = ChatSession(persona, memory, _chat_backend(), internal=internal)
    sessions.append(session)
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    _send(session, "Hello there, Aria.")
    session.after_turn()
    assert len(internal.requests) == 2
    (first,) = summaries.all("main")  # the first step is kept, the interrupted one left nothing
    assert memory.activity.query(kinds=["error"]) == []
    _send(session, "Are you still there?")
    session.after_turn()
    steps = summaries.all("main")
    assert len(steps) > 2 and steps[1].previous_id == first.id
    assert steps[1].covered[0] == min(
        m.id for m in memory.messages.recent("main", 200) if m.id > first.last_id
    )
