"""Who the people in a conversation are called (issue 32): the person and the persona are never outside
entities of a dream, under any of the names the day gives them.

A person is called by the name the app knows (Persona.user_name), by a speaker's name in an imported
conversation, and by what the other speaker calls them in the day's words: "Hey Maria!", "Thanks, Mel.",
「ひかりちゃん、おはよう」 (a vocative). Short forms ("Cal" for Calvin) and honorifics (「ひかりさん」) are
the same person. Sign-offs, greetings, thanks, months and weekdays are never names, in English and Japanese.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from nexus_ark.sentences import sentences

# Speakers that name a role, not a person ("user" is how the chat stores the person's turns).
GENERIC_SPEAKERS = frozenset(["user", "you", "me", "person", "human", "assistant", "system", "note", ""])

HONORIFICS = ("さん", "ちゃん", "くん", "君", "様", "さま", "先輩", "先生", "氏", "殿", "たん", "っち")
_HONORIFIC_END = re.compile("(?:" + "|".join(HONORIFICS) + ")$")

# Words said to someone, never of someone: greetings, sign-offs, thanks, cheers, fillers (English), and
# months and weekdays with their short forms. Folded; a capital letter on them proves nothing.
NEVER_NAMES_EN = frozenset(
    """
    hi hey hello hiya heya howdy yo hallo greetings morning evening afternoon night goodnight gn welcome
    bye goodbye byebye cya ttyl ttys later laters farewell adios ciao cheers take care xoxo xo hugs hug
    thanks thank thx ty tysm tks congrats congratulations kudos bravo welldone wow whoa woah woohoo yay
    yeah yea yep yup yes yess nope nah ok okay okey alright sure absolutely totally definitely exactly
    agreed indeed right true cool nice sweet awesome amazing great lovely wonderful fantastic brilliant
    perfect haha hahaha hehe lol lmao omg omfg btw brb idk imo imho np fyi aw aww awww oh ooh ah ahh
    oops ouch ugh hmm hm huh phew yikes gosh geez jeez dear darling honey sorry please well so anyway
    anyways also plus sounds glad hope hopefully guess maybe wishing wish love miss january february
    march april may june july august september october november december jan feb mar apr jun jul aug sep
    sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur
    thurs fri sat sun weekend weekday today tomorrow tonight yesterday
    """.split()  # noqa: SIM905 (a list of words reads best as words)
)
# Japanese: greetings, thanks, sign-offs and cheers (hiragana, katakana and kanji forms), months, weekdays.
NEVER_NAMES_JA = frozenset(
    """
    おはよう おはようございます こんにちは こんばんは おやすみ おやすみなさい ありがとう
    ありがとうございます どうも さようなら さよなら またね じゃあね じゃあ またあとで お疲れ様 お疲れさま
    おつかれ よろしく ただいま おかえり いってきます いってらっしゃい すごい やった おめでとう ごめん
    ごめんなさい すみません オハヨー オハヨウ コンニチハ アリガトウ アリガト サンキュー バイバイ バイ
    ハロー ハイ オッケー オーケー ドンマイ ヤッター ナイス グッド ファイト ガンバ ヨロシク オヤスミ マタネ
    ゴメン ハッピー ラッキー 月曜日 火曜日 水曜日 木曜日 金曜日 土曜日 日曜日 月曜 火曜 水曜 木曜 金曜
    土曜 日曜 週末 平日 今日 明日 昨日 今朝 今夜 毎日
    """.split()  # noqa: SIM905 (a list of words reads best as words)
)
_MONTH_OR_DAY_JA = re.compile(r"^(?:[0-9０-９]{1,2}|[一二三四五六七八九十]{1,3})月$|^[月火水木金土日]曜日?$")
NEVER_NAMES = NEVER_NAMES_EN | NEVER_NAMES_JA


def never_a_name(word: str) -> bool:
    """A greeting, sign-off, thanks, month or weekday (English or Japanese), however it is written."""
    folded = word.strip(" \t.,!?;:…~、。！？").casefold()
    if not folded:
        return True
    if folded in NEVER_NAMES or _MONTH_OR_DAY_JA.match(folded):
        return True
    # "Thanks Mel", "Bye bye": every word of it is one of them.
    words = folded.replace("-", " ").split()
    return len(words) > 1 and all(w in NEVER_NAMES for w in words)


# -- vocatives: what the speakers call each other ----------------------------------------------------
_CAP = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_GREETING = (
    r"(?i:hey|hi|hiya|heya|hello|howdy|yo|dear|thanks|thank you|thx|ty|bye|goodbye|bye bye|night|good night|"
    r"morning|good morning|evening|good evening|congrats|congratulations|wow|whoa|woah|woohoo|yay|yeah|yep|"
    r"yes|yup|ok|okay|oh|aw|aww|sure thing|cheers|sorry|love you|miss you|see you|see ya|later|welcome|"
    r"haha|lol|omg|ah|hmm|come on|good luck|take care|night night|ttyl)"
)
# "Hey Mel!", "Thanks Jon,", "Yeah Mel, let's…": a greeting, then the name, then a stop or a comma.
_AFTER_GREETING = re.compile(rf"(?:^|(?<=[\s,.!?]))\b{_GREETING},?\s+({_CAP})(?=\s*(?:[!?.,…~:;)]|$))")
# "Thanks, Melanie!", "Totally agree, Mel.": after a comma, the name ends the sentence.
_AFTER_COMMA = re.compile(rf"[,;]\s*({_CAP})\s*(?=[!?.…~]+(?:\s|$)|$)")
# "Gina, you ever been…", "Caroline, how are you?": the name opens the sentence, said to someone.
_OPENING = re.compile(
    rf"^({_CAP}),\s+(?i:you|your|you're|you've|how|what|are|do|did|have|can|could|would|will|thanks|thank|"
    r"i|i'm|we|let's|look|guess|check|listen|remember|please|hope|good|congrats|sorry|is|was|where|when|why)\b"
)
# "Jon!" on its own (not "Paris?!": an echo of what was said).
_ALONE = re.compile(rf"^({_CAP})\s*!+$")
_JA_NAME = r"[ァ-ヺー]{2,8}|[一-龥々]{1,4}"
_JA_HONORED = r"[ぁ-ゖァ-ヺー一-龥々]{1,6}?(?:" + "|".join(HONORIFICS) + ")"
_JA_GREETING = (
    r"(?:おはよう|こんにちは|こんばんは|ありがとう|おやすみ|またね|じゃあね|ただいま|おかえり|やあ|ねえ|ねぇ|"
    r"よろしく|お疲れ様|おつかれ|ごめんね|おめでとう)(?:ございます|なさい)?"
)
# 「ひかりちゃん、」「ケン！」 opening a sentence; 「おはよう、ひかりさん！」「ありがとう、ケン」 after a
# greeting.
_JA_OPENING = re.compile(rf"^({_JA_HONORED}|[ァ-ヺー]{{2,8}})[、，!！?？]")
_JA_AFTER_GREETING = re.compile(
    rf"{_JA_GREETING}[、，!！\s]*({_JA_HONORED}|{_JA_NAME})(?=[。！!？?、～〜]|$)"
)


def bare(name: str) -> str:
    """A name without its honorific and possessive (「ひかりちゃん」 → ひかり, "Mel's" → Mel), folded."""
    name = re.sub(r"['’]s?$", "", name.strip())
    return _HONORIFIC_END.sub("", name).casefold()


def vocatives(sentence: str) -> list[str]:
    """Names a sentence calls someone by (not names it speaks of)."""
    found = [
        m.group(1)
        for pattern in (_AFTER_GREETING, _AFTER_COMMA, _OPENING, _ALONE, _JA_OPENING, _JA_AFTER_GREETING)
        for m in pattern.finditer(sentence)
    ]
    return [f for f in dict.fromkeys(found) if not never_a_name(f) and not never_a_name(bare(f))]


@dataclass
class People:
    """The names of the person and of the persona in one conversation, as the day says them (folded,
    without honorifics)."""

    person: set[str] = field(default_factory=set)
    persona: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)  # other speakers (a room's members, another assistant)
    # The name the person's entity is filed under ('' where the day does not say who the person is).
    person_name: str = ""

    def who(self, name: str) -> str:
        """'person', 'persona', 'speaker' for one of the conversation's own people (also by a short form or
        with an honorific), else ''."""
        said = bare(name)
        if not said:
            return ""
        for role, names in (("person", self.person), ("persona", self.persona), ("speaker", self.others)):
            if any(_same(said, known) for known in names):
                return role
        return ""

    @property
    def all(self) -> set[str]:
        return self.person | self.persona | self.others

    @property
    def words(self) -> set[str]:
        """Every name and every word of a full name (what a quote's attribution may say)."""
        return self.all | {w for name in self.all for w in name.split()} | _names_of(self.person_name)


def _same(said: str, known: str) -> bool:
    """The same person: the same name, a word of a full name ("Caroline" of "Caroline Smith"), or a short
    form of one of its words ("Cal" for Calvin, "Mel" for Melanie)."""
    if said == known:
        return True
    words = known.split()
    if said in words:
        return True
    return (
        len(said) >= 3 and " " not in said and any(w.startswith(said) and len(w) > len(said) for w in words)
    )


def _names_of(name: str) -> set[str]:
    folded = bare(name)
    return {folded} if folded and folded not in GENERIC_SPEAKERS else set()


def conversation_people(
    lines: Iterable[tuple[int, str, str, str]],
    roles: dict[int, str],
    *,
    persona_names: Iterable[str],
    user_name: str = "",
    trusted: Iterable[int] = (),
) -> People:
    """Who is who in the day's lines (id, time, speaker, text): the person (`user_name`, the speakers of
    the person's turns, what the persona's turns call them), the persona (its names, what the person's
    turns call it) and other speakers. `trusted`: ids of persona turns that were not written by the
    persona's model (an imported conversation), whose vocatives may name the person's entity."""

    people = People()
    for name in persona_names:
        people.persona |= _names_of(name)
    people.person |= _names_of(user_name)
    trusted_ids = set(trusted)
    person_speakers: list[str] = []
    called: list[str] = []  # what trusted persona turns call the person, in order
    lines = list(lines)
    for mid, _, speaker, _ in lines:
        if roles.get(mid) == "user":
            if speaker.casefold() not in GENERIC_SPEAKERS and speaker not in person_speakers:
                person_speakers.append(speaker)
        elif _names_of(speaker) and not (_names_of(speaker) & people.persona):
            people.others |= _names_of(speaker)
    for speaker in person_speakers:
        people.person |= _names_of(speaker)
    for mid, _, _, text in lines:
        for sentence in sentences(text, flat=True):
            for name in vocatives(sentence):
                folded = bare(name)
                known = people.who(folded)
                if known:  # a short form or another spelling: kept, so a quote may say it without a source
                    {"person": people.person, "persona": people.persona, "speaker": people.others}[known].add(
                        folded
                    )
                    continue
                if roles.get(mid) == "user":
                    people.persona.add(folded)  # the person talks to the persona
                else:
                    people.person.add(folded)
                    if mid in trusted_ids:
                        called.append(_HONORIFIC_END.sub("", name))
    # Vocatives said to the other speaker that turn out to be the persona's or a speaker's are kept apart.
    people.others -= people.persona
    if user_name.strip():
        people.person_name = user_name.strip()
    elif len(person_speakers) == 1:
        people.person_name = person_speakers[0]
    elif not person_speakers and called:
        people.person_name = max(set(called), key=called.count)
    return people
