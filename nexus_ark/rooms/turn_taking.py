"""Who speaks in a room (issue 24): pure decisions, deterministic given a `random.Random`.

A message is answered first by the members it names (names and nicknames, Japanese included), then by the
room's strategy: natural (each member rolls against its talkativeness, raised by the message's relevance to
what the persona is about), list (every member in the room's order) or manual (the person picks the rest).
In auto mode, after each persona's message `pick_next` says who goes on, until the cap of persona messages
since the person last spoke, or until the person starts typing (`AutoMode`). SillyTavern's group chats are
the behaviour users know (mentions first, talkativeness rolls, one random pick when nobody rolled, auto mode
turned off by typing); relevance and honorifics are ours.
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Strategy = Literal["natural", "list", "manual"]
STRATEGIES: tuple[Strategy, ...] = ("natural", "list", "manual")


class Member(BaseModel):
    """A persona in a room, as turn-taking sees it."""

    model_config = ConfigDict(frozen=True)

    slug: str = Field(min_length=1)
    name: str = Field(min_length=1)  # display name, may be Japanese ("ひかり", "Aria")
    nicknames: list[str] = []  # other spellings that count as a mention ("ヒカリ", "Hika")
    talkativeness: float = Field(0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    muted: bool = False
    about: str = ""  # the soul's first lines: what a message must touch to draw this persona in


# --- Names ------------------------------------------------------------------------------------------------

# Kana, kanji (with 々 and the long-vowel mark, inside the kana block) and hangul: scripts with no spaces
# between words, where a name is found as a substring.
_CJK = r"\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_IS_CJK = re.compile(f"[{_CJK}]")
# A letter or digit of a spaced script: what may not touch a Latin name ("Aria" is no mention in "Ariana").
_SPACED_WORD_CHAR = f"[^\\W_{_CJK}]"
# Honorifics a name may carry: romaji ones may be written onto the name ("Hikarichan"; "Aria-san" and
# "Aria san" already end the word), Japanese ones follow a one-character name, which needs one (below).
_ROMAJI_HONORIFIC = "(?:san|chan|kun|sama|senpai|sensei|dono|tan)?"
_JA_HONORIFIC = "(?:さん|ちゃん|くん|君|様|さま|殿|たん|先輩|先生|せんぱい|せんせい)"


def fold(text: str) -> str:
    """The form names are compared in: NFKC (full-width Latin and half-width kana become ordinary) and
    casefolded. Hiragana and katakana stay apart: ひかり and ヒカリ are the same name only when listed."""
    return unicodedata.normalize("NFKC", text).casefold()


@functools.lru_cache(maxsize=512)
def _alias_pattern(alias: str) -> re.Pattern[str]:
    """Where a folded name occurs in folded text. An end of the name in a spaced script must not touch a
    letter or digit there (a romaji honorific may follow); an end in kana or kanji may touch anything
    (ひかりさん, ひかりが). A one-character CJK name needs an honorific or to stand alone: 空 in 空が青い is
    the sky, not a persona."""
    body = r"\s+".join(re.escape(part) for part in alias.split())
    if len(alias) == 1 and _IS_CJK.match(alias):
        return re.compile(f"(?<![{_CJK}]){body}(?:{_JA_HONORIFIC}|(?![{_CJK}]))")
    head = "" if _IS_CJK.match(alias[0]) else f"(?<!{_SPACED_WORD_CHAR})"
    tail = "" if _IS_CJK.match(alias[-1]) else f"{_ROMAJI_HONORIFIC}(?!{_SPACED_WORD_CHAR})"
    return re.compile(head + body + tail)


def _aliases(member: Member) -> set[str]:
    return {a for a in (fold(n).strip() for n in (member.name, *member.nicknames)) if a}


def mentioned(text: str, members: Sequence[Member]) -> list[str]:
    """Slugs of members named in text (name or nickname), in order of first mention, each once. Where
    two members' names overlap in the text, the longer wins ("Anna" is not also "Ann")."""
    folded = fold(text)
    found = [
        (hit.start(), -(hit.end() - hit.start()), hit.end(), member.slug)
        for member in members
        for alias in _aliases(member)
        for hit in _alias_pattern(alias).finditer(folded)
    ]
    taken_until, order = -1, []
    for start, _, end, slug in sorted(found):
        if start < taken_until:
            continue  # inside a longer (or earlier) name
        taken_until = end
        if slug not in order:
            order.append(slug)
    return order


# --- Relevance --------------------------------------------------------------------------------------------

