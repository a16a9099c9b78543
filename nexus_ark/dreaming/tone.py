"""The day's tone as the person lived it (issue 32): the emotion reader's labels for the person's messages,
with distress weighed above the day's cheer. A day of ten friendly lines and one failed test, one
health scare or one doctor's warning was logged "happy" because happy lines were the commonest; a
person remembers that day as a stressful or sad one.

Distress is read twice: by the emotion reader (a negative label) and by a small lexicon of distress in
English and Japanese (a failed test, a diagnosis, a death, a lost job), because the reader, trained on
short Reddit comments, reads "I failed my aptitude test, but thanks for cheering me up!" as grateful.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from nexus_ark.sentences import sentences

NEGATIVE = frozenset(["sadness", "anger", "fear", "anxious", "tired", "stressed", "disgust"])
POSITIVE = frozenset(["joy", "happy", "surprise"])
# One distress reading counts this much more than one cheerful one.
DISTRESS_WEIGHT = 3.0
# Distress sets the day's tone when it weighs at least this share of the day's cheer (so one failed test
# among eleven cheerful lines does; a breakup mentioned in passing on a happy day does not).
DISTRESS_SHARE = 0.5

# What loss sounds like: the day reads sad.
_LOSS_EN = (
    r"died|passed away|pass away|funeral|lost my (?:job|mom|dad|mother|father|grandma|grandpa|dog|cat)|"
    r"laid off|got fired|been fired|broke up|break-?up|divorce|miscarriage|put down|heartbroken|grief|"
    r"grieving|"
    r"crying|cried|lonely|depressed"
)
_LOSS_JA = r"亡くな|他界|葬式|お葬式|失業|クビ|解雇|リストラ|別れ|振られ|離婚|泣い|泣き|寂し|さみし|落ち込"
# What a scare or a failure sounds like: the day reads stressed.
_SCARE_EN = (
    r"fail(?:s|ed|ing|ure)?|flunk(?:ed)?|rejected|rejection|doctors?|hospital|clinic|emergency room|"
    r"diagnos\w*|palpitations?|chest pains?|heart (?:attack|rate|problems?|condition)|blood pressure|"
    r"surgery|biopsy|scan results?|test results?|warned|warning|health scare|sick|ill|injured|"
    r"got hurt|accident|burn(?:ed|t)? out|can't sleep|couldn't sleep|insomnia|panic\w*"
)
_SCARE_JA = (
    r"落ちた|落ちて|不合格|失敗|病院|医者|医師|診断|検査|動悸|胸が痛|心臓|血圧|手術|入院|救急|事故|怪我|けが|"
    r"熱が|具合が悪|体調が悪|眠れな|怒られ|注意され|警告"
)
# Pressure said in passing ("a bit nervous"): it counts, at half the weight.
_WORRY_EN = (
    r"stress(?:ed|ful)?|anxious|anxiety|worried|worry(?:ing)?|overwhelmed|exhausted|pain|hurts?|upset|"
    r"struggl\w*|nervous|afraid|scared?|scary|injury|injuries|tough time|hard time|rough (?:day|week)"
)
_WORRY_JA = r"痛い|痛く|不安|心配|怖い|こわい|ストレス|疲れ|つらい|辛い|しんどい|焦|緊張"
_LOSS = re.compile(rf"\b(?:{_LOSS_EN})\b|{_LOSS_JA}", re.IGNORECASE)
_SCARE = re.compile(rf"\b(?:{_SCARE_EN})\b|{_SCARE_JA}", re.IGNORECASE)
_WORRY = re.compile(rf"\b(?:{_WORRY_EN})\b|{_WORRY_JA}", re.IGNORECASE)
# "Don't worry", "no worries", "not sick anymore": reassurance, not distress.
_REASSURED = re.compile(
    r"\b(?:don't|do not|no|not|never|nothing to)\s+(?:\w+\s+)?(?:worr\w*|stress\w*|sick|scar\w*|fail\w*)|"
    r"心配しないで|心配ない|大丈夫",
    re.IGNORECASE,
)


_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|me|my|we|our|us)\b|私|僕|俺|わたし|あたし", re.IGNORECASE)


# Japanese leaves the speaker unsaid (「試験に落ちた」 is the speaker's own): its loss or scare is theirs.
_JAPANESE = re.compile(r"[ぁ-んァ-ン一-龥]")


def news_of_distress(text: str) -> bool:
    """Whether a message tells of the speaker's own loss, failure or scare ("I failed my test", "Lost my
    job yesterday", 「試験に落ちた」), not a worry in passing nor a loss long past said of others."""

    for sentence in sentences(text, flat=True):
        calm = _REASSURED.sub(" ", sentence)
        if (_LOSS.search(calm) or _SCARE.search(calm)) and (
            _FIRST_PERSON.search(calm) or _JAPANESE.search(calm)
        ):
            return True
    return False


def distress(text: str) -> tuple[str, float]:
    """The kind of distress a message says ('sadness' or 'stressed') and how much (0: none; a loss
    weighs more than a worry)."""
    calm = _REASSURED.sub(" ", text)
    loss = len(_LOSS.findall(calm))
    stress = len(_SCARE.findall(calm)) + 0.5 * len(_WORRY.findall(calm))
    if loss:
        return "sadness", min(1.0 + 0.5 * (loss - 1) + 0.4 * stress, 2.0)
    if stress:
        return "stressed", min(0.8 * stress, 1.6)
    return "", 0.0


def day_tone(readings: Iterable[tuple[str, float]], texts: Iterable[str]) -> str:
    """The day's tone from the emotion reader's (label, confidence) for the person's messages and the
    messages' words: distress (a negative reading, a distress word) wins where it is a fair share of the
    day's feeling; else the commonest feeling other than neutral; neutral; '' when nothing was read."""
    readings = list(readings)
    weight: defaultdict[str, float] = defaultdict(float)
    for label, confidence in readings:
        if label in NEGATIVE:
            weight[label] += DISTRESS_WEIGHT * max(confidence, 0.3)
        elif label in POSITIVE:
            weight[label] += max(confidence, 0.3)
    news = False
    for text in texts:
        kind, amount = distress(text)
        if kind:
            weight[kind] += DISTRESS_WEIGHT * amount
            news = news or news_of_distress(text)
    negative = sum(weight[k] for k in NEGATIVE)
    positive = sum(weight[k] for k in POSITIVE)
    # The person's own loss or scare is the day's news, however cheerful the rest of the day was.
    if negative and (news or negative >= DISTRESS_SHARE * positive):
        return max(NEGATIVE, key=lambda k: (weight[k], k == "stressed"))
    if not readings:
        return ""
    felt = Counter(label for label, _ in readings if label != "neutral")
    return felt.most_common(1)[0][0] if felt else "neutral"
