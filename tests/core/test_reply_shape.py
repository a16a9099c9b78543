"""Replies shaped to a small model (agent.reply_shape), on the scripted model: short, whole sentences, a cut
never stored as if whole, no copied sentences, the persona's name not used for the person. The real
bundled model: tests/integration/test_small_model_turns.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.agent.reply_shape import (
    SMALL_MAX_TOKENS,
    SMALL_REPEAT_PENALTY,
    ReplyShape,
    SentenceGate,
    example_names,
    persona_name_fix,
    shape_reply,
    trim_to_sentence,
)
from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import Capabilities, GenerationParams
from nexus_ark.providers.scripted import ScriptedBackend

SMALL = 135_000_000  # the bundled SmolLM2-135M
LARGE = 7_000_000_000


@pytest.fixture
def persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


def _run(session: ChatSession, text: str) -> tuple[str, TurnResult]:
    deltas, result = [], None
    for item in session.send(text):
        if isinstance(item, ReplyDelta):
            deltas.append(item.text)
        else:
            result = item
    assert result is not None
    return "".join(deltas), result


def test_a_small_model_is_asked_for_less_with_stops_and_a_stronger_penalty_a_large_one_as_set():
    params = GenerationParams(max_tokens=256, repeat_penalty=1.1)
    small = shape_reply(params, Capabilities(parameters=SMALL), "Aria")
    assert small.small and small.params.max_tokens == SMALL_MAX_TOKENS
    assert small.params.repeat_penalty == SMALL_REPEAT_PENALTY
    assert "\nUser:" in small.params.stop and "\nAria:" in small.params.stop
    assert small.soft_tokens is not None and small.soft_tokens < SMALL_MAX_TOKENS
    # The persona asking for less than the small limit keeps its own.
    assert (
        shape_reply(
            params.model_copy(update={"max_tokens": 32}), Capabilities(parameters=SMALL), "A"
        ).params.max_tokens
        == 32
    )
    for caps in (Capabilities(parameters=LARGE), Capabilities()):  # unknown size: capable
        large = shape_reply(params, caps, "Aria")
        assert not large.small and large.params == params


def test_trimming_keeps_whole_sentences_and_says_where_none_came():
    assert trim_to_sentence("It rained. We stayed in. Then the") == ("It rained. We stayed in.", "Then the")
    assert trim_to_sentence("雨だった。家にいた。それから") == ("雨だった。家にいた。", "それから")
    assert trim_to_sentence("Once upon a time there") == ("Once upon a time…", "there")
    assert trim_to_sentence("Whole. ") == ("Whole.", "")


def test_the_persona_name_used_for_the_person_is_taken_out_but_not_when_it_names_itself():
    assert persona_name_fix("Hi Aria! ", "Aria") == "Hi! "
    assert persona_name_fix("Good morning, Aria. ", "Aria") == "Good morning. "
    assert persona_name_fix("Aria, how was work? ", "Aria") == "How was work? "
    assert persona_name_fix("That sounds lovely, Aria! ", "Aria") == "That sounds lovely! "
    assert persona_name_fix("I'm Aria, and I like tea. ", "Aria") == "I'm Aria, and I like tea. "


def test_the_gate_holds_a_copy_until_it_diverges_ends_early_at_a_sentence_and_drops_copies():
    shape = ReplyShape(params=GenerationParams(), small=True, soft_tokens=6, persona_name="Aria")
    gate = SentenceGate(shape, earlier=frozenset({"i'm so sorry for your loss."}))
    shown = [gate.feed(p) for p in ["I'm", " so", " sorry", " for", " your", " loss.", " Pasta", " is"]]
    assert "".join(shown) == ""  # a copy of an earlier reply, left out
    shown = [gate.feed(p) for p in [" quick.", " Try", " garlic."]]
    assert shown == ["", "Pasta is quick. ", ""] and gate.done is False
    assert gate.feed(" Then") == "Try garlic. " and gate.done  # past the soft length, at a sentence end
    _rest, text, tail = gate.finish("stop")
    assert text == "Pasta is quick. Try garlic." and gate.dropped and tail == ""


def _cut_reply_session(
    persona, tmp_path: Path, reply: str
) -> tuple[ChatSession, MemoryStore, ScriptedBackend]:
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend([reply], parameters=SMALL)
    return ChatSession(persona, memory, backend), memory, backend


def test_a_small_models_reply_ends_at_a_sentence_and_what_streamed_is_what_is_stored(persona, tmp_path: Path):
    words = " ".join(f"Sentence number {i} is here." for i in range(40))  # 200 words: past every limit
    session, memory, backend = _cut_reply_session(persona, tmp_path, words)
    streamed, result = _run(session, "Talk to me.")
    stored = memory.messages.get(result.reply_id)
    assert streamed.strip() == result.text == stored.content
    assert stored.content.endswith(".") and len(stored.content.split()) < 60
    # It ended itself at a sentence after the soft length: nothing was cut, so nothing to continue.
    assert stored.meta["ended_at_sentence"] and not stored.meta["cut_by_limit"]
    assert backend.requests and result.tokens < SMALL_MAX_TOKENS


def test_a_small_models_reply_cut_by_the_limit_is_trimmed_marked_and_continues_from_the_cut(
    persona, tmp_path: Path
):
    persona.settings.model.max_tokens = 12  # below the soft length: the hard limit cuts
    session, memory, _ = _cut_reply_session(
        persona, tmp_path, "The sea was calm. The keeper climbed the stairs and looked at the long dark"
    )
    streamed, result = _run(session, "Tell me a story.")
    stored = memory.messages.get(result.reply_id)
    assert result.text == stored.content == "The sea was calm."
    # Its words streamed as they came; those of the sentence the limit cut are not kept as said.
    assert streamed.startswith("The sea was calm. The keeper")
    assert (
        stored.meta["cut_by_limit"]
        and stored.meta["cut_tail"] == "The keeper climbed the stairs and looked at"
    )
    assert result.cut_by_limit


def test_a_small_model_calling_the_person_by_the_personas_name_and_copying_itself_is_corrected(
    persona, tmp_path: Path
):
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(
        [
            "Hi Aria! I love talking with you about the sea.",
            "I love talking with you about the sea. The waves are loud today, Aria.",
        ],
        parameters=SMALL,
    )
    session = ChatSession(persona, memory, backend)
    _, first = _run(session, "Hello!")
    _, second = _run(session, "What is new?")
    assert first.text == "Hi! I love talking with you about the sea."
    assert second.text == "The waves are loud today."  # the copied sentence is left out
    assert second.meta["dropped_repeats"] == 1 and second.meta["persona_name_removed"] == 1


def test_a_large_model_streams_as_it_comes_and_only_a_cut_is_trimmed(persona, tmp_path: Path):
    persona.settings.model.max_tokens = 8
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(["Hi Aria! It rained all day. We stayed in and played"], parameters=LARGE)
    session = ChatSession(persona, memory, backend)
    streamed, result = _run(session, "How was it?")
    assert streamed == "Hi Aria! It rained all day. We stayed"  # streamed as it came
    assert result.text == "Hi Aria! It rained all day." and result.cut_by_limit
    assert memory.messages.get(result.reply_id).meta["cut_tail"] == "We stayed"
    assert backend.requests and "Aria" in result.text  # a capable model's words are its own


def test_the_gate_lets_words_out_as_they_come_holding_only_what_may_change():
    shape = ReplyShape(params=GenerationParams(), small=True, soft_tokens=None, persona_name="Aria")
    gate = SentenceGate(shape, earlier=frozenset({"the waves are loud and the wind is cold."}))
    pieces = ["The", "waves", "are", "loud", "and", "the", "gulls", "are", "back,", "Aria.", "See"]
    shown = [gate.feed(p if i == 0 else " " + p) for i, p in enumerate(pieces)]
    # Held while it could still copy the earlier sentence, then let out a word behind the model; the
    # ", Aria" at its end held until the sentence ended, and taken out.
    assert shown[:5] == ["", "", "", "", ""] and shown[6] == "The waves are loud and the "
    assert "".join(shown) == "The waves are loud and the gulls are back. "
    assert gate.renamed == 1
    _rest, text, _tail = gate.finish("stop")
    assert text == "The waves are loud and the gulls are back. See"


def test_what_streams_is_what_is_stored_line_breaks_and_japanese_included(persona, tmp_path: Path):
    memory = MemoryStore(tmp_path / "m.db")
    # Pieces as llama.cpp streamed them to a Japanese persona: a full-width question mark, then a break.
    reply = "こんにちは、元気ですか？\n👍\n\n今日は晴れ。"
    backend = ScriptedBackend([reply], parameters=SMALL, chunk_size=3)
    session = ChatSession(persona, memory, backend)
    streamed, result = _run(session, "こんにちは。")
    assert streamed.strip() == result.text == memory.messages.get(result.reply_id).content == reply


# -- issue 32: never the persona's own name, nor one from its soul's examples ----------------------------
EXAMPLES_SOUL = """# Aria

