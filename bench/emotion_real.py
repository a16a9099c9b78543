"""Emotion on people's own writing (issue 37): WRIME's Japanese posts with their writers' own emotions, and
distress wrapped in a greeting or a polite phrase (GoEmotions dev; WRIME), as bench/emotion.py reports them.

WRIME (Kajiwara et al., NAACL 2021; github.com/ids-cv/wrime) is CC BY-NC-ND 4.0: it is read from a path
the person gives (`--wrime wrime-ver1.tsv`), never copied into the project nor trained on. Each post has
its writer's own intensities (0-3) of Plutchik's eight emotions; a post counts when one emotion is the
writer's strongest alone (ties and posts without any left out), and its "Train/Dev/Test" column picks the
split (the test split is what the issue's goal is judged on; nothing here is tuned on any split).
"""

from __future__ import annotations

import csv
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from nexus_ark.mind.emotion import EmotionDetector, EmotionReading
from nexus_ark.mind.labels import VALUES

ROOT = Path(__file__).resolve().parents[1]
DISTRESS_SET = ROOT / "tests" / "data" / "emotion_distress.jsonl"
WRIME_EMOTIONS = ("Joy", "Sadness", "Anticipation", "Surprise", "Anger", "Fear", "Disgust", "Trust")
# Our labels as Plutchik's (WRIME's) eight; neutral and busy are no emotion, so never right on a post whose
# writer felt one. Fixed before any WRIME row was read.
PLUTCHIK: dict[str, str] = {
    "joy": "Joy",
    "happy": "Joy",
    "anticipation": "Anticipation",
    "affection": "Trust",
    "surprise": "Surprise",
    "sadness": "Sadness",
    "tired": "Sadness",
    "anger": "Anger",
    "fear": "Fear",
    "anxious": "Fear",
    "stressed": "Fear",
    "disgust": "Disgust",
    "neutral": "none",
    "busy": "none",
}
# A greeting, thanks or a polite phrase in a Japanese post.
_POLITE_JA = re.compile(
    r"おはよう|こんにちは|こんばんは|おやすみ|ありがと|感謝|お疲れ|おつかれ|よろしく|すみません|ございます"
)

Report = Callable[..., None]


def wrime_rows(path: Path, split: str) -> list[tuple[str, str, dict[str, int]]]:
    """(text, the writer's strongest emotion, all eight intensities) of the split's posts with one."""
    out = []
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["Train/Dev/Test"].strip().lower() != split:
                continue
            felt = {e: int(row[f"Writer_{e}"]) for e in WRIME_EMOTIONS}
            top = max(felt.values())
            strongest = [e for e, v in felt.items() if v == top]
            if top > 0 and len(strongest) == 1:
                out.append((row["Sentence"].replace("\\n", "\n"), strongest[0], felt))
    return out


def plutchik_of(reading: EmotionReading) -> str:
    grouped: dict[str, float] = {}
    for label, p in reading.scores.items():
        grouped[PLUTCHIK[label]] = grouped.get(PLUTCHIK[label], 0.0) + p
    return max(grouped, key=grouped.__getitem__)


def bench_wrime(detector: EmotionDetector, path: Path, split: str, report: Report) -> None:
    rows = wrime_rows(path, split)
    readings = detector.classify_many(text for text, _, _ in rows)
    gold = [g for _, g, _ in rows]
    classes = list(WRIME_EMOTIONS)
    report(
        f"WRIME {split}, writer's own emotion, label shown",
        gold,
        [PLUTCHIK[x.label] for x in readings],
        classes,
        per_class=True,
    )
    report(
        f"WRIME {split}, writer's own emotion, groups summed",
        gold,
        [plutchik_of(x) for x in readings],
        classes,
    )
    shown = Counter(x.label for x in readings)
    print("  labels shown: " + ", ".join(f"{k} {v}" for k, v in shown.most_common()))
    # Distress in a polite post: the writer's sadness or fear strongest, no joy, anticipation or trust.
    polite = [
        x
        for (text, g, felt), x in zip(rows, readings, strict=True)
        if g in ("Sadness", "Fear")
        and not (felt["Joy"] or felt["Anticipation"] or felt["Trust"])
        and _POLITE_JA.search(text)
    ]
    if polite:
        happy = statistics.fmean(VALUES[x.label] > 0 for x in polite)
        print(f"WRIME {split}, distress in a polite post: n={len(polite)}  read positive {happy:.3f}")


def bench_distress(detector: EmotionDetector) -> None:
    rows = [
        json.loads(line) for line in DISTRESS_SET.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    readings = detector.classify_many(r["text"] for r in rows)
    positive = statistics.fmean(VALUES[x.label] > 0 for x in readings)
    negative = statistics.fmean(VALUES[x.label] < 0 for x in readings)
    print(
        f"GoEmotions dev distress with a greeting, thanks or cheer (tests/data/emotion_distress.jsonl): "
        f"n={len(rows)}  read positive {positive:.3f}  read negative {negative:.3f}"
    )
