"""XED (Öhman et al., COLING 2020; github.com/Helsinki-NLP/XED, CC BY 4.0): movie subtitle lines from OPUS
with Plutchik's eight emotions, multi-label, annotated in English (17,528 lines, plus 9,674 lines annotated
neutral) and projected to other languages through aligned subtitles (Japanese: 66 lines).

Read from a folder given at training time (issue 37: the rows are not copied into the project), holding
the repository's files under their own names: `en-annotated.tsv`, `neu_en.txt` (AnnotatedData/) and
`ja-projections.tsv` (Projections/). A line is `text<TAB>labels`, the labels numbers joined by commas:
1 anger, 2 anticipation, 3 disgust, 4 fear, 5 joy, 6 sadness, 7 surprise, 8 trust (neu_en.txt: `9<TAB>text`,
neutral). Plutchik's eight become ours as bench/emotion_real.py reads ours as Plutchik's, the other way:
trust is affection (the writer's warmth or thanks towards someone), the others keep their names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus_ark.mind.labels import LABELS

PLUTCHIK_IDS = {
    1: "anger",
    2: "anticipation",
    3: "disgust",
    4: "fear",
    5: "joy",
    6: "sadness",
    7: "surprise",
    8: "affection",  # Plutchik's trust
    9: "neutral",  # neu_en.txt
    0: "neutral",
}
PLUTCHIK_NAMES = {
    "anger": "Anger",
    "anticipation": "Anticipation",
    "disgust": "Disgust",
    "fear": "Fear",
    "joy": "Joy",
    "sadness": "Sadness",
    "surprise": "Surprise",
    "affection": "Trust",
    "neutral": "none",
}


@dataclass(frozen=True)
class XedRow:
    text: str
    labels: tuple[str, ...]  # ours, in the file's order, no repeats


def read_xed(path: Path, *, label_first: bool = False) -> list[XedRow]:
    """The rows of one XED file (neu_en.txt has its label before the text); a line without a tab or with
    an unknown label is a clear error."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        if label_first:
            ids, sep, text = line.partition("\t")
        else:
            text, sep, ids = line.rpartition("\t")
        if not sep:
            raise SystemExit(f"{path}:{number}: no tab between the text and its labels")
        try:
            labels = [PLUTCHIK_IDS[int(i)] for i in ids.split(",") if i.strip()]
        except (KeyError, ValueError):
            raise SystemExit(f"{path}:{number}: labels {ids!r} are not XED's 0-9") from None
        if text.strip() and labels:
            rows.append(XedRow(text.strip(), tuple(dict.fromkeys(labels))))
    return rows


def targets(rows: list[XedRow]) -> np.ndarray:
    """(rows, LABELS): a line with k emotions counts 1/k for each (as GoEmotions' comments do)."""
    y = np.zeros((len(rows), len(LABELS)), np.float32)
    for i, row in enumerate(rows):
        for label in row.labels:
            y[i, LABELS.index(label)] += 1.0 / len(row.labels)
    return y


def english(folder: Path, neutral: int, rng: np.random.Generator) -> list[XedRow]:
    """The English annotated lines and `neutral` of the neutral lines (drawn with `rng`)."""
    rows = read_xed(folder / "en-annotated.tsv")
    neu = read_xed(folder / "neu_en.txt", label_first=True)
    pick = rng.choice(len(neu), size=min(neutral, len(neu)), replace=False)
    return rows + [neu[i] for i in sorted(pick)]


def japanese(folder: Path) -> list[XedRow]:
    return read_xed(folder / "ja-projections.tsv")
