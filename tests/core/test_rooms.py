"""Rooms (issue 24): the person with Aria and ひかり at once, on a scripted model. Each member keeps its own
memory: every room message once, with who said it; nothing of another member's prompt or tools."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.rooms.conversation import Answered, Said, Speaking, Streamed, Withdrawn, room_key

ARIA_SAYS = "I think the lighthouse trip sounds lovely."
HIKARI_SAYS = "灯台、いいですね。"


def _by_persona(messages: Sequence[ChatMessage]) -> str:
    """Each persona answers in its own words (the system prompt carries its soul)."""
    return HIKARI_SAYS if "ひかり" in messages[0].content else ARIA_SAYS


@pytest.fixture
def app(data_dir: Path):
    backend = ScriptedBackend(_by_persona)
    core = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    core.backend_for_test = backend  # type: ignore[attr-defined]
    yield core
    core.close()


def _run(events) -> list:
    return list(events)


@contextmanager
def _room_on(data_dir: Path, backend: ScriptedBackend, strategy: str) -> Iterator[tuple[NexusApp, object]]:
    """Aria and ひかり in a room, all answers from `backend`."""
    app = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    try:
        room = app.rooms.open(
            app.rooms.create("Room", ["aria", "hikari"], strategy=strategy), random.Random(0)
        )
        try:
            yield app, room
        finally:
            room.close()
    finally:
        app.close()


def test_the_person_s_message_is_answered_first_by_the_persona_it_names_then_the_room_goes_on(app) -> None:
    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(1))
    try:
        events = _run(room.say("ひかりさん、週末に灯台へ行きませんか?"))
    finally:
        room.close()
    speakers = [e.slug for e in events if isinstance(e, Speaking)]
    assert speakers == ["hikari", "aria"], "named first, then the list order"
    said = [(e.line.author, e.line.text) for e in events if isinstance(e, Said)]
    assert said == [
        (None, "ひかりさん、週末に灯台へ行きませんか?"),
        ("hikari", HIKARI_SAYS),
        ("aria", ARIA_SAYS),
    ]
    assert (
        "".join(e.text for e in events if isinstance(e, Streamed) and e.slug == "aria").strip() == ARIA_SAYS
    )
    assert all(e.result.status == "complete" for e in events if isinstance(e, Answered))


def test_every_member_holds_each_room_message_once_with_its_speaker_and_nothing_of_the_others_prompt(
    app,
) -> None:
    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(1))
    try:
        _run(room.say("Shall we visit the lighthouse on Sunday?"))
        _run(room.say("Aria, what should we bring?"))
        room.catch_up()  # delivering again changes nothing: each line once
    finally:
        room.close()
    key = room_key(slug)

    def rows(persona: str) -> list[tuple[str, str, str, str | None]]:
        return app.personas.change_memory(
            persona,
            "read",
            lambda store: [
                (m.speaker, m.role, m.content, m.meta.get("name")) for m in store.messages.recent(key, 100)
            ],
        )

    aria, hikari = rows("aria"), rows("hikari")
    person = ("user", "user")
    assert [r[:2] for r in aria if r[2].startswith("Shall")] == [person]
    assert [r[:2] for r in hikari if r[2].startswith("Shall")] == [person]
    # What Aria said is Aria's own reply in her memory, and a line heard from "Aria" in ひかり's.
    assert ("aria", "assistant", ARIA_SAYS, None) in aria
    assert ("aria", "user", ARIA_SAYS, "Aria") in hikari
    assert ("hikari", "user", HIKARI_SAYS, "ひかり") in aria
    assert ("hikari", "assistant", HIKARI_SAYS, None) in hikari
    assert len(aria) == len(hikari) == 6  # 2 of the person's + 2 answers each, once
    # The prompt ひかり answered from: Aria's words as a heard line, never Aria's soul or prompt.
    backend = app.backend_for_test
    hikari_prompts = [r for r in backend.requests if "ひかり" in r[0].content]
    text = "\n".join(m.content for r in hikari_prompts for m in r)
    assert f"Aria: {ARIA_SAYS}" in text
    aria_soul = (app.layout.personas_dir / "aria" / "persona.md").read_text(encoding="utf-8").strip()
    assert aria_soul.splitlines()[-1] not in text


def test_manual_order_answers_only_whom_the_person_picks(app) -> None:
    slug = app.rooms.create("Pick", ["aria", "hikari"], strategy="manual")
    room = app.rooms.open(slug, random.Random(3))
    try:
        first = _run(room.say("Good evening, everyone."))
        assert [e for e in first if isinstance(e, Speaking)] == []
        picked = _run(room.next("ひかり"))
        with pytest.raises(NexusArkError, match="not in this room"):
            _run(room.next("Kai"))
    finally:
        room.close()
    assert [e.slug for e in picked if isinstance(e, Speaking)] == ["hikari"]


def test_an_answer_that_opens_with_a_members_name_is_stored_and_shown_without_it(data_dir: Path) -> None:
    """A small model writes the room's transcript ("Aria: …") instead of its own line."""
    with _room_on(data_dir, ScriptedBackend(["Aria: The sea is calm today."]), "manual") as (_, room):
        _run(room.say("How is the sea?"))
        events = _run(room.next("hikari"))
    shown = "".join(e.text for e in events if isinstance(e, Streamed)).strip()
    (said,) = [e.line.text for e in events if isinstance(e, Said)]
    assert shown == said == "The sea is calm today."


