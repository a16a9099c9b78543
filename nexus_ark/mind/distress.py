"""What distress sounds like in a message, in English and Japanese: a loss, a failure, a scare (an illness,
a doctor's warning) or a worry in passing (issue 32, moved here from dreaming/tone.py for issue 37).

The emotion reader, trained on short Reddit comments, reads "I failed my aptitude test, but thanks for
cheering me up!" as grateful; the person's own news of a failure, an illness or a scare outweighs the
polite phrase around it. The detector (emotion.py) and the day's tone (dreaming/tone.py) both ask here.
"""

from __future__ import annotations

import re

from nexus_ark.sentences import sentences

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


# A greeting, thanks or a polite phrase: what made a message of distress read glad (GoEmotions files thanks
# under gratitude, a greeting under approval). The detector lets distress outweigh only these, not a
# cheerful message that mentions a doctor or a test in passing.
_POLITE = re.compile(
    r"\b(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening|night)|thanks|thank you|thx|please|cheers)\b|"
    r"こんにちは|こんばんは|おはよう|ありがと|お疲れ|おつかれ|よろしく|すみません|ただいま|やあ",
    re.IGNORECASE,
)


def polite(text: str) -> bool:
    """Whether `text` holds a greeting, thanks or a polite phrase."""
    return _POLITE.search(text) is not None
