"""What a dream can write faithfully without a model that reflects (issue 21): the day in its speakers' own
words. Below REFLECTION_MIN_PARAMS a model invents (insights about lemons, a husband nobody has), so the
persona keeps only what was said:

- the episode: the day's most central messages (the embedder's mean similarity to the day's other
  messages; without one, the words they share), quoted, in the order they were said;
- entities: names that appear in the day's messages, each with the sentences that mention it.
No insight, no values, no questions and no goals: those need reflection.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from nexus_ark.dreaming.grounding import COMMON_WORDS, KATAKANA
from nexus_ark.dreaming.informative import message_score, small_talk, telling_sentences
from nexus_ark.dreaming.material import Line
from nexus_ark.dreaming.names import NEVER_NAMES, People, never_a_name
from nexus_ark.providers.embedders import Embedder
from nexus_ark.sentences import sentences

EPISODE_MESSAGES = 3
QUOTE_CHARS = 240
ENTITIES_PER_PASS = 4
SENTENCES_PER_ENTITY = 3
# How much the day's centre (e5 similarity to the rest) adds to a message's score, at most.
CENTRE_WEIGHT = 2.0

# A name: capitalized words in a row ("Trattoria Luna"), with a title before it ("Mr. Sato").
_NAME = re.compile(r"\b(?:(?:Mr|Mrs|Ms|Dr|Prof)\. )?[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*")
_OPENING = re.compile(r"^[\W_]+")
# Capitalized words that are not names of people, places or things.
NOT_NAMES = (
    COMMON_WORDS
    | NEVER_NAMES
    | frozenset(
        [
            "english",
            "japanese",
            "italian",
            "french",
            "chinese",
            "korean",
            "german",
            "spanish",
            "american",
            "british",
            "god",
            "ha",
            "good",
            "great",
        ]
    )
)


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """A message in its own words, whole sentences up to `limit` characters ("…" where more was said)."""
    said = " ".join(text.split())
    if len(said) <= limit:
        return said
    kept = ""
    for sentence in sentences(said, flat=True):
        if len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    return f"{kept or said[:limit].rsplit(' ', 1)[0]} …"


def telling(
    lines: list[Line], people: People, embedder: Embedder | None, k: int = EPISODE_MESSAGES
) -> list[Line]:
    """The k messages that tell most about the day (issue 32: news, people, places, plans, feelings,
    numbers above greetings and cheers), in the order they were said; the day's centre breaks near ties.
    A message that tells nothing (small talk only) is never picked."""
    scores = np.array([message_score(text, people) for *_, text in lines], float)
    keep = [i for i, s in enumerate(scores) if s > 0]
    if len(keep) > k and embedder is not None:
        texts = [lines[i][3] for i in keep]
        vectors = embedder.embed_passages(texts)
        sims = vectors @ vectors.T
        np.fill_diagonal(sims, 0.0)
        centre = sims.sum(axis=1) / (len(keep) - 1)
        spread = float(centre.max() - centre.min()) or 1.0
        for j, i in enumerate(keep):
            scores[i] += CENTRE_WEIGHT * (centre[j] - centre.min()) / spread
    picked = sorted(sorted(keep, key=lambda i: -scores[i])[:k])
    return [lines[i] for i in picked]


def quote_telling(text: str, people: People, limit: int = QUOTE_CHARS) -> str:
    """A message's telling sentences in its own words (its greetings, cheers and questions left out; "…"
    where sentences between them were), whole sentences up to `limit` characters."""
    said = telling_sentences(text, people)
    if not said:
        return quote(text, limit)
    every = sentences(text, flat=True)
    kept: list[str] = []
    last, size = -1, 0
    for sentence in said:
        at = every.index(sentence, last + 1)
        piece = sentence if last == -1 or at == last + 1 else f"… {sentence}"
        if kept and size + len(piece) + 1 > limit:
            return " ".join(kept) + " …"
        kept.append(piece)
        size += len(piece) + 1
        last = at
    return quote(" ".join(kept), limit) if len(kept) == 1 else " ".join(kept)


def episode_summary(lines: list[Line], people: People | None = None) -> str:
    if people is None:
        return " ".join(f'{speaker}: "{quote(text)}"' for _, _, speaker, text in lines)
    return " ".join(f'{speaker}: "{quote_telling(text, people)}"' for _, _, speaker, text in lines)


def _candidates(sentence: str) -> list[tuple[str, bool]]:
    """Names in a sentence, each with whether it opens the sentence (where any word has a capital): a
    capitalized run that is not a common word, without a leading common word ("Ugh Kenji" is Kenji)."""
    found = []
    opening = len(sentence) - len(_OPENING.sub("", sentence))
    for match in _NAME.finditer(sentence):
        words = match.group(0).split(" ")
        dropped = 0
        while words and words[0].casefold().rstrip(".") in NOT_NAMES:
            words, dropped = words[1:], dropped + 1
        if words and len(" ".join(words)) > 1:
            found.append((" ".join(words), match.start() == opening and not dropped))
    return found + [(k, False) for k in KATAKANA.findall(sentence)]


def named_inside(name: str, texts: list[str]) -> bool:
    """Whether `name` is said somewhere other than at a sentence's opening (lowercase counts: "my pottery
    class" makes pottery a thing said, not a sentence opener)."""
    folded = name.casefold()
    for text in texts:
        for sentence in sentences(text, flat=True):
            at = sentence.casefold().find(folded, 1)
            opening = len(sentence) - len(_OPENING.sub("", sentence))
            while at != -1:
                if at > opening:
                    return True
                at = sentence.casefold().find(folded, at + 1)
    return False


def named(
    lines: list[Line], skip: set[str], known: list[str], people: People | None = None
) -> dict[str, list[tuple[int, str, str]]]:
    """Names said in these messages, most mentioned first, each with (message id, speaker, sentence) of
    the sentences that say it. `skip`: names that are not entities to remember (the speakers, the persona
    itself); `people`: the conversation's own people under every name the day gives them (never an
    entity; small talk is no mention); `known`: entity names memory already holds (found however they are
    written)."""
    skipped = {s.casefold() for s in skip}
    said = [
        (mid, speaker, sentence)
        for mid, _, speaker, text in lines
        for sentence in sentences(text, flat=True)
        if people is None or not small_talk(sentence, people)
    ]
    # A capitalized word opening a sentence ("Pottery makes me calm") is a name only where it is also
    # written with a capital inside a sentence, or memory knows it.
    inside = {name for *_, sentence in said for name, first in _candidates(sentence) if not first}
    inside |= set(known)
    mentions: dict[str, list[tuple[int, str, str]]] = {}
    counts: Counter[str] = Counter()
    for mid, speaker, sentence in said:
        names = {name for name, first in _candidates(sentence) if not first or name in inside}
        folded = sentence.casefold()
        names |= {k for k in known if k.casefold() in folded}
        names = {n for n in names if not never_a_name(n) and not (people is not None and people.who(n))}
        for name in names - {n for n in names if n.casefold() in skipped}:
            counts[name] += 1
            mentions.setdefault(name, []).append((mid, speaker, sentence))
    # "Luna" inside "Trattoria Luna" is the same place: the longer name keeps the mentions.
    for name in list(mentions):
        if any(name != other and name in other.split(" ") for other in mentions):
            del mentions[name]
    order = sorted(mentions, key=lambda n: (-counts[n], n))
    return {n: mentions[n][:SENTENCES_PER_ENTITY] for n in order[:ENTITIES_PER_PASS]}