def test_a_note_passed_with_the_tool_reaches_only_the_member_named_in_the_senders_words(
    data_dir: Path,
) -> None:
    """Aria passes ひかり a note (the text tool protocol of a model big enough for it); ひかり reads it on her
    next turn; the person's room, the journal and Aria's other listener never see it."""
    note = "Ask Mika about the exam, gently."
    call = json.dumps({"name": "pass_note", "arguments": {"to": "ひかり", "text": note}}, ensure_ascii=False)

    def script(messages: Sequence[ChatMessage]) -> str:
        if "ひかり" in messages[0].content:
            return HIKARI_SAYS
        if not any("The note for" in m.content for m in messages[1:]):  # before the tool's answer
            return f"<tool_call>{call}</tool_call>"
        return ARIA_SAYS

    backend = ScriptedBackend(script, text_tools=True)
    with _room_on(data_dir, backend, "manual") as (app, room):
        _run(room.say("I have an exam tomorrow."))
        aria = _run(room.next("aria"))
        _run(room.next("hikari"))
        journal = [line.text for line in room.lines()]

        def read(persona: str) -> list[tuple[str, str]]:
            rows = lambda store: [(m.speaker, m.content) for m in store.messages.recent(room.key, 50)]  # noqa: E731
            return app.personas.change_memory(persona, "read", rows)

        aria_rows, hikari_rows = read("aria"), read("hikari")
        tool_uses = {  # the tool call is in the timeline of the member that made it, and only there
            persona: app.personas.change_memory(
                persona,
                "tools",
                lambda store: store.db.execute(
                    "select count(*) from activity "
                    "where summary like '%pass_note%' or data like '%pass_note%'"
                ).fetchone()[0],
            )
            for persona in ("aria", "hikari")
        }
    (answer,) = [e.result for e in aria if isinstance(e, Answered)]
    assert answer.meta["notes"] == [{"to": "ひかり", "text": note}] and answer.text == ARIA_SAYS
    assert ("note", note) in hikari_rows
    assert tool_uses["aria"] >= 1 and tool_uses["hikari"] == 0
    assert all(note not in text for _, text in aria_rows) and note not in journal
    hikari_prompt = next(r for r in reversed(backend.requests) if "ひかり" in r[0].content)
    assert f"(Ariaから、あなただけへのメモ: {note})" in hikari_prompt[-1].content


def test_a_dream_reads_the_room_with_who_said_what(app) -> None:
    """What a member heard in a room reaches its dreams under the speaker's name."""
    from nexus_ark.dreaming.material import day_messages

    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(1))
    try:
        _run(room.say("Shall we visit the lighthouse on Sunday?"))
    finally:
        room.close()
    today = app.clock.now().astimezone().date()
    lines = app.personas.change_memory("aria", "dream material", lambda store: day_messages(store, today))
    assert [(speaker, text) for _, _, speaker, text in lines] == [
        ("user", "Shall we visit the lighthouse on Sunday?"),
        ("aria", ARIA_SAYS),
        ("ひかり", HIKARI_SAYS),
    ]