You are Aria, a friendly companion.

## Example messages

<START>
Tomo: Hi Aria, long day today.
Aria: Welcome back, Tomo! Tell me everything.
<START>
{{user}}: I got the job!
Aria: That's wonderful, Mika!
"""


def test_the_names_of_the_souls_examples_are_found_but_not_the_persona_or_the_macros():
    assert example_names(EXAMPLES_SOUL, "Aria") == ["Tomo", "Mika"]
    assert example_names("# Aria\n\nYou are Aria. Tomo is not in an example.", "Aria") == []


def test_a_wrong_name_becomes_the_persons_or_goes():
    names = ("Aria", "Tomo")
    assert persona_name_fix("Hi Tomo! How was work? ", names, "Ken") == "Hi Ken! How was work? "
    assert persona_name_fix("Tomo, how was work? ", names, "Ken") == "Ken, how was work? "
    assert persona_name_fix("That sounds lovely, Aria! ", names, "Ken") == "That sounds lovely, Ken! "
    assert persona_name_fix("Hi Tomo! How was work? ", names) == "Hi! How was work? "
    assert persona_name_fix("I'm Aria, and Tomo is a friend of mine. ", names, "Ken") == (
        "I'm Aria, and Tomo is a friend of mine. "
    ), "not said to the person: kept"


@pytest.mark.parametrize(
    ("user_name", "expected"), [("Ken", "Hi Ken! How was work today, Ken?"), ("", "Hi! How was work today?")]
)
def test_a_small_model_calling_the_person_by_an_examples_name_is_shown_and_stored_with_the_persons(
    persona, tmp_path: Path, user_name: str, expected: str
):
    persona.soul = EXAMPLES_SOUL
    persona.user_name = user_name
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(["Hi Tomo! How was work today, Mika?"], parameters=SMALL)
    shown, result = _run(ChatSession(persona, memory, backend), "I'm home.")
    stored = memory.messages.get(result.reply_id).content
    assert stored == result.text == expected
    assert shown.strip() == stored, "what is shown is what is stored"
