"""Names, tone and quotes in a dream below the reflection capability (issue 32): the person and the persona
are never outside entities under any name the day gives them, greetings and weekdays are never names, a
distress day reads as distress, the person's news ranks above cheers, and a quote of its own source is
never refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.clock import FixedClock, iso
from nexus_ark.dreaming.extractive import named, telling
from nexus_ark.dreaming.grounding import Grounding
from nexus_ark.dreaming.names import conversation_people, never_a_name, vocatives
from nexus_ark.dreaming.tone import day_tone
from nexus_ark.memory.importer import import_jsonl, on_store, speaker_role
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

E5 = default_embedder()


@pytest.mark.parametrize(
    ("sentence", "called"),
    [
        ("Hey Mel! Good to see you!", ["Mel"]),
        ("Thanks, Melanie!", ["Melanie"]),
        ("Yeah Mel, let's do it.", ["Mel"]),
        ("Gina, you ever been in a dance show?", ["Gina"]),
        ("Jon!", ["Jon"]),
        ("ひかりちゃん、おはよう！", ["ひかりちゃん"]),
        ("おはよう、ケンさん！", ["ケンさん"]),
        ("Ttyl, Bye!", []),
        ("Thanks, Monday!", []),
        ("I've been to Paris yesterday!", []),
        ("Paris?!", []),
    ],
)
def test_a_vocative_is_the_name_a_sentence_calls_someone_by(sentence: str, called: list[str]):
    assert vocatives(sentence) == called


@pytest.mark.parametrize(
    "word",
    [
        "Bye",
        "Ttyl",
        "Thanks",
        "Cheers",
        "Woohoo",
        "Monday",
        "Tues",
        "Sept",
        "月曜日",
        "3月",
        "おはよう",
        "ありがとう",
    ],
)
def test_greetings_sign_offs_thanks_months_and_weekdays_are_never_names(word: str):
    assert never_a_name(word)


def test_nora_and_biscuit_are_names():
    assert not never_a_name("Nora") and not never_a_name("Biscuit")


PERSONAS = ("Aria", "ヒカリ")


def _lines(*said: tuple[str, str]) -> tuple[list[tuple[int, str, str, str]], dict[int, str]]:
    """(id, time, speaker, text) lines and their roles (the persona's lines are the assistant's)."""
    lines = [(i, "19:00", speaker, text) for i, (speaker, text) in enumerate(said, 1)]
    return lines, {i: "assistant" if speaker in PERSONAS else "user" for i, _, speaker, _ in lines}


def test_the_person_and_the_persona_are_known_by_short_forms_honorifics_and_what_they_call_each_other():
    lines, roles = _lines(
        ("user", "Hey Ari! I failed my driving test. Thanks, Aria."),
        ("Aria", "Oh no, Cal! You'll pass next time."),
    )
    people = conversation_people(lines, roles, persona_names=["Aria"], user_name="Calvin")
    assert people.person_name == "Calvin"
    assert people.who("Cal") == people.who("Calvin") == "person"
    assert people.who("Ari") == people.who("Aria") == "persona"
    assert people.who("Nora") == ""
    ja, ja_roles = _lines(("user", "ヒカリちゃん、おはよう！"), ("ヒカリ", "おはよう、ケンさん！"))
    ja_people = conversation_people(ja, ja_roles, persona_names=["ヒカリ"], user_name="ケン")
    assert ja_people.who("ヒカリちゃん") == ja_people.who("ヒカリさん") == "persona"
    assert ja_people.who("ケンくん") == "person"


def test_an_imported_persona_turn_names_the_person_where_nobody_told_the_app():
    lines, roles = _lines(
        ("user", "Hey Maria! I adopted a puppy."), ("Aria", "Woohoo, John! That's awesome!")
    )
    people = conversation_people(lines, roles, persona_names=["Aria"], trusted=[2])
    assert people.person_name == "John" and people.who("Maria") == "persona"
    untrusted = conversation_people(lines, roles, persona_names=["Aria"])  # the small model's own words
    assert untrusted.person_name == "" and untrusted.who("John") == "person"


def test_no_speaker_greeting_or_sign_off_becomes_an_entity_but_the_people_they_spoke_of_do():
    lines, roles = _lines(
        ("user", "Hey Maria! My brother Tomas moved to Lisbon on Monday."),
        ("user", "Thanks, Maria. Ttyl, Bye!"),
        ("user", "Cheers! Tomas says Lisbon is sunny in March."),
    )
    people = conversation_people(lines, roles, persona_names=["Aria"], user_name="Dave")
    found = named(lines, {"Aria", "user"}, [], people)
    assert set(found) == {"Tomas", "Lisbon"}


def test_the_persons_news_ranks_above_greetings_and_cheers():
    lines, roles = _lines(
        ("user", "Hey Maria! Good to see you!"),
        ("user", "Woohoo, that's awesome! So happy for you!"),
        (
            "user",
            "I failed my aptitude test yesterday, and the doctor warned me about my heart palpitations.",
        ),
        ("user", "Thanks, Maria! You're the best."),
        ("user", "My dog Pepper starts obedience school at Elm Park next Tuesday."),
    )
    people = conversation_people(lines, roles, persona_names=["Aria"], user_name="Dave")
    picked = [text for *_, text in telling(lines, people, E5)]
    assert picked == [lines[2][3], lines[4][3]], "small talk is never the day's episode"


def test_a_distress_day_reads_stressed_or_sad_however_cheerful_the_rest():
    cheer = [("happy", 1.0)] * 10 + [("joy", 1.0)] * 2
    texts = ["Thanks so much!", "That's awesome!", "I failed my aptitude test this morning."]
    assert day_tone(cheer, texts) in ("stressed", "sadness")
    scare = ["Dr. Patel warned me my blood pressure is too high.", "Haha, love it!"]
    assert day_tone(cheer, scare) in ("stressed", "sadness")
    assert day_tone([], ["昨日、試験に落ちた。", "ありがとう！"]) in ("stressed", "sadness")
    assert day_tone(cheer, ["Their help meant a lot after that breakup.", "What a lovely day!"]) == "happy"
    assert day_tone(cheer, ["Don't worry, I'm not sick anymore!"]) == "happy"


@pytest.mark.parametrize(
    "claim",
    ['Maria: "Hey Dave!"', "Maria: Hey Dave!", '"Hey Dave! Good to see you."', 'Maria: "Hey Dave! …"'],
)
def test_a_quote_of_its_own_source_word_for_word_is_never_refused(claim: str):
    check = Grounding({"msg:1": "Maria: Hey Dave! Good to see you."}, E5, known={"Maria", "Dave"})
    assert check.check("episode", claim, ["msg:1"]) is not None, check.report.refusals


def test_a_quote_changed_or_given_to_someone_else_is_still_checked():
    check = Grounding({"msg:1": "Maria: Hey Dave! Good to see you."}, E5, known={"Maria", "Dave"})
    assert check.check("episode", 'Maria: "Dave moved to Paris."', ["msg:1"]) is None
    assert check.check("episode", 'Nobody: "Hey Dave!"', ["msg:1"]) is None


def test_import_maps_the_speaker_named_as_the_person_and_leaves_others_as_they_were(tmp_path: Path):
    assert speaker_role("Calvin", {"Aria"}, "calvin") == "user"
    assert speaker_role("Aria", {"Aria"}, "Calvin") == "assistant"
    assert speaker_role("Nora", {"Aria"}, "Calvin") == "user"
    source = tmp_path / "talk.jsonl"
    stamp = iso(datetime(2026, 10, 5, 19, tzinfo=UTC))
    source.write_text(
        f'{{"id": "1", "speaker": "Calvin", "text": "Hi Ari!", "timestamp": "{stamp}"}}\n'
        f'{{"id": "2", "speaker": "Aria", "text": "Hi Cal!", "timestamp": "{stamp}"}}\n',
        encoding="utf-8",
    )
    store = MemoryStore(tmp_path / "m.db", FixedClock(datetime(2026, 10, 6, tzinfo=UTC)))
    try:
        import_jsonl(source, on_store(store), {"aria", "Aria"}, "Calvin")
        rows = store.db.execute("select speaker, role from messages order by id").fetchall()
    finally:
        store.close()
    assert rows == [("Calvin", "user"), ("Aria", "assistant")]


def test_below_the_capability_the_personas_own_lines_are_never_a_source(tmp_path: Path):
    """What the 135M model wrote as the persona ("Arianna", a hike nobody took) is neither quoted in the
    episode nor filed as an entity; the person's own news is."""
    from nexus_ark.dreaming.dream import Dreamer
    from nexus_ark.personas.store import PersonaStore
    from nexus_ark.providers.scripted import ScriptedBackend

    clock = FixedClock(datetime(2026, 10, 6, 3, tzinfo=UTC))
    store = MemoryStore(tmp_path / "m.db", clock)
    talk = [
        ("user", "user", "Hi Aria! My brother Tomas starts his new job at Orbit Labs on Monday."),
        ("aria", "assistant", "How lovely! My friend Arianna loved her hike at Mount Kelso last week."),
        ("user", "user", "He is nervous, but I told him the team seemed kind."),
        ("aria", "assistant", "Arianna says Mount Kelso is the best place for a picnic."),
    ]
    for minute, (speaker, role, text) in enumerate(talk):
        stamp = iso(datetime(2026, 10, 5, 19, minute, tzinfo=UTC))
        store.messages.add(speaker=speaker, role=role, content=text, created_at=stamp)
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    small = ScriptedBackend(lambda _: "", parameters=135_000_000)
    try:
        result = Dreamer(persona, store, small, clock, embedder=E5).run(day=datetime(2026, 10, 5).date())
        (episode,) = store.components.episodes()
        names = set(store.components.entity_names())
    finally:
        store.close()
    assert small.requests == []
    assert "Arianna" not in episode.summary and "Kelso" not in episode.summary
    assert "Tomas starts his new job" in episode.summary
    assert {"Tomas", "Orbit Labs"} <= names and not names & {"Arianna", "Mount Kelso", "Aria", "Monday"}
    assert result.grounding.refused == 0