def test_rooms_are_created_listed_and_deleted_from_the_command_line_and_a_broken_one_is_named(
    data_dir: Path,
) -> None:
    from tests.conftest import run_cli
    from tests.integration.test_room_cli import ARIA_AND_HIKARI_IN_TURN

    made = run_cli("--data-dir", str(data_dir), "room", "create", "Study pair", *ARIA_AND_HIKARI_IN_TURN)
    assert made.returncode == 0 and made.stdout.strip() == "study-pair", made.stderr
    alone = run_cli("--data-dir", str(data_dir), "room", "create", "Alone", "--persona", "aria")
    assert alone.returncode == 2 and "a room needs 2 to 6 different personas, not 1" in alone.stderr
    (data_dir / "rooms" / "broken").mkdir()
    (data_dir / "rooms" / "broken" / "room.toml").write_text(
        'name = "B"\nstrategy = "loud"\n', encoding="utf-8"
    )
    listed = run_cli("--data-dir", str(data_dir), "room", "list")
    assert listed.returncode == 0
    rows = listed.stdout.splitlines()
    assert rows[1] == "study-pair\tStudy pair\taria,hikari\tlist"
    assert rows[0].startswith("broken\t(cannot be read:") and "room.toml" in rows[0] and "strategy" in rows[0]
    muted = run_cli(
        "--data-dir",
        str(data_dir),
        "room",
        "set",
        "study-pair",
        "--mute",
        "ひかり",
        "--talkativeness",
        "aria=0.9",
    )
    assert muted.returncode == 0 and muted.stdout.endswith("\tlist\tmuted: hikari\n"), muted.stderr
    too_talkative = run_cli(
        "--data-dir", str(data_dir), "room", "set", "study-pair", "--talkativeness", "aria=5"
    )
    assert too_talkative.returncode == 2 and "room.toml" in too_talkative.stderr
    assert "talkativeness" in too_talkative.stderr
    gone = run_cli("--data-dir", str(data_dir), "room", "delete", "study-pair")
    assert gone.returncode == 0 and not (data_dir / "rooms" / "study-pair").exists()
    missing = run_cli("--data-dir", str(data_dir), "room", "delete", "study-pair")
    assert missing.returncode == 2 and "There is no room study-pair" in missing.stderr


def test_each_member_answers_on_its_own_model(data_dir: Path) -> None:
    """Aria on an Ollama model, ひかり on the bundled one: each member's answer comes from its own."""
    ollama, bundled = ScriptedBackend(["From the Ollama model."]), ScriptedBackend(["内蔵モデルからです。"])
    app = NexusApp(
        data_dir, backend_factory=lambda config: ollama if config.spec.startswith("ollama:") else bundled
    ).open()
    try:
        app.personas.save_models("aria", {"spec": "ollama:qwen2.5:1.5b"}, None)
        room = app.rooms.open(app.rooms.create("Two models", ["aria", "hikari"], strategy="list"))
        try:
            said = {e.line.author: e.line.text for e in room.say("Hello, you two.") if isinstance(e, Said)}
        finally:
            room.close()
    finally:
        app.close()
    assert said == {
        None: "Hello, you two.",
        "aria": "From the Ollama model.",
        "hikari": "内蔵モデルからです。",
    }
    assert len(ollama.requests) == 1 and len(bundled.requests) >= 1


def test_a_room_of_two_lives_through_simulated_days_and_every_line_is_accounted_for(tmp_path: Path) -> None:
    from nexus_ark.paths import shipped_personas_dir
    from nexus_ark.room_simulation import simulate_room

    shipped = shipped_personas_dir()
    report = simulate_room([shipped / "aria", shipped / "hikari"], 3, seed=3, work_dir=tmp_path)
    assert report.person_messages >= 3 and all(report.answers[m] >= 1 for m in ("aria", "hikari"))
    said = report.person_messages + sum(report.answers.values()) + sum(report.written_first.values())
    assert report.journal_lines == said, "every line in the room is the person's, an answer or written first"
    assert all(size > 0 for size in report.db_bytes.values()) and list(tmp_path.iterdir()) == []


