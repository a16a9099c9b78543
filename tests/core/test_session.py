"""The turn engine's logic, on a scripted backend (the real model is covered in tests/integration)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from nexus_ark.agent.prompt import build_messages, person_line
from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.errors import ModelError, NexusArkError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams, StreamChunk
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.scripted import ScriptedBackend


@pytest.fixture
def persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


def _run(session: ChatSession, text: str, cancel: threading.Event | None = None) -> tuple[str, TurnResult]:
    deltas, result = [], None
    for item in session.send(text, cancel):
        if isinstance(item, ReplyDelta):
            deltas.append(item.text)
        else:
            result = item
    assert result is not None
    return "".join(deltas), result


def test_turn_streams_and_stores_both_messages(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(persona, memory, ScriptedBackend(["Hello there, friend."]))
    streamed, result = _run(session, "  Hi!  ")
    assert streamed == "Hello there, friend."
    assert result.status == "complete" and result.tokens == 3 and not result.error
    rows = memory.messages.recent()
    assert [(r.role, r.content, r.status) for r in rows] == [
        ("user", "Hi!", "complete"),
        ("assistant", "Hello there, friend.", "complete"),
    ]
    assert rows[1].speaker == persona.slug and rows[1].meta["model"] == "scripted"


def test_prompt_has_soul_first_then_history_in_order(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(["one", "two"])
    session = ChatSession(persona, memory, backend)
    _run(session, "first")
    _run(session, "second")
    sent = backend.requests[-1]
    assert sent[0].role == "system" and sent[0].content == f"{persona.soul.strip()}\n\n{person_line(persona)}"
    assert [(m.role, m.content) for m in sent[1:]] == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second"),
    ]


def test_history_limit_keeps_the_newest_turns(persona) -> None:
    persona.settings.conversation.history_messages = 2
    from nexus_ark.memory.messages import StoredMessage

    history = [
        StoredMessage(
            id=i, room="main", speaker="user", role="user", content=f"m{i}", status="complete", created_at=""
        )
        for i in range(5)
    ]
    messages = build_messages(persona, history, "now")
    assert [m.content for m in messages[1:]] == ["m3", "m4", "now"]


def test_stop_keeps_the_partial_reply_marked(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    cancel = threading.Event()
    session = ChatSession(persona, memory, ScriptedBackend(["a b c d e f g h"]))
    seen = []
    result = None
    for item in session.send("go", cancel):
        if isinstance(item, ReplyDelta):
            seen.append(item.text)
            if len(seen) == 3:
                cancel.set()
        else:
            result = item
    assert result is not None and result.status == "stopped"
    assert result.text == "a b c"
    assert memory.messages.get(result.reply_id).status == "stopped"


class _FailsMidStream(ChatBackend):
    model_id = "failing"

    def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        cancel: threading.Event | None = None,
        **options: object,
    ) -> Iterator[StreamChunk]:
        yield StreamChunk("partial ")
        yield StreamChunk("answer")
        raise ModelError("The model ran out of memory.")


def test_model_error_mid_stream_keeps_everything(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(persona, memory, _FailsMidStream())
    streamed, result = _run(session, "question")
    assert streamed == "partial answer"
    assert result.status == "error" and "out of memory" in result.error
    rows = memory.messages.recent()
    assert rows[0].content == "question"
    assert rows[1].content == "partial answer" and rows[1].status == "error"
    assert "out of memory" in rows[1].meta["error"]


def test_empty_reply_is_reported_not_stored_blank(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(persona, memory, ScriptedBackend([""]))
    _streamed, result = _run(session, "hello?")
    assert result.status == "error" and "empty" in result.error
    assert [r.role for r in memory.messages.recent()] == ["user"]


def test_long_reply_is_journaled_while_streaming(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(
        persona, memory, ScriptedBackend([" ".join(["word"] * 10)], delay_s=0.01), journal_interval_s=0.02
    )
    snapshots = []
    for item in session.send("talk"):
        if isinstance(item, ReplyDelta):
            rows = memory.messages.recent()
            if rows[-1].role == "assistant":
                snapshots.append((rows[-1].status, rows[-1].content))
    assert any(status == "streaming" and content.startswith("word") for status, content in snapshots)


def test_unsavable_message_is_reported_before_the_model_runs(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(["never"])
    session = ChatSession(persona, memory, backend)
    memory.db.execute("pragma query_only = 1")  # writes now fail the way a full or read-only disk does
    from nexus_ark.errors import DatabaseError

    with pytest.raises(DatabaseError) as err:
        list(session.send("keep me"))
    assert "m.db" in str(err.value)
    assert backend.requests == []


class _BrokenEmbedder(Embedder):
    """An embedder whose model cannot load (a damaged install): recall must fall back to keywords."""

    model_id = "broken"
    dim = 4

    def embed_passages(self, texts):
        raise ModelError("The embedding model cannot be loaded.")


def test_chat_keeps_working_and_recalls_by_keyword_without_an_embedder(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    from nexus_ark.memory.conversation_index import Turn, index_turns

    index_turns(
        memory.archive,
        [
            Turn(
                speaker="Mika",
                text="Luna the cat is twelve.",
                created_at="2025-01-01T10:00:00",
                source_id="old",
            )
        ],
    )
    backend = ScriptedBackend(["She is twelve."])
    session = ChatSession(persona, memory, backend, embedder=_BrokenEmbedder())
    _streamed, result = _run(session, "How old is Luna?")
    assert result.status == "complete"
    assert "Luna the cat is twelve." in backend.requests[0][-2].content, "recalled into the notes"
    assert session.embed_new_memories() == 0, "vectors wait for a working embedder"


def test_a_reply_cut_by_the_token_limit_says_so_and_continues_in_the_same_message(
    persona, tmp_path: Path
) -> None:
    persona.settings.model.max_tokens = 4
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(["Once upon a time there", "there was a cat."])
    session = ChatSession(persona, memory, backend)
    streamed, result = _run(session, "Tell me a story.")
    assert streamed == "Once upon a time" and result.cut_by_limit
    # No whole sentence came before the limit: kept up to the last whole word, trailing off, and the
    # word the limit may have cut is kept beside it, not in it.
    cut = memory.messages.get(result.reply_id)
    assert cut.content == result.text == "Once upon a…"
    assert cut.meta["cut_by_limit"] is True and cut.meta["cut_tail"] == "time" and cut.meta["trails_off"]

    deltas, more = [], None
    for item in session.continue_reply(result.reply_id):
        if isinstance(item, ReplyDelta):
            deltas.append(item.text)
        else:
            more = item
    assert more is not None and more.reply_id == result.reply_id and not more.cut_by_limit
    assert "".join(deltas) == " time there was a cat."  # from where the limit stopped it
    stored = memory.messages.get(result.reply_id)
    assert stored.content == "Once upon a time there was a cat." and stored.status == "complete"
    assert stored.meta["continued"] == 1 and not stored.meta["cut_by_limit"]
    # One message each for the person and the persona: the nudge to go on was sent, never stored.
    assert [m.role for m in memory.messages.recent()] == ["user", "assistant"]
    assert backend.requests[-1][-1].role == "user" and "Continue" in backend.requests[-1][-1].content


def test_only_a_cut_reply_can_be_continued(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(persona, memory, ScriptedBackend(["Short."]))
    _, result = _run(session, "Hi")
    assert not result.cut_by_limit
    with pytest.raises(NexusArkError, match="cut short"):
        list(session.continue_reply(result.reply_id))


def test_a_failed_turn_is_in_the_timeline(persona, tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")

    class Broken(ScriptedBackend):
        def _stream(self, request):
            yield from ()  # a generator, as a backend's stream is
            raise ModelError("The model file is damaged.")

    session = ChatSession(persona, memory, Broken(["unused"]))
    _, result = _run(session, "Hello?")
    assert result.status == "error"
    errors = memory.activity.query(kinds=["error"])
    assert len(errors) == 1 and "damaged" in errors[0].summary
    assert errors[0].message_id == result.user_message_id
