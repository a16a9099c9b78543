"""Regenerate, edit and delete: every version kept and browsable, the chosen one is what the conversation
shows and the next prompt sees, an edit leaves what followed as a branch, never destroyed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.scripted import ScriptedBackend


@pytest.fixture
def chat(tmp_path: Path):
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(["Reply one.", "Reply two.", "Reply three.", "Reply four.", "Reply five."])
    return ChatSession(persona, memory, backend), memory, backend


def _drain(turn) -> TurnResult:
    result = None
    for item in turn:
        if not isinstance(item, ReplyDelta):
            result = item
    assert result is not None
    return result


def _line(memory: MemoryStore) -> list[str]:
    return [m.content for m in memory.messages.recent()]


def test_regenerate_keeps_every_version_and_the_next_prompt_sees_the_chosen_one(chat) -> None:
    session, memory, backend = chat
    first = _drain(session.send("Tell me a joke."))
    second = _drain(session.regenerate(first.reply_id))
    assert _line(memory) == ["Tell me a joke.", "Reply two."]
    versions = memory.messages.versions(second.reply_id)
    assert [v.content for v in versions] == ["Reply one.", "Reply two."]
    assert [v.hidden for v in versions] == [True, False]
    # The regenerated reply answered the same message, without the old reply in its prompt.
    assert backend.requests[-1][-1].content.endswith("Tell me a joke.")
    assert all("Reply one." not in m.content for m in backend.requests[-1])

    memory.messages.choose_version(first.reply_id)  # browse back to version 1 and keep it
    assert _line(memory) == ["Tell me a joke.", "Reply one."]
    _drain(session.send("Another one?"))
    prompt = [m.content for m in backend.requests[-1]]
    assert "Reply one." in prompt and "Reply two." not in prompt


def test_regenerating_an_earlier_reply_keeps_what_followed_as_its_branch(chat) -> None:
    session, memory, _ = chat
    first = _drain(session.send("Hi"))
    _drain(session.send("How are you?"))
    redo = _drain(session.regenerate(first.reply_id))
    assert _line(memory) == ["Hi", "Reply three."]
    memory.messages.choose_version(first.reply_id)
    assert _line(memory) == ["Hi", "Reply one.", "How are you?", "Reply two."]
    memory.messages.choose_version(redo.reply_id)
    assert _line(memory) == ["Hi", "Reply three."]


def test_edit_continues_from_the_new_wording_and_keeps_the_old_branch(chat) -> None:
    session, memory, backend = chat
    first = _drain(session.send("I live in Kyoto."))
    _drain(session.send("What should I eat?"))
    edited = _drain(session.edit(first.user_message_id, "I live in Osaka."))
    assert _line(memory) == ["I live in Osaka.", "Reply three."]
    assert all("Kyoto" not in m.content for m in backend.requests[-1])  # the prompt sees the new line
    versions = memory.messages.versions(edited.user_message_id)
    assert [v.content for v in versions] == ["I live in Kyoto.", "I live in Osaka."]
    memory.messages.choose_version(first.user_message_id)  # the old conversation is all still there
    assert _line(memory) == ["I live in Kyoto.", "Reply one.", "What should I eat?", "Reply two."]
    assert memory.messages.count() == 6  # nothing was destroyed


def test_delete_removes_a_message_and_forgets_its_memory_only_when_asked(chat) -> None:
    session, memory, _ = chat
    kept = _drain(session.send("My locker code is 4321."))
    gone = _drain(session.send("My bike is red."))
    session.delete(kept.user_message_id)
    assert "My locker code is 4321." not in _line(memory)
    assert memory.archive.search("locker code", None, mode="fts")  # recall still finds what was said
    session.delete(gone.user_message_id, forget=True)
    assert "My bike is red." not in _line(memory)
    assert memory.archive.search("bike red", None, mode="fts") == []
    assert all("bike" not in e.summary for e in memory.activity.query())  # gone from the timeline too


def test_only_replies_on_the_line_can_be_regenerated_and_only_your_messages_edited(chat) -> None:
    session, memory, _ = chat
    first = _drain(session.send("Hello"))
    with pytest.raises(NexusArkError, match="regenerated"):
        list(session.regenerate(first.user_message_id))
    with pytest.raises(NexusArkError, match="edited"):
        list(session.edit(first.reply_id, "changed"))
    with pytest.raises(NexusArkError, match="no message 999"):
        list(session.regenerate(999))
    assert _line(memory) == ["Hello", "Reply one."]


def test_a_stopped_regeneration_is_a_version_too(chat) -> None:
    session, memory, _ = chat
    first = _drain(session.send("Tell me a story."))
    cancel = threading.Event()
    cancel.set()
    stopped = _drain(session.regenerate(first.reply_id, cancel))
    assert stopped.reply_id is None  # nothing came
    assert _line(memory) == ["Tell me a story.", "Reply one."]  # the conversation keeps what it had