def test_a_reopened_room_keeps_counting_toward_the_cap_and_bad_settings_are_refused_by_name(app) -> None:
    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(1))
    try:
        _run(room.say("Shall we visit the lighthouse on Sunday?"))  # both answer: 2 of the cap of 3
    finally:
        room.close()
    again = app.rooms.open(slug, random.Random(1))
    try:
        assert again.spoken_since_person == 2
        assert [e for e in _run(again.go_on()) if isinstance(e, Speaking)]  # the third may still go on
        assert _run(again.go_on()) == []  # the cap: the person speaks next
    finally:
        again.close()
    settings = app.rooms.load(slug)
    with pytest.raises(NexusArkError, match=r"room\.toml") as refused:
        app.rooms.store.save(slug, settings.model_copy(update={"members": settings.members[:1]}))
    assert "members" in str(refused.value) and app.rooms.load(slug).slugs == ["aria", "hikari"]


# --- Settings changed while the room is open (app.rooms.update, RoomConversation.update_settings) -------


def _speakers(events) -> list[str]:
    return [e.slug for e in events if isinstance(e, Speaking)]


def test_an_open_room_takes_new_settings_on_its_next_turn_and_a_muted_member_is_never_picked(app) -> None:
    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="natural")
    room = app.rooms.open(slug, random.Random(5))
    try:
        app.rooms.update(
            slug, {"members": [{"persona": "aria", "talkativeness": 0.0}, {"persona": "hikari"}]}
        )
        app.rooms.update(slug, {"members": [{"persona": "aria"}, {"persona": "hikari", "muted": True}]})
        # Named, talked about, left alone: ひかり never answers, in any order, nor goes on in auto mode.
        heard = []
        for text in ("ひかりさん、灯台はどう?", "Hello?", "What about the sea, Hikari?", "Anyone?"):
            heard += _speakers(_run(room.say(text)))
            heard += _speakers(_run(room.go_on()))
        app.rooms.update(slug, {"strategy": "list"})
        heard += _speakers(_run(room.say("ひかりさん、いますか?")))
        heard += _speakers(_run(room.go_on()))
        assert heard and set(heard) == {"aria"}
        saved = (app.rooms.folder(slug) / "room.toml").read_text(encoding="utf-8")
        assert "muted = true" in saved and 'strategy = "list"' in saved
        assert room.closed is False and room.settings == app.rooms.load(slug), "the same room, not reopened"

        # Talkativeness on the next turn: the one at 1.0 always answers, the one at 0.0 never does.
        for loud, quiet in (("hikari", "aria"), ("aria", "hikari")):
            app.rooms.update(
                slug,
                {
                    "strategy": "natural",
                    "members": [
                        {"persona": loud, "talkativeness": 1.0},
                        {"persona": quiet, "talkativeness": 0.0},
                    ],
                },
            )
            for text in ("How was your day?", "Any plans for the weekend?", "Tea or coffee?"):
                assert _speakers(_run(room.say(text))) == [loud]

        # The cap and the order on the next turn: in turn, one reply, then the person's floor; manual: none.
        app.rooms.update(slug, {"strategy": "list", "cap": 1})
        assert _speakers(_run(room.say("Shall we go on Sunday?"))) == ["aria"]  # first in the room now
        assert _run(room.go_on()) == []
        app.rooms.update(slug, {"strategy": "manual", "cap": 3})
        assert _speakers(_run(room.say("Good night, both."))) == []
    finally:
        room.close()
    again = app.rooms.open(slug)
    try:
        assert again.settings.strategy == "manual" and again.settings.cap == 3
        assert [m.talkativeness for m in again.members] == [1.0, 0.0]
    finally:
        again.close()


def test_an_open_room_takes_room_toml_edited_by_hand_and_keeps_its_settings_when_the_file_breaks(
    app, data_dir: Path
) -> None:
    """room.toml edited in a text editor while the window has the room open: the room takes the file's
    settings on its next turn, as it takes the window's own; a file broken meanwhile changes nothing.
    (`nexus-ark room set` is refused while the app holds the data folder, and says so.)"""
    from tests.conftest import run_cli

    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(5))
    try:
        assert _speakers(_run(room.say("Hello, both."))) == ["aria", "hikari"]
        refused = run_cli("--data-dir", str(data_dir), "room", "set", slug, "--mute", "hikari")
        assert refused.returncode == 2 and "Another Nexus Ark" in refused.stderr
        path = app.rooms.folder(slug) / "room.toml"
        kept = path.read_text(encoding="utf-8")
        assert "muted = false" in kept
        muted = kept.replace("muted = false", "muted = true", 2).replace("muted = true", "muted = false", 1)
        path.write_text(muted, encoding="utf-8")  # ひかり, the second member, muted by hand
        for text in ("ひかりさん、灯台はどう?", "Anyone else?"):
            assert _speakers(_run(room.say(text))) == ["aria"]
        assert room.settings.members[1].muted and room.closed is False
        path.write_text(muted.replace('strategy = "list"', 'strategy = "loud"'), encoding="utf-8")
        assert _speakers(_run(room.say("Still there?"))) == ["aria"], "the settings it had"
        path.write_text(kept, encoding="utf-8")
        assert _speakers(_run(room.say("And now?"))) == ["aria", "hikari"]
    finally:
        room.close()


