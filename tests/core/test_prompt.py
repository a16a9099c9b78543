"""The sectioned prompt: order, budgets, cutting by rank and at sentence boundaries, what memory puts in."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.agent.chat_template import for_template, late_system_accepted
from nexus_ark.agent.prompt import (
    BUDGET_SHARES,
    MESSAGE_OVERHEAD,
    SECTION_ORDER,
    EpisodeNote,
    MemoryContext,
    PromptTooLargeError,
    build_prompt,
    person_line,
)
from nexus_ark.agent.prompt_inputs import gather_inputs
from nexus_ark.agent.session import ChatSession, TurnResult
from nexus_ark.clock import FixedClock
from nexus_ark.memory.archive import NewItem, SearchHit
from nexus_ark.memory.components import Episode, Goal, Insight
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import estimate_tokens
from nexus_ark.providers.scripted import ScriptedBackend

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


@pytest.fixture
def memory(tmp_path: Path):
    store = MemoryStore(tmp_path / "m.db", FixedClock(NOW))
    yield store
    store.close()


def _msg(i: int, content: str, role: str = "user", day: str = "2026-03-10") -> StoredMessage:
    return StoredMessage(
        id=i,
        room="main",
        speaker=role,
        role=role,
        content=content,
        status="complete",
        created_at=f"{day}T09:00:{i % 60:02d}",
    )


def _full_context() -> MemoryContext:
    return MemoryContext(
        core_memory="Mika is my friend.",
        notepad="Buy flowers for Mika.",
        goals_short=["Learn Mika's favourite songs"],
        goals_long=["Be a good friend"],
        strategy="Ask about her day first.",
        episodes=[EpisodeNote(date="2026-03-08", text="We talked about spring.")],
        feelings="A little curious.",
        recalled=["Mika's sister is Keiko."],
        entities=["Keiko: Mika's sister, a potter."],
        knowledge=["Raku firing uses low temperatures."],
        summary="Mika said her sister took up pottery.",
    )


def test_sections_come_in_order_stable_first_changing_in_notes_before_the_newest_message(persona) -> None:
    built = build_prompt(
        persona, [_msg(1, "earlier"), _msg(2, "ok", "assistant")], "How is Keiko?", _full_context()
    )
    assert [s.name for s in built.sections] == list(SECTION_ORDER)
    system = built.messages[0].content
    order = [
        persona.soul.strip()[:20],
        "Mika is my friend.",
        "Buy flowers",
        "Learn Mika's favourite songs",
        "Be a good friend",
        "Ask about her day",
        "We talked about spring",
        "her sister took up pottery",
    ]
    positions = [system.index(text) for text in order]
    assert positions == sorted(positions), "soul, core memory, notepad, goals, strategy, episodes, summary"
    assert [(m.role, m.content) for m in built.messages[1:3]] == [("user", "earlier"), ("assistant", "ok")]
    # The changing notes: a system message of their own right before the person's words, which stand
    # alone (issue 32: in front of them the bundled model copied their labels).
    assert [m.role for m in built.messages[-2:]] == ["system", "user"]
    assert built.messages[-1].content == "How is Keiko?"
    notes = built.messages[-2].content
    positions = [
        notes.index(text) for text in ["A little curious.", "Mika's sister is Keiko.", "a potter", "Raku"]
    ]
    assert positions == sorted(positions)
    assert "(" not in notes.replace("(short-term)", ""), "no label in brackets for a small model to copy"
    assert all(s.tokens > 0 and not s.cut for s in built.sections)


def test_empty_sections_are_left_out_and_cost_nothing(persona) -> None:
    built = build_prompt(persona, [], "Hello", MemoryContext(core_memory="Mika is my friend."))
    soul = f"{persona.soul.strip()}\n\n{person_line(persona)}"
    assert built.messages[0].content == soul + "\n\n## Core memory\nMika is my friend."
    assert built.messages[-1].content == "Hello", "no feelings, recall, entities or documents: just the text"
    assert [m.role for m in built.messages] == ["system", "user"], "and no notes message"
    assert not any("How you feel now" in m.content for m in built.messages)
    assert built.section("feelings").tokens == 0 and built.section("recalled").tokens == 0


def test_the_kv_prefix_survives_the_next_turn(persona) -> None:
    """What changes every turn (recall, feelings) must not be in front of the cached conversation."""
    first = build_prompt(persona, [_msg(1, "hi")], "Tell me about Keiko", _full_context())
    changed = _full_context().model_copy(
        update={"recalled": ["Something else entirely."], "feelings": "Calm."}
    )
    history = [_msg(1, "hi"), _msg(2, "Tell me about Keiko"), _msg(3, "She is a potter.", "assistant")]
    second = build_prompt(persona, history, "And her kiln?", changed)
    assert second.messages[0] == first.messages[0]
    assert [m.content for m in second.messages[1:3]] == ["hi", "Tell me about Keiko"]


# Chat templates as the models carry them (abridged to what decides): SmolLM2's ChatML loops over every
# message; Qwen2.5's and Qwen3's render a system message after the first in place; Gemma 3's raises on a
# system message past the first; Ollama's Go templates either place system messages in their loop (qwen3)
# or lift them all into .System at the top (qwen2.5's).
SMOLLM2 = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>"
QWEN3 = (
    "{%- for message in messages %}{%- if (message.role == 'user') or (message.role == 'system' and not "
    "loop.first) %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' }}"
)
GEMMA3 = (
    "{%- if messages[0]['role'] == 'system' -%}{%- set first_user_prefix = messages[0]['content'] -%}"
    "{%- endif -%}{%- for message in loop_messages -%}{%- if (message['role'] == 'user') != (loop.index0 % 2"
    " == 0) -%}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
)
OLLAMA_QWEN3 = (
    '{{- range $i, $_ := .Messages }}{{- if eq .Role "user" }}<|im_start|>user'
    '{{- else if eq .Role "system" }}'
)
OLLAMA_QWEN25 = (
    '{{- if .System }}<|im_start|>system\n{{ .System }}{{- range .Messages }}{{- if eq .Role "user" }}'
)


def test_templates_that_keep_a_late_system_message_get_the_notes_there_and_gemma_gets_them_in_front(
    persona,
) -> None:
    built = build_prompt(
        persona, [_msg(1, "hi"), _msg(2, "hello", "assistant")], "How is Keiko?", _full_context()
    )
    for template, model in ((SMOLLM2, "bundled"), (QWEN3, "qwen3:4b"), ("", "openai/gpt-4o-mini")):
        assert late_system_accepted(template, model), model
    assert late_system_accepted(OLLAMA_QWEN3, "qwen3:4b")
    for template, model in ((GEMMA3, "gemma-3-1b-it.gguf"), ("", "gemma3:4b"), (OLLAMA_QWEN25, "qwen2.5:3b")):
        assert not late_system_accepted(template, model), model
    kept = for_template(built.messages, True)
    assert kept == built.messages
    folded = for_template(built.messages, False)
    assert [m.role for m in folded] == ["system", "user", "assistant", "user"], (
        "roles alternate: Gemma takes it"
    )
    assert folded[-1].content.startswith(built.messages[-2].content)
    assert folded[-1].content.endswith("\n\nHow is Keiko?")
    assert folded[:-1] == built.messages[:-2]


def test_an_overflowing_list_is_cut_by_rank_and_logged(persona, caplog) -> None:
    recalled = [
        f"Memory number {i} says something rather long about the garden and the sea." for i in range(60)
    ]
    context = MemoryContext(recalled=recalled)
    with caplog.at_level(logging.INFO, logger="nexus_ark.agent.prompt"):
        built = build_prompt(persona, [], "What do you remember?", context, context_size=2048, max_tokens=256)
    report = built.section("recalled")
    assert report.cut
    budget = int((2048 - 256 - MESSAGE_OVERHEAD) * BUDGET_SHARES["recalled"])
    assert 0 < report.tokens <= budget
    last = built.messages[-2].content
    assert "Memory number 0 " in last and "Memory number 59 " not in last, "the best hits stay, the worst go"
    kept = [i for i in range(60) if f"Memory number {i} " in last]
    assert kept == list(range(len(kept))), "kept in rank order with no gaps"
    assert any("recalled" in r.getMessage() and "cut" in r.getMessage() for r in caplog.records)


def test_a_long_text_is_cut_at_a_sentence_boundary(persona, caplog) -> None:
    sentences = [f"Fact {i} about Mika is that she likes item {i}." for i in range(40)]
    context = MemoryContext(core_memory=" ".join(sentences))
    # The core memory needs more than its share, and the stable pool has no spare: it is cut, not refused.
    persona.soul = "You are Aria. " * 170
    with caplog.at_level(logging.INFO, logger="nexus_ark.agent.prompt"):
        built = build_prompt(persona, [], "Hi", context, context_size=2048, max_tokens=256)
    report = built.section("core_memory")
    assert report.cut
    core = built.messages[0].content.split("## Core memory\n", 1)[1]
    assert core.endswith(".") and core in " ".join(sentences), "a whole-sentence beginning of the text"
    assert 0 < len(core) < len(" ".join(sentences))
    assert any("core_memory" in r.getMessage() for r in caplog.records)


def test_a_cut_keeps_japanese_sentences_whole(persona) -> None:
    text = "".join(f"ミカさんは{i}番目の花が好きです。" for i in range(90))
    built = build_prompt(
        persona, [], "こんにちは", MemoryContext(notepad=text), context_size=2048, max_tokens=256
    )
    notepad = built.messages[0].content.split("## Notepad\n", 1)[1]
    assert built.section("notepad").cut and notepad.endswith("。") and text.startswith(notepad)


def test_a_soul_that_cannot_fit_names_the_file_to_shorten(persona) -> None:
    persona.soul = "You are Aria, who loves long walks by the sea. " * 800  # about 9,000 tokens
    with pytest.raises(PromptTooLargeError) as err:
        build_prompt(persona, [], "Hi", None, context_size=4096, max_tokens=256)
    message = str(err.value)
    assert "persona.md is 9," in message and "4,096" in message and "shorten persona.md" in message
    assert "context_size" in message, "and how else to make room"


def test_a_prompt_that_cannot_fit_is_refused_before_anything_is_stored(persona, memory) -> None:
    persona.soul = "You are Aria, who loves long walks by the sea. " * 800
    session = ChatSession(persona, memory, ScriptedBackend(["never"]))
    with pytest.raises(PromptTooLargeError, match=r"shorten persona\.md"):
        list(session.send("Hi there"))
    assert memory.messages.count() == 0, "nothing stored, nothing sent: the text is still the caller's"


def test_the_oldest_turns_go_first_and_the_new_message_always_stays(persona) -> None:
    history = [_msg(i, f"Message {i}: " + "words and more words " * 30) for i in range(40)]
    built = build_prompt(persona, history, "the newest", None, context_size=2048, max_tokens=256)
    contents = [m.content for m in built.messages[1:]]
    assert contents[-1] == "the newest" and contents[-2].startswith("Message 39:")
    assert not any(c.startswith("Message 0:") for c in contents)
    assert built.section("conversation").cut
    total = sum(s.tokens for s in built.sections)
    assert total <= 2048 - 256, "the whole prompt leaves room for the reply"


def test_tokens_are_counted_with_the_backends_counter(persona) -> None:
    built = build_prompt(persona, [], "Hi", None, count=lambda text: 2 * estimate_tokens(text))
    soul = f"{persona.soul.strip()}\n\n{person_line(persona)}"
    assert built.section("soul").tokens == 2 * estimate_tokens(soul)


def test_the_estimate_counts_cjk_characters_one_token_each() -> None:
    assert estimate_tokens("こんにちは") == 5
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("") == 0


# -- what memory puts in ---------------------------------------------------------------------------
def test_goals_three_short_two_long_and_only_the_latest_strategy(memory) -> None:
    for i in range(5):
        memory.components.put_goal(Goal(term="short", goal=f"short goal {i}", priority=i))
        memory.components.put_goal(Goal(term="long", goal=f"long goal {i}", priority=i))
    memory.components.add_insight(Insight(trigger_topic="a", insight="b", strategy="old way", log_entry=""))
    memory.components.add_insight(Insight(trigger_topic="c", insight="d", strategy="new way", log_entry=""))
    context = gather_inputs(memory, "hello", [], [], lookback_days=3, now=NOW, recall_k=3)
    assert context.goals_short == ["short goal 0", "short goal 1", "short goal 2"]
    assert context.goals_long == ["long goal 0", "long goal 1"]
    assert context.strategy == "new way"


def test_episodes_are_the_n_days_before_the_oldest_message_in_the_prompt(memory) -> None:
    for day in ("2026-03-01", "2026-03-04", "2026-03-05", "2026-03-07", "2026-03-08", "2026-03-09"):
        memory.components.put_episode(Episode(date=day, summary=f"summary of {day}"))
    history = [_msg(1, "hello", day="2026-03-08"), _msg(2, "hi", "assistant", day="2026-03-09")]
    context = gather_inputs(memory, "hello", history, [], lookback_days=3, now=NOW, recall_k=3)
    assert [e.date for e in context.episodes] == ["2026-03-05", "2026-03-07"]
    # No conversation in the prompt: the days before today.
    context = gather_inputs(memory, "hello", [], [], lookback_days=2, now=NOW, recall_k=3)
    assert [e.date for e in context.episodes] == ["2026-03-08", "2026-03-09"]
    assert gather_inputs(memory, "hello", [], [], lookback_days=0, now=NOW, recall_k=3).episodes == []


def test_entities_and_documents_come_only_when_they_match(persona, memory) -> None:
    memory.components.write_entity("Keiko", "Mika's sister, a potter who fires raku.")
    memory.archive.add(NewItem(kind="kb_chunk", text="Raku firing takes pots out of the kiln red hot."))
    backend = ScriptedBackend(["ok"])
    session = ChatSession(persona, memory, backend)
    list(session.send("Did Keiko fire anything in her kiln?"))
    asked = backend.requests[-1][-2].content
    assert "Keiko: Mika's sister, a potter" in asked
    assert "Raku firing takes pots out of the kiln" in asked
    list(session.send("What a lovely sunny afternoon."))
    unrelated = backend.requests[-1][-1].content
    assert unrelated == "What a lovely sunny afternoon.", "nothing matched: no entity, no document"


def test_the_dry_run_shows_what_the_turn_sends_and_stores_nothing(persona, memory) -> None:
    memory.components.set_core_memory("Mika is my friend.")
    backend = ScriptedBackend(["Hello!"])
    session = ChatSession(persona, memory, backend)
    preview = session.preview_prompt("Good morning")
    assert memory.messages.count() == 0
    result = next(r for r in session.send("Good morning") if isinstance(r, TurnResult))
    assert result.status == "complete"
    assert backend.requests[0] == preview.messages


def test_recall_leaves_out_messages_already_in_the_conversation_imported_ones_too(memory) -> None:
    hits = [
        SearchHit(
            item_id=1,
            source_id="chatgpt:abc",
            kind="message",
            text="Mika: my sister is Keiko",
            score=1,
            timestamp="",
        ),
        SearchHit(
            item_id=2, source_id="msg:7", kind="message", text="Mika: she paints", score=0.9, timestamp=""
        ),
        SearchHit(
            item_id=3, source_id="msg:99", kind="message", text="Mika: Keiko moved", score=0.8, timestamp=""
        ),
    ]
    history = [
        _msg(5, "my sister is Keiko").model_copy(update={"source_id": "chatgpt:abc"}),
        _msg(7, "she paints"),
    ]
    context = gather_inputs(memory, "Keiko?", history, hits, lookback_days=0, now=NOW, recall_k=3)
    assert context.recalled == ["Mika: Keiko moved"]


def test_an_entity_named_in_japanese_comes_with_the_message(memory) -> None:
    memory.components.write_entity("ケイコ", "ミカの姉。京都で陶芸をしている。")
    memory.components.write_entity("タロウ", "ミカの同僚。")
    context = gather_inputs(memory, "ケイコは元気かな？", [], [], lookback_days=0, now=NOW, recall_k=3)
    assert context.entities == ["ケイコ: ミカの姉。京都で陶芸をしている。"]
