"""What a dream stage writes below the reflection capability: the day in its own words
(dreaming/extractive.py), each quote checked against the message it comes from.

Below the capability the persona's own lines are what a 135M model invented ("Arianna", a hike nobody
took): they are never the source of a fact or an entity (issue 32). What is kept is what happened to the
person: their most telling messages for the episode, the names of others they spoke of, and their own
telling sentences in the entity marked as the person. The person and the persona are never outside
entities, under any name the day gives them (dreaming/names.py)."""

from __future__ import annotations

import logging
from typing import Any

from nexus_ark.dreaming.extractive import (
    episode_summary,
    named,
    quote,
    quote_telling,
    telling,
)
from nexus_ark.dreaming.grounding import GroundingReport
from nexus_ark.dreaming.informative import in_first_person, sentence_score
from nexus_ark.dreaming.material import Line, Material, day_messages
from nexus_ark.dreaming.names import GENERIC_SPEAKERS, People, bare
from nexus_ark.dreaming.tone import day_tone
from nexus_ark.dreaming.writes import StageSkipped, grounding_check, people_in
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.components import Episode
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.notices import notice
from nexus_ark.providers.embedders import Embedder
from nexus_ark.sentences import sentences

log = logging.getLogger(__name__)

# The person's own sentences kept in their entity a day, and how telling each must be (a sentence with a
# content word or two and the first person scores about 4; news with a time, a place or a feeling 8+).
PERSON_SENTENCES = 3
PERSON_MIN_SCORE = 7.0


def the_persons(lines: list[Line], roles: dict[int, str]) -> list[Line]:
    """The lines a fact may come from: not the persona's (nor another model's) own."""
    return [line for line in lines if roles.get(line[0], "user") != "assistant"]


def _speaker(speaker: str, people: People) -> str:
    """The person's turns under their name where it is known ("user" says nothing)."""
    return people.person_name if speaker.casefold() in GENERIC_SPEAKERS and people.person_name else speaker


def _day(memory: MemoryStore, material: Material) -> tuple[list[Line], dict[int, str], People]:
    """The whole day so far (a later pass chooses again from it), the roles and the day's people."""
    through = max(material.message_ids) if material.message_ids else None
    day = day_messages(memory, material.day, through_id=through)
    roles, imported = memory.messages.roles_of([mid for mid, *_ in day])
    return day, roles, people_in(material, day, roles, imported)


def quoted_episode(memory: MemoryStore, material: Material) -> dict[str, Any]:
    """The day's most telling messages of the person, quoted (a later pass: chosen again from the whole
    day so far)."""
    check, report = grounding_check(material), GroundingReport()
    day, roles, people = _day(memory, material)
    check.known |= people.words
    theirs = the_persons(day, roles)
    chosen = telling(theirs, people, check.embedder)
    said = {line[0]: f"{line[2]}: {quote_telling(line[3], people)}" for line in chosen}
    check.prefetch(list(said.values()))
    picked = [
        line
        for line in chosen
        # An earlier pass's message was checked when it was dreamt.
        if f"msg:{line[0]}" not in check.texts
        or check.check("episode", said[line[0]], [f"msg:{line[0]}"], report=report) is not None
    ]
    if not picked:
        raise StageSkipped(notice("no message of the day could be quoted"), report)
    named_lines = [(mid, clock, _speaker(speaker, people), text) for mid, clock, speaker, text in picked]
    episode = Episode(
        date=material.day.isoformat(),
        summary=episode_summary(named_lines, people),
        key_events=[],
        emotional_tone=_tone(memory, theirs, check.embedder),
        source_ids=[f"msg:{mid}" for mid, *_ in picked],
    )
    memory.components.put_episode(episode)
    return {**episode.model_dump(), "grounding": report.model_dump()}


def _tone(memory: MemoryStore, lines: list[Line], embedder: Embedder | None = None) -> str:
    """The day's mood as the emotion reader read the person's messages (not a model's guess), with
    distress weighed above cheer (dreaming/tone.py); '' when nothing was read or said. Messages an import
    left unread (older than the days it reads) are read now, with the same reader, and not logged."""
    if not lines:
        return ""
    ids = [mid for mid, *_ in lines]
    labels = memory.components.emotion_labels(ids)
    texts = [text for *_, text in lines]
    if not labels and embedder is not None:
        try:
            labels = [r.label for r in EmotionDetector(embedder).classify_many(texts)]
        except NexusArkError as exc:  # another embedder's space, a missing head: the words alone
            log.info("the day's feelings were not read: %s", exc)
    # The log keeps each reading's label, not its probability: each counts once.
    return day_tone([(label, 1.0) for label in labels], texts)