def test_settings_changed_while_a_member_answers_wait_for_that_answer_then_hold(app) -> None:
    """Muted while Aria writes (list order planned Aria, then ひかり): Aria's answer finishes, ひかり is not
    asked after it."""
    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(1))
    events = []
    try:
        for event in room.say("Shall we visit the lighthouse?"):
            events.append(event)
            if isinstance(event, Speaking) and event.slug == "aria":
                settings = app.rooms.load(slug)
                hikari = settings.members[1].model_copy(update={"muted": True})
                muted = settings.model_copy(update={"members": [settings.members[0], hikari]})
                assert room.update_settings(muted) is False, "an answer is under way: taken after it"
                assert room.settings.members[1].muted is False
        assert room.settings.members[1].muted is True
    finally:
        room.close()
    assert _speakers(events) == ["aria"]
    assert [(e.line.author, e.line.text) for e in events if isinstance(e, Said)][-1] == ("aria", ARIA_SAYS)


def test_a_bad_setting_for_an_open_room_is_refused_naming_room_toml_and_nothing_changes(app) -> None:
    slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
    room = app.rooms.open(slug, random.Random(1))
    path = app.rooms.folder(slug) / "room.toml"
    before, file_before = room.settings, path.read_bytes()
    try:
        for changes, field in (
            ({"cap": 0}, "cap"),
            ({"pause_s": float("nan")}, "pause_s"),
            ({"strategy": "loud"}, "strategy"),
            ({"members": [{"persona": "aria", "talkativeness": 5}, {"persona": "hikari"}]}, "talkativeness"),
            ({"members": [{"persona": "aria"}]}, "members"),
            ({"volume": 3}, "volume"),
        ):
            with pytest.raises(NexusArkError, match=r"room\.toml") as refused:
                app.rooms.update(slug, changes)
            assert field in str(refused.value)
        with pytest.raises(NexusArkError, match="kai"):
            app.rooms.update(slug, {"members": [{"persona": "aria"}, {"persona": "kai"}]})
        with pytest.raises(NexusArkError, match=r"room\.toml"):  # a copy is not validated: the room does
            room.update_settings(before.model_copy(update={"cap": 99}))
        assert room.settings is before and path.read_bytes() == file_before
        assert _speakers(_run(room.say("Still two of us answering?"))) == ["aria", "hikari"]
    finally:
        room.close()


def test_a_member_added_to_an_open_room_hears_what_was_said_and_answers(data_dir: Path) -> None:
    kai_says = "Kai here, I brought the map."

    def by_name(messages: Sequence[ChatMessage]) -> str:
        soul = messages[0].content
        return HIKARI_SAYS if "ひかり" in soul else kai_says if "Kai" in soul else ARIA_SAYS

    backend = ScriptedBackend(by_name)
    app = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    try:
        app.personas.store.create("Kai")
        slug = app.rooms.create("Trip", ["aria", "hikari"], strategy="list")
        room = app.rooms.open(slug, random.Random(1))
        try:
            _run(room.say("The ferry leaves at nine."))
            app.rooms.update(slug, {"members": [{"persona": "aria"}, {"persona": "kai"}]})  # ひかり leaves
            assert [m.name for m in room.members] == ["Aria", "Kai"]
            said = [(e.line.author, e.line.text) for e in room.say("Who has the map?") if isinstance(e, Said)]
        finally:
            room.close()
        heard_by_kai = app.personas.change_memory(
            "kai", "read", lambda store: [m.content for m in store.messages.recent(room_key(slug), 20)]
        )
    finally:
        app.close()
    assert said[1:] == [("aria", ARIA_SAYS), ("kai", kai_says)]
    assert "The ferry leaves at nine." in heard_by_kai and HIKARI_SAYS in heard_by_kai