# Relevance of a message to a persona: how much of the message the persona's `about` also speaks of, two
# shared words counting as fully relevant (1.0), one as half. Each word of the message counts at most 1:
# - a word of a spaced script (three letters or more, not a function word or filler, a plural "s"
#   dropped so "stars" meets "star") counts 1 when the about has it;
# - Japanese has no spaces: each run of kanji and katakana (天文学, コーヒー) counts the share of its
#   character bigrams the about's runs also have (天文学: 天文 and 文学), or, when more, half the share of
#   its kanji found in the about (星 in 星の話 meets 星空: 0.5), since a single kanji is often a word.
#   Hiragana is left out (particles, verb endings: what every message shares), as are a few kanji common
#   to any talk (私, 今, 日, 思...).
# Relevance only raises a member's chance (`speaking_chance`); it never wakes a silent one.
FULL_RELEVANCE = 2.0
KANJI_ONLY_WEIGHT = 0.5
_FUNCTION_WORDS = """
    about after again all also and any are because been before being but can could did does doing done
    for from get got had has have her here hers him his how into its just let like more most much not now
    off once only other our ours out over own same she should some such than that the their theirs them
    then there these they this those through too under until very was were what when where which while
    who whom why will with would yes you your yours yourself think thing things really well want know tell
"""
_STOPWORDS = frozenset(_FUNCTION_WORDS.split())
_COMMON_KANJI = frozenset("私僕俺君人何今日時事物方思言行来見出入上下中大小前後本当")
_WORD = re.compile(r"[^\W\d_]{3,}")
_KANJI_KATAKANA_RUN = re.compile(r"[\u3005\u30a1-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_KANJI = re.compile(r"[\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _words(folded: str) -> set[str]:
    words = set()
    for word in _WORD.findall(_IS_CJK.sub(" ", folded)):
        if word not in _STOPWORDS:
            words.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return words


def _bigrams(run: str) -> set[str]:
    return {run[i : i + 2] for i in range(len(run) - 1)}


def _kanji(run: str) -> set[str]:
    return {c for c in run if _KANJI.match(c) and c not in _COMMON_KANJI}


def relevance(text: str, about: str) -> float:
    """0..1: how much of `text` the persona's `about` also speaks of (see above)."""
    said, theirs = fold(text), fold(about)
    their_runs = _KANJI_KATAKANA_RUN.findall(theirs)
    their_bigrams = set().union(*map(_bigrams, their_runs))
    their_kanji = set().union(*map(_kanji, their_runs))
    shared = float(len(_words(said) & _words(theirs)))
    for run in set(_KANJI_KATAKANA_RUN.findall(said)):
        bigrams, kanji = _bigrams(run), _kanji(run)
        by_bigrams = len(bigrams & their_bigrams) / len(bigrams) if bigrams else 0.0
        by_kanji = KANJI_ONLY_WEIGHT * len(kanji & their_kanji) / len(kanji) if kanji else 0.0
        shared += max(by_bigrams, by_kanji)
    return min(1.0, shared / FULL_RELEVANCE)


def speaking_chance(member: Member, text: str) -> float:
    """The chance a member answers a message it was not named in: its talkativeness, raised by up to as
    much again by the message's relevance (a fully relevant message doubles it), at most 1. A member at 0.0
    stays silent unless named or the only fallback."""
    return min(1.0, member.talkativeness * (1.0 + relevance(text, member.about)))


# --- Choosing speakers ------------------------------------------------------------------------------------


def _check(strategy: str, cap: int) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown reply strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    if cap < 0:
        raise ValueError(f"cap must be 0 or more, not {cap}")


def _eligible(members: Sequence[Member], author: str | None) -> list[Member]:
    """Who may speak now: unmuted members other than the author of the message, in the room's order."""
    return [m for m in members if not m.muted and m.slug != author]


def _room_order_after(members: Sequence[Member], author: str | None) -> list[Member]:
    """The room's order, starting after the author when a member wrote (wrapping round); the author last."""
    at = next((i for i, m in enumerate(members) if m.slug == author), None)
    return list(members) if at is None else [*members[at + 1 :], *members[: at + 1]]


def _weighted_pick(pool: Sequence[Member], weights: Sequence[float], rng: random.Random) -> Member:
    return rng.choices(pool, weights=weights)[0] if sum(weights) > 0 else rng.choice(pool)


def plan_replies(
    text: str,
    author: str | None,
    members: Sequence[Member],
    strategy: Strategy,
    rng: random.Random,
    *,
    cap: int,
) -> list[str]:
    """Who answers a message, in order (at most `cap`; never the author, never a muted member).
    author None = the person. Members named in the message answer first, in the order they were named,
    then by strategy:
    - natural: every other member rolls against `speaking_chance`; those who rolled answer most likely
      first (random among equals). When nobody was named and nobody rolled, one member is picked weighted by
      its chance (uniformly when every chance is 0), so a message is never left unanswered.
    - list: every other unmuted member in the room's order, starting after the author when a persona wrote.
    - manual: only the named members (the person picks the rest with a "next speaker" control).
    """
    _check(strategy, cap)
    eligible = _eligible(members, author)
    by_slug = {m.slug: m for m in eligible}
    named = [slug for slug in mentioned(text, members) if slug in by_slug]
    if strategy == "manual":
        return named[:cap]
    rest = [m for m in eligible if m.slug not in named]
    if strategy == "list":
        order = [m.slug for m in _room_order_after(members, author) if m.slug in by_slug]
        return [*named, *(slug for slug in order if slug not in named)][:cap]
    chances = [speaking_chance(m, text) for m in rest]
    rolled = []  # (most likely first, random among equals, slug)
    for member, chance in zip(rest, chances, strict=True):
        if rng.random() < chance:
            rolled.append((-chance, rng.random(), member.slug))
    chosen = [*named, *(slug for _, _, slug in sorted(rolled))]
    if not chosen and rest:
        chosen = [_weighted_pick(rest, chances, rng).slug]
    return chosen[:cap]


def pick_next(
    text: str,
    author: str,
    members: Sequence[Member],
    strategy: Strategy,
    rng: random.Random,
    *,
    spoken_since_person: int,
    cap: int,
) -> str | None:
    """Auto mode: after `author`'s message `text`, who goes on (None: stop and wait for the person).
    `spoken_since_person` counts the persona messages since the person last spoke; at `cap` it stops.
    The author never goes again straight away (no one speaks twice in a row). A member named in the message
    goes next; otherwise natural: one member weighted by `speaking_chance` (None when all are silent, at
    talkativeness 0); list: the next unmuted member in the room's order; manual: None (the person picks)."""
    _check(strategy, cap)
    if strategy == "manual" or spoken_since_person >= cap:
        return None
    eligible = _eligible(members, author)
    if not eligible:
        return None
    by_slug = {m.slug for m in eligible}
    named = next((slug for slug in mentioned(text, members) if slug in by_slug), None)
    if named is not None:
        return named
    if strategy == "list":
        return next(m.slug for m in _room_order_after(members, author) if m.slug in by_slug)
    weights = [speaking_chance(m, text) for m in eligible]
    return _weighted_pick(eligible, weights, rng).slug if sum(weights) > 0 else None


# --- Auto mode --------------------------------------------------------------------------------------------


class AutoMode:
    """The state of 'let them talk': on or off, and the pause between turns. Typing turns it off at once
    (as in SillyTavern: the person wants the floor; the reply being written may finish, no new one starts),
    and the control shows it off; the person turns it on again. Pure state: the caller owns the timers."""

    MIN_PAUSE_S = 0.0
    MAX_PAUSE_S = 60.0
    DEFAULT_PAUSE_S = 5.0

    def __init__(self, pause_s: float = DEFAULT_PAUSE_S) -> None:
        self._on = False
        self._stopped_by_typing = False
        self._pause_s = self._checked_pause(pause_s)

    @classmethod
    def _checked_pause(cls, seconds: float) -> float:
        if not cls.MIN_PAUSE_S <= seconds <= cls.MAX_PAUSE_S:  # NaN fails this too
            raise ValueError(f"the pause must be {cls.MIN_PAUSE_S}-{cls.MAX_PAUSE_S} s, not {seconds}")
        return float(seconds)

    @property
    def on(self) -> bool:
        return self._on

    @property
    def stopped_by_typing(self) -> bool:
        """Whether the person's typing turned it off (the window may say so), until it is started again."""
        return self._stopped_by_typing

    @property
    def pause_s(self) -> float:
        """Seconds to wait between one persona's reply and the next turn."""
        return self._pause_s

    @pause_s.setter
    def pause_s(self, seconds: float) -> None:
        self._pause_s = self._checked_pause(seconds)

    def start(self) -> None:
        self._on, self._stopped_by_typing = True, False

    def stop(self) -> None:
        self._on = False

    def person_typing(self) -> bool:
        """The person started typing: auto mode goes off. Returns whether it was on (a pending turn that has
        not started must then be dropped)."""
        was_on = self._on
        if was_on:
            self._on, self._stopped_by_typing = False, True
        return was_on

    def may_continue(self, spoken_since_person: int, cap: int) -> bool:
        """Whether another persona turn may start now: auto mode is on and fewer than `cap` persona
        messages came since the person last spoke."""
        return self._on and spoken_since_person < cap