def test_a_reflecting_model_files_what_it_says_of_the_person_under_the_person_and_no_greeting(tmp_path: Path):
    """A model that reflects proposes entities: "Cal" (the person by a short form) goes into the entity
    marked as the person, "Ari" (the persona by a short form) is refused."""
    import json

    from nexus_ark.dreaming.dream import Dreamer
    from nexus_ark.personas.store import PersonaStore
    from nexus_ark.providers.scripted import ScriptedBackend

    def answer(messages) -> str:
        if '"entities"' in messages[0].content:
            notes = [("Cal", "Cal failed his driving test today."), ("Ari", "Ari is kind.")]
            return json.dumps({"entities": [{"name": n, "text": t, "source_ids": []} for n, t in notes]})
        return "{}"  # every other stage: invalid, skipped

    clock = FixedClock(datetime(2026, 10, 6, 3, tzinfo=UTC))
    store = MemoryStore(tmp_path / "m.db", clock)
    talk = [
        ("user", "user", "Hey Ari! I failed my driving test today."),
        ("aria", "assistant", "Oh no, Cal! You will pass next time."),
        ("user", "user", "Thanks, Aria. Bye!"),
    ]
    for minute, (speaker, role, text) in enumerate(talk):
        stamp = iso(datetime(2026, 10, 5, 19, minute, tzinfo=UTC))
        store.messages.add(speaker=speaker, role=role, content=text, created_at=stamp)
    folder = PersonaStore(tmp_path / "personas").create("Aria").folder
    persona = PersonaStore(tmp_path / "personas", default_user_name="Calvin").load(folder.name)
    try:
        result = Dreamer(persona, store, ScriptedBackend(answer), clock, embedder=E5).run(
            day=datetime(2026, 10, 5).date()
        )
        names = set(store.components.entity_names())
        person = store.components.person_entity()
        calvin = store.components.entity("Calvin")
    finally:
        store.close()
    assert names == {"Calvin"}, result.grounding.refusals
    assert person == "Calvin" and calvin is not None and "failed his driving test" in calvin.text
    assert {r.text: r.why for r in result.grounding.refusals}["Ari"] == "the persona itself"
