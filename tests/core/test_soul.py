"""The persona grows (issue 25) on scripted models and real SQLite: a level-3 dream proposes a change to its
soul with sources, the person accepts (after editing) or declines it, fixed sections are never proposed,
every version of persona.md is kept (the editor's, accepted proposals, outside edits noticed at open) and any
can be restored byte for byte."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.dreaming.stages import NEEDS_REFLECTION
from nexus_ark.memory.portability import export_memory
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.soul import sections
from nexus_ark.soul.keeper import SoulRefused
from tests.conftest import Notes

DAY = date(2026, 11, 20)
NIGHT = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)
NEW_VOICE = "- Short replies, and a little poetry when the evening is quiet.\n- One question at a time."
TALK = [
    ("user", "I loved the haiku you wrote about the rain yesterday."),
    ("assistant", "Thank you! Writing it felt like the most me I have been."),
    ("user", "You should write more of them, in the evenings."),
    ("assistant", "I would like that."),
]


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def proposing(section: str = "How you speak", text: str = NEW_VOICE):
    """An internal model that answers only the soul stage (every other stage gets nothing valid)."""

    def answer(messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content
        if '"section"' in system:
            ids = [line.split("]")[0][1:] for line in system.splitlines() if line.startswith("[msg:")]
            return json.dumps(
                {
                    "section": section,
                    "text": text,
                    "reason": "The person loves my haiku; poetry has become part of how I speak.",
                    "source_ids": ids[:2],
                }
            )
        return "{}"

    return answer


def make_app(tmp_path: Path, model: ScriptedBackend, notes: Notes | None = None) -> NexusApp:
    clock = FixedClock(NIGHT)
    return NexusApp(tmp_path / "data", clock=clock, backend_factory=lambda config: model, notifier=notes)


def plant_day(app: NexusApp, day: date = DAY) -> list[int]:
    memory = app.personas.memory("aria")
    return [
        memory.messages.add(
            speaker=role,
            role=role,
            content=text,
            created_at=iso(datetime(day.year, day.month, day.day, 19, i, tzinfo=UTC)),
        )
        for i, (role, text) in enumerate(TALK)
    ]


def soul_file(app: NexusApp) -> Path:
    return app.personas.load("aria").folder / "persona.md"


def test_a_level_three_dream_proposes_a_change_with_its_sources_and_tells_the_person(tmp_path: Path):
    model, notes = ScriptedBackend(proposing()), Notes()
    with make_app(tmp_path, model, notes) as app:
        before = soul_file(app).read_bytes()
        ids = plant_day(app)
        result = app.personas.dream("aria", level=3, day=DAY)
        assert result.stages["soul"] == "done"
        [proposal] = app.souls.proposals("aria", "open")
        assert result.soul_proposal == {"soul_proposal": proposal.id, "section": "How you speak"}
        assert proposal.origin == "dream"
        assert proposal.proposed_text == NEW_VOICE.strip()
        assert proposal.current_text.startswith("- Short, natural replies in English")
        assert "haiku" in proposal.reason
        assert {f"msg:{ids[0]}", f"msg:{ids[1]}"} <= set(proposal.sources)
        assert soul_file(app).read_bytes() == before  # nothing changes until the person accepts
        # The persona was shown its sections when asked.
        asked = next(m for m in model.requests if '"section"' in m[0].content)
        assert "- Who you are\n- How you speak" in asked[-1].content
        assert any("How you speak" in body and title == "Aria" for title, body in notes.sent)
        # Told once: a later dream does not announce it again.
        count = len(notes.sent)
        app.personas.runtime("aria").queue.call("again", app.personas.runtime("aria").soul.announce)
        assert len(notes.sent) == count


def test_accepting_applies_exactly_the_reviewed_text_and_the_next_turn_speaks_from_it(tmp_path: Path):
    with make_app(tmp_path, ScriptedBackend(proposing())) as app:
        before = soul_file(app).read_text(encoding="utf-8")
        plant_day(app)
        app.personas.dream("aria", level=3, day=DAY)
        [proposal] = app.souls.proposals("aria", "open")
        edited = "- Short replies; a haiku now and then, when asked.\n- One question at a time."
        version = app.souls.accept("aria", proposal.id, edited)
        expected = before.replace(
            "- Short, natural replies in English, like a message from a friend.\n"
            "- One question at a time; never a lecture.\n",
            edited + "\n",
        )
        assert soul_file(app).read_text(encoding="utf-8") == expected
        assert version.author == "proposal" and version.proposal_id == proposal.id and version.applied
        decided = app.souls.proposal("aria", proposal.id)
        assert decided.state == "accepted" and decided.accepted_text == edited
        assert edited in app.personas.preview_prompt("aria", "hello").messages[0].content
        with pytest.raises(SoulRefused, match="accepted already"):
            app.souls.accept("aria", proposal.id)


def test_declining_leaves_the_soul_byte_identical_and_the_same_proposal_is_not_made_again(tmp_path: Path):
    with make_app(tmp_path, ScriptedBackend(proposing())) as app:
        before = soul_file(app).read_bytes()
        plant_day(app)
        app.personas.dream("aria", level=3, day=DAY)
        [proposal] = app.souls.proposals("aria", "open")
        assert app.souls.decline("aria", proposal.id).state == "declined"
        assert soul_file(app).read_bytes() == before
        later = DAY + timedelta(days=31)
        plant_day(app, later)
        result = app.personas.dream("aria", level=3, day=later)
        assert "declined" in result.stages["soul"]
        assert app.souls.proposals("aria", "open") == []
        assert soul_file(app).read_bytes() == before


def test_a_fixed_section_is_never_proposed_and_is_marked_fixed_when_asked(tmp_path: Path):
    model = ScriptedBackend(proposing())
    with make_app(tmp_path, model) as app:
        app.admin.save_persona("aria", settings={"soul": {"fixed": ["how you speak"]}})
        before = soul_file(app).read_bytes()
        plant_day(app)
        result = app.personas.dream("aria", level=3, day=DAY)
        assert result.stages["soul"].startswith("skipped") and "fixed" in result.stages["soul"]
        assert app.souls.proposals("aria") == []
        assert soul_file(app).read_bytes() == before
        asked = next(m for m in model.requests if '"section"' in m[0].content)
        assert "- How you speak (fixed" in asked[-1].content


def test_a_model_too_small_to_reflect_never_proposes_and_is_not_offered_the_tool(tmp_path: Path):
    model = ScriptedBackend(proposing(), parameters=135_000_000, text_tools=True)
    with make_app(tmp_path, model) as app:
        plant_day(app)
        result = app.personas.dream("aria", level=3, day=DAY)
        assert result.stages["soul"] == f"skipped: {NEEDS_REFLECTION}"
        assert not any('"section"' in m[0].content for m in model.requests)
        list(app.personas.runtime("aria").send("hello"))  # the chat turn's tools: listed in its system prompt
        assert "propose_soul_edit" not in model.requests[-1][0].content
        assert app.souls.proposals("aria") == []


def test_the_propose_soul_edit_tool_records_a_proposal_from_the_conversation(tmp_path: Path):
    call = {
        "name": "propose_soul_edit",
        "arguments": {
            "section": "Small joys",
            "text": "- Rain on the window.",
            "reason": "We talked of rain.",
        },
    }

    def chat(messages: Sequence[ChatMessage]) -> str:
        if "propose_soul_edit" in messages[0].content and not any(
            m.role == "user" and "<tool_result" in m.content for m in messages
        ):
            return f"<tool_call>{json.dumps(call)}</tool_call>"
        return "I asked to add that to who I am."

    notes = Notes()
    with make_app(tmp_path, ScriptedBackend(chat, text_tools=True), notes) as app:
        list(app.personas.runtime("aria").send("The rain on the window is my favourite sound."))
        app.personas.runtime("aria").queue.wait_idle(30)
        [proposal] = app.souls.proposals("aria", "open")
        assert (proposal.section, proposal.origin, proposal.current_text) == ("Small joys", "tool", "")
        assert proposal.sources and all(s.startswith("msg:") for s in proposal.sources)
        assert any("Small joys" in body for _, body in notes.sent)
        version = app.souls.accept("aria", proposal.id)
        assert (
            soul_file(app).read_text(encoding="utf-8").endswith("\n\n## Small joys\n- Rain on the window.\n")
        )
        assert version.author == "proposal"


def test_one_open_proposal_per_section(tmp_path: Path):
    with make_app(tmp_path, ScriptedBackend(proposing())) as app:
        runtime = app.personas.runtime("aria")
        first = runtime.soul.call("p", lambda k: k.propose("Who you are", "- Calm.", "why", [], "tool"))
        assert first.section == "Who you are"
        with pytest.raises(SoulRefused, match="already waiting"):
            runtime.soul.call("p", lambda k: k.propose("who you are", "- Loud.", "why", [], "tool"))
        with pytest.raises(SoulRefused, match="already says"):
            runtime.soul.call(
                "p",
                lambda k: k.propose(
                    "How you speak",
                    "- Short, natural replies in English, like a message from a friend.\n"
                    "- One question at a time; never a lecture.",
                    "why",
                    [],
                    "tool",
                ),
            )


def test_an_outside_edit_becomes_a_version_at_the_next_open_and_restore_is_byte_for_byte(tmp_path: Path):
    model = ScriptedBackend(["ok"])
    with make_app(tmp_path, model) as app:
        first = app.souls.versions("aria")
        assert [v.author for v in first] == ["first"]
    path = tmp_path / "data" / "personas" / "aria" / "persona.md"
    outside = "# Aria\r\n\r\nYou are Aria — 雨が好き.\r\n\r\n## Who you are\r\n- Quiet.\r\n"
    path.write_bytes(outside.encode("utf-8"))  # CRLF and Japanese, as a Windows editor writes it
    with make_app(tmp_path, model) as app:
        app.personas.runtime("aria")
        versions = app.souls.versions("aria")
        assert [v.author for v in versions] == ["first", "outside"]
        assert versions[-1].text == outside
        app.admin.save_persona("aria", soul="# Aria\n\nSomeone else entirely.\n")
        assert app.souls.versions("aria")[-1].author == "editor"
        restored = app.souls.restore("aria", versions[-1].id)
        assert restored is not None and restored.author == "restore"
        assert path.read_bytes() == outside.encode("utf-8")
        assert app.souls.restore("aria", versions[-1].id) is None  # it already is
        first_back = app.souls.restore("aria", first[0].id)
        assert first_back is not None and path.read_bytes() == first[0].text.encode("utf-8")
        assert [v.author for v in app.souls.versions("aria")] == [
            "first",
            "outside",
            "editor",
            "restore",
            "restore",
        ]


def test_the_memory_export_carries_the_soul_history(tmp_path: Path):
    with make_app(tmp_path, ScriptedBackend(proposing())) as app:
        app.admin.save_persona("aria", soul="# Aria\n\nA second soul.\n")
        out = tmp_path / "export"
        app.personas.runtime("aria").queue.call(
            "export", lambda: export_memory(app.personas.runtime("aria").memory, out, "Aria")
        )
    data = json.loads((out / "memory.json").read_text(encoding="utf-8"))
    texts = [row["text"] for row in data["tables"]["soul_versions"]]
    assert texts[-1] == "# Aria\n\nA second soul.\n" and len(texts) == 2
    # Readable beside it: each version as it was, and who made it.
    assert (out / "soul" / "0002-editor.md").read_bytes() == b"# Aria\n\nA second soul.\n"
    assert "0001-first.md" in (out / "soul" / "index.md").read_text(encoding="utf-8")


def test_replacing_a_section_leaves_every_other_byte_and_ignores_headings_in_code():
    text = "# A\n\nintro\n\n## One\nold\n\n```\n## not a heading\n```\n\n## Two\n- b\n"
    assert sections.headings(text) == ["One", "Two"]
    replaced = sections.replace(text, "one", "new\nlines")  # the code block was One's text
    assert replaced == "# A\n\nintro\n\n## One\nnew\nlines\n\n## Two\n- b\n"
    assert sections.replace(text, "Two", "- b") == text
