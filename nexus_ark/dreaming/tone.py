"""The day's tone as the person lived it (issue 32): the emotion reader's labels for the person's messages,
with distress weighed above the day's cheer. A day of ten friendly lines and one failed test, one
health scare or one doctor's warning was logged "happy" because happy lines were the commonest; a
person remembers that day as a stressful or sad one.

Distress is read twice: by the emotion reader (a negative label) and by a small lexicon of distress in
English and Japanese (a failed test, a diagnosis, a death, a lost job), because the reader, trained on
short Reddit comments, reads "I failed my aptitude test, but thanks for cheering me up!" as grateful.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from nexus_ark.mind.distress import distress, news_of_distress

NEGATIVE = frozenset(["sadness", "anger", "fear", "anxious", "tired", "stressed", "disgust"])
POSITIVE = frozenset(["joy", "happy", "surprise", "anticipation", "affection"])
# One distress reading counts this much more than one cheerful one.
DISTRESS_WEIGHT = 3.0
# Distress sets the day's tone when it weighs at least this share of the day's cheer (so one failed test
# among eleven cheerful lines does; a breakup mentioned in passing on a happy day does not).
DISTRESS_SHARE = 0.5


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