def quoted_entities(memory: MemoryStore, material: Material) -> dict[str, Any]:
    """Names of others the person spoke of in the pass's messages, each with the sentences that say them,
    quoted; and the person's own telling sentences in the entity marked as the person."""
    check, report = grounding_check(material), GroundingReport()
    people = people_in(material)
    check.known |= people.words
    theirs = the_persons(material.messages, material.roles)
    skip = {material.persona, *material.speakers}
    written = []
    found = named(theirs, skip, memory.components.entity_names(), people)
    check.prefetch(
        [
            f'{_speaker(speaker, people)}: "{quote(sentence)}"'
            for m in found.values()
            for _, speaker, sentence in m
        ]
    )
    for name, mentions in found.items():
        if _write_quotes(memory, material, name, mentions, people, report):
            written.append(name)
    # What another entity holds is not written twice, nor what the episode quotes where the day has more.
    quoted = {line[0] for line in telling(theirs, people, check.embedder)}
    held = {sentence for mentions in found.values() for _, _, sentence in mentions}
    person = _person_lines(material, theirs, people, quoted, held)
    if person and _write_quotes(memory, material, people.person_name, person, people, report, person=True):
        written.append(people.person_name)
    if not written:
        raise StageSkipped(notice("no name was said in the day's conversation"), report)
    return {"entities_updated": written, "grounding": report.model_dump()}


def _write_quotes(
    memory: MemoryStore,
    material: Material,
    name: str,
    mentions: list[tuple[int, str, str]],
    people: People,
    report: GroundingReport,
    *,
    person: bool = False,
) -> bool:
    """Add the mentions that pass the check to the entity (the person's: marked as the person)."""
    check = grounding_check(material)
    lines, sources = [], []
    for mid, speaker, sentence in mentions:
        said = f'{_speaker(speaker, people)}: "{quote(sentence)}"'
        if check.check("entities", said, [f"msg:{mid}"], report=report) is not None:
            lines.append(f"({material.day.isoformat()}) {said}")
            sources.append(f"msg:{mid}")
    existing = memory.components.entity(name)
    new = [line for line in lines if existing is None or line not in existing.text]
    if not new:
        return False
    text = "\n".join(new) if existing is None else f"{existing.text}\n" + "\n".join(new)
    if person:
        memory.components.write_person(name, text, sources)
    else:
        memory.components.write_entity(name, text, sources)
    return True


def _person_lines(
    material: Material, theirs: list[Line], people: People, quoted: set[int], held: set[str]
) -> list[tuple[int, str, str]]:
    """The person's own telling sentences about themselves (the first person, news rather than small
    talk), the most telling, in the order they were said: of those the episode does not quote (`quoted`:
    its message ids), or where there are none of those, of those it does; none that another entity holds
    (`held`), and none where the day does not say who the person is."""
    if not people.person_name:
        return []
    mine = [
        line
        for line in theirs
        if bare(line[2]) == bare(people.person_name) or line[2].casefold() in GENERIC_SPEAKERS
    ]
    scored = [
        (sentence_score(sentence, people), mid, speaker, sentence)
        for mid, _, speaker, text in mine
        for sentence in sentences(text, flat=True)
        if in_first_person(sentence)
    ]
    telling_ones = [s for s in scored if s[0] >= PERSON_MIN_SCORE and s[3] not in held]
    # What the episode quotes only where the day has nothing else the person said of themselves.
    unquoted = [s for s in telling_ones if s[1] not in quoted]
    best = sorted(unquoted or telling_ones, key=lambda s: -s[0])[:PERSON_SENTENCES]
    order = {id(s): i for i, s in enumerate(scored)}
    return [
        (mid, speaker, sentence) for _, mid, speaker, sentence in sorted(best, key=lambda s: order[id(s)])
    ]
