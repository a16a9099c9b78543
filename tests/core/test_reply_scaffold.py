"""A reply that starts to copy the prompt's scaffolding is cut there (issue 32, agent.reply_scaffold): the
cutter on its own, however the reply is streamed, and through a turn on the scripted model, where what is
shown and what is stored end at the same place. The bundled model's own replies:
tests/integration/test_small_model_turns.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.agent.reply_scaffold import ScaffoldCutter, note_lines
from nexus_ark.agent.session import ChatSession, ReplyDelta, TurnResult
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.scripted import ScriptedBackend

SMALL = 135_000_000


def _cut(text: str, step: int) -> tuple[str, ScaffoldCutter]:
    """What the cutter lets out of `text` streamed `step` characters at a time (stopping at a cut, as a
    turn stops the model there)."""
    cutter, shown = ScaffoldCutter(), ""
    for i in range(0, len(text), step):
        shown += cutter.feed(text[i : i + step])
        if cutter.cut:
            break
    return shown + cutter.finish(), cutter


# (the model's reply, what is kept): the issue's own copies first.
CASES = [
    ("Hello. What's your name? (What you know about what is said:)", "Hello. What's your name?"),
    ("Sure! (You remember what I asked:) ok", "Sure!"),
    ("That sounds lovely.\n(How you feel now:\n- curious)", "That sounds lovely."),
    ("Nice.\nThings you remember that may matter here:\n- Luna steals basil.", "Nice."),
    ("Nice.\n## Core memory\nMika is my friend.", "Nice."),
    ("I'm sorry.\n- 2017-3: The person was away for two days.", "I'm sorry."),  # a recalled memory's form
    ("Hi! 今日は（覚えていること：）です", "Hi! 今日は"),
    # A reply that opens with a label goes on after it, not left empty.
    ("(How you feel now:\n- a little lonely)\n\nWelcome back! How was work?", "Welcome back! How was work?"),
    ("Background for your next reply, for you only.\n\nHello there!", "Hello there!"),
    # A reply's own asides and sentences stay whole.
    ("I love this (my favourite: tea) so much.", "I love this (my favourite: tea) so much."),
    ("What you know about me is a lot.\nYes!", "What you know about me is a lot.\nYes!"),
    ("Pasta (with basil) is quick.", "Pasta (with basil) is quick."),
]


@pytest.mark.parametrize("step", [1, 3, 8, 1000])
@pytest.mark.parametrize(("reply", "kept"), CASES)
def test_a_copied_label_is_cut_where_it_begins_however_the_reply_streams(reply: str, kept: str, step: int):
    shown, cutter = _cut(reply, step)
    assert shown.strip() == kept
    assert cutter.cut == (kept != reply and not reply.startswith(("(How", "Background")))


@pytest.fixture
def persona(tmp_path: Path):
    return PersonaStore(tmp_path / "personas").create("Aria")


def _turn(session: ChatSession, text: str) -> tuple[str, TurnResult]:
    deltas, result = [], None
    for item in session.send(text):
        if isinstance(item, ReplyDelta):
            deltas.append(item.text)
        else:
            result = item
    assert result is not None
    return "".join(deltas), result


@pytest.mark.parametrize("parameters", [SMALL, None], ids=["small model", "capable model"])
def test_a_turn_shows_and_stores_the_reply_up_to_the_copied_label(persona, tmp_path: Path, parameters):
    memory = MemoryStore(tmp_path / "m.db")
    backend = ScriptedBackend(
        ["Hello, nice to see you. How was your day? (What you know about what is said:) Luna is a cat."],
        parameters=parameters,
    )
    session = ChatSession(persona, memory, backend)
    shown, result = _turn(session, "Hi, I'm back.")
    stored = memory.messages.get(result.reply_id)
    assert stored.content == result.text == "Hello, nice to see you. How was your day?"
    assert shown.strip() == stored.content, "nothing shown that is not stored"
    assert stored.meta["scaffolding_cut"] and result.status == "complete"


def test_a_line_copied_from_the_notes_is_cut_where_it_begins():
    """Measured on the bundled model (docs/benchmarks.md): with the notes in a system message of their own
    it no longer wrote labels, but 3 of 30 replies went on with one of the notes' lines."""
    notes = note_lines(
        "Background for your next reply.\n\nFrom your documents:\n"
        "- Basil grows best with six hours of sun and moist soil."
    )
    for step in (1, 4, 1000):
        cutter, shown = ScaffoldCutter(notes=notes), ""
        reply = "The person's cat, Luna!\n- The basil grows best with six hours of sun and moist soil."
        for i in range(0, len(reply), step):
            shown += cutter.feed(reply[i : i + step])
            if cutter.cut:
                break
        assert (shown + cutter.finish()).strip() == "The person's cat, Luna!" and cutter.cut
    kept = ScaffoldCutter(notes=notes)
    text = "Basil is lovely.\n- Basil grows fast in summer, water it often."
    assert (kept.feed(text) + kept.finish()) == text, "the reply's own words about basil stay"
