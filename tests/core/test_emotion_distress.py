"""Distress is never read as happy (issue 37): a failure, an illness or a fear in a message outweighs the
greeting, thanks or polite phrase around it. Real head on the real e5.

tests/data/emotion_distress.jsonl holds real comments, not written for the test: every GoEmotions dev
comment whose raters gave it only Ekman sadness or fear (neutral besides allowed) and which holds a
greeting, thanks, a polite phrase or cheer (scripts/data/make_distress_set.py says the rule, fixed before
any reading). GoEmotions dev is never trained on.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.mind.emotion import EmotionDetector, distress_outweighs
from nexus_ark.mind.labels import LABELS, VALUES

DISTRESS_SET = Path(__file__).resolve().parents[2] / "tests" / "data" / "emotion_distress.jsonl"


@pytest.fixture(scope="module")
def detector() -> EmotionDetector:
    return EmotionDetector()


def test_real_distress_around_a_polite_phrase_is_rarely_read_as_a_good_feeling(
    detector: EmotionDetector,
) -> None:
    rows = [json.loads(line) for line in DISTRESS_SET.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) >= 50
    readings = detector.classify_many(r["text"] for r in rows)
    positive = [(r["text"], x.label) for r, x in zip(rows, readings, strict=True) if x.value > 0]
    negative = np.mean([x.value < 0 for x in readings])
    # The head before issue 37 read 10 of these 61 positive (0.164) and 0.820 negative; the shipped head
    # 9 (0.148) and 0.836. Several are condolences ("so sorry for your loss ... I hope you're doing better")
    # whose raters heard sadness and the head hears the caring, so the bar is a share, with a few
    # comments' slack for another CPU's rounding in e5.
    assert len(positive) / len(rows) <= 0.2, positive
    assert negative >= 0.78


@pytest.mark.parametrize(
    "text",
    [
        "Hi! I failed the exam and my chest has been hurting all day.",
        "Thanks for asking! The doctor found something on my scan and I'm scared.",
        "Good morning! I got rejected from the job I really wanted.",
        "こんにちは！健康診断で再検査って言われて、正直こわい。",
        "おはよう、ありがとう。でも昨日また試験に落ちたんだ。",
    ],
)
def test_news_of_a_failure_or_an_illness_outweighs_the_greeting(detector: EmotionDetector, text: str) -> None:
    # Written for the test: a smoke check of the rule, not a measure (the set above is the measure).
    reading = detector.classify(text)
    assert reading.value < 0, (text, reading.label, reading.confidence)


@pytest.mark.parametrize(
    "text",
    [
        "Hi! I passed the exam, thank you for cheering me on!",
        "こんにちは！試験に合格したよ、応援ありがとう！",
        "Don't worry, the doctor said I'm perfectly healthy!",
    ],
)
def test_good_news_around_the_same_words_stays_good(detector: EmotionDetector, text: str) -> None:
    assert detector.classify(text).value > 0


def test_the_cheer_goes_to_the_distress_the_words_name() -> None:
    probs = np.full(len(LABELS), 0.01)
    probs[LABELS.index("happy")] = 0.6
    probs /= probs.sum()
    moved = distress_outweighs(probs, "Thanks so much! My dog died yesterday.")
    assert LABELS[int(np.argmax(moved))] == "sadness"
    assert moved.sum() == pytest.approx(1.0)
    assert all(moved[i] == 0 for i, name in enumerate(LABELS) if VALUES[name] > 0)
    # No news of the speaker's own distress: nothing moves.
    assert distress_outweighs(probs, "Thanks so much, that was lovely!") is probs
