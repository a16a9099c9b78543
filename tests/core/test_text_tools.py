"""Memory tools for models without native tool calls: the text protocol in conversation, its markup never
on screen (also when an opener is split across chunks), bounded in rounds."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from nexus_ark.agent.session import MAX_TOOL_ROUNDS, ChatSession, ReplyDelta, TurnResult
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.providers.tools import MarkupFilter

CALL = '<tool_call>{"name": "search_memory", "arguments": {"query": "cat"}}</tool_call>'


def _shown(pieces: Sequence[str]) -> str:
    markup = MarkupFilter()
    return "".join(markup.feed(p) for p in pieces) + markup.flush()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 11])
def test_markup_is_hidden_whatever_the_chunking(size: int) -> None:
    text = f"Let me look. {CALL} Found it: < 3 cats, a <tool and a <b>bold</b> word."
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    assert _shown(pieces) == "Let me look.  Found it: < 3 cats, a <tool and a <b>bold</b> word."


def test_an_opener_split_across_chunks_never_shows_even_partly() -> None:
    markup = MarkupFilter()
    seen = [markup.feed("Sure. <tool"), markup.feed('_call>{"name": "x"'), markup.feed("}</tool_call> Done.")]
    assert seen == ["Sure. ", "", " Done."]
    assert markup.flush() == ""


def test_an_unclosed_block_is_never_shown() -> None:
    assert _shown(["Hmm <tool_call>{", '"name": "search_memory", "argu']) == "Hmm "


def test_text_that_only_looked_like_an_opener_is_given_back_at_the_end() -> None:
    assert _shown(["I love you <3 <too"]) == "I love you <3 <too"


def _persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


def _run(session: ChatSession, text: str) -> tuple[str, TurnResult]:
    deltas, result = [], None
    for item in session.send(text, threading.Event()):
        if isinstance(item, ReplyDelta):
            deltas.append(item.text)
        else:
            result = item
    assert result is not None
    return "".join(deltas), result


def _calls_then_answers(messages: Sequence[ChatMessage]) -> str:
    if any("<tool_result" in m.content for m in messages if m.role == "user"):
        return "Your cat is called Luna."
    return f"Let me check my memory. {CALL}"


def test_a_model_without_native_tools_uses_memory_tools_and_the_person_sees_no_markup(tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    memory.components.set_core_memory("Mika's cat is called Luna.")
    backend = ScriptedBackend(_calls_then_answers, text_tools=True, chunk_size=4)
    session = ChatSession(_persona(tmp_path), memory, backend)
    streamed, result = _run(session, "What is my cat called?")
    assert "<tool" not in streamed and "tool_call" not in streamed
    assert streamed.startswith("Let me check my memory.") and streamed.endswith("Your cat is called Luna.")
    assert result.meta["tool_calls"][0]["name"] == "search_memory"
    assert "Luna" in result.meta["tool_calls"][0]["result"]
    stored = memory.messages.get(result.reply_id).content
    assert "tool_call" not in stored and "Luna" in stored
    assert "<tool_call>" in backend.requests[0][0].content  # the protocol was explained to the model


def test_text_tools_are_bounded_in_rounds(tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend([f"Again. {CALL}"], text_tools=True)
    session = ChatSession(_persona(tmp_path), memory, backend)
    streamed, result = _run(session, "Hello")
    assert len(backend.requests) <= MAX_TOOL_ROUNDS + 1
    assert "tool_call" not in streamed and result.status == "complete"


@pytest.mark.parametrize(
    ("setting", "big_model", "offered"),
    [("auto", False, False), ("auto", True, True), ("on", False, True), ("off", True, False)],
)
def test_which_models_get_the_text_protocol(
    tmp_path: Path, setting: str, big_model: bool, offered: bool
) -> None:
    persona = _persona(tmp_path)
    persona.settings.conversation.text_tools = setting  # type: ignore[assignment]
    backend = ScriptedBackend(["Hello there."], text_tools=big_model)
    session = ChatSession(persona, MemoryStore(tmp_path / "m.db"), backend)
    _run(session, "Hi")
    assert ("<tool_call>" in backend.requests[0][0].content) == offered


def test_a_turn_leaves_its_messages_and_tool_calls_in_the_timeline(tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.db")
    memory.components.set_core_memory("Mika's cat is called Luna.")
    session = ChatSession(_persona(tmp_path), memory, ScriptedBackend(_calls_then_answers, text_tools=True))
    _, result = _run(session, "What is my cat called?")
    turn = [e for e in memory.activity.query() if e.kind in ("message", "tool_call")]
    assert [e.kind for e in turn] == ["message", "tool_call", "message"]
    assert "What is my cat called?" in turn[0].summary and turn[0].message_id == result.user_message_id
    assert "search_memory" in turn[1].summary and turn[1].message_id == result.reply_id
    assert "Luna" in turn[2].summary and turn[2].message_id == result.reply_id