# -- issue 32: the person answered first, no repeats, the person's name -------------------------------------
SMALL = 135_000_000  # the bundled SmolLM2-135M: a small model's room prompt carries no room note
QUESTION = "What should we have with tea?"


def test_the_persons_question_is_what_the_first_and_the_following_small_member_answer(data_dir: Path) -> None:
    """Both members on a small model: the first to speak answers the person's words, and the one that
    follows gets them last too (given Aria's line last, the 135M model repeated it)."""
    backend = ScriptedBackend(
        lambda m: "Green tea and mochi." if "ひかり" not in m[0].content else "お団子はどうかな。",
        parameters=SMALL,
    )
    with _room_on(data_dir, backend, "list") as (_app, room):
        events = _run(room.say(QUESTION))
    assert [e.slug for e in events if isinstance(e, Speaking)] == ["aria", "hikari"]
    aria_asked, hikari_asked = backend.requests[-2], backend.requests[-1]
    assert aria_asked[-1].role == "user" and aria_asked[-1].content.endswith(QUESTION)
    assert hikari_asked[-1].content.endswith(QUESTION), "the person's question last, Aria's line before it"
    assert "Aria: Green tea and mochi." in hikari_asked[-1].content


def test_the_person_is_named_in_a_rooms_prompt_and_its_note(data_dir: Path) -> None:
    """The person's name (Persona.user_name) on the person's lines and in the room's note, so a member
    neither takes the person's words for a nameless line of its own nor answers with its own name."""
    backend = ScriptedBackend(
        lambda m: "Green tea and mochi." if "ひかり" not in m[0].content else "いいね。"
    )
    with _room_on(data_dir, backend, "list") as (app, room):
        app.admin.set_user_name("Ken")
        _run(room.say(QUESTION))
        _run(room.say("And a biscuit?"))
    last = backend.requests[-1]  # ひかり, second round: her history holds the first
    said = [m.content for m in last if m.role == "user"]
    assert any(s == f"Ken: {QUESTION}" for s in said), said
    assert "Ken: And a biscuit?" in last[-1].content
    assert "会話の中にいます" in last[-1].content and "Ken" in last[-1].content.split("\n\n")[0]


def test_a_reply_that_repeats_another_members_line_is_neither_shown_nor_stored(data_dir: Path) -> None:
    said = "I'm glad to hear about your recent hike! Where did you go?"
    backend = ScriptedBackend(lambda m: said, parameters=SMALL, delay_s=0.001)  # ひかり says it again
    with _room_on(data_dir, backend, "list") as (app, room):
        events = _run(room.say(QUESTION))
        lines = room.lines()
        kept = app.personas.change_memory(
            "hikari",
            "read",
            lambda store: [(m.role, m.content) for m in store.messages.recent(room_key(room.slug), 20)],
        )
    assert [(e.slug, e.repeated) for e in events if isinstance(e, Withdrawn)] == [("hikari", "Aria")]
    assert not [e for e in events if isinstance(e, Streamed) and e.slug == "hikari" and e.text.strip()]
    assert [(ln.author, ln.text) for ln in lines] == [(None, QUESTION), ("aria", said)]
    assert ("assistant", said) not in kept, "not stored as what ひかり said"
    assert room.spoken_since_person == 1


def test_the_lines_a_member_answers_are_not_recalled_back_into_its_notes(data_dir: Path) -> None:
    """The person's words are the turn itself: recalled as a memory too, the bundled model said them again
    ("Ken: Hello, both of you!…") and, that copy taken out, the member's answer was empty."""
    backend = ScriptedBackend(_by_persona)
    with _room_on(data_dir, backend, "list") as (_app, room):
        _run(room.say("Hello, both of you! What should we have with tea?"))
    assert len(backend.requests) == 2, "both members answered"
    for messages in backend.requests:
        notes = "\n".join(m.content for m in messages[:-1] if m.role == "system")
        assert "What should we have with tea?" not in notes
        assert "What should we have with tea?" in messages[-1].content
