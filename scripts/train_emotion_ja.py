"""Train a head's Japanese-only term (Wj, bj) on the Japanese seeds and on public emotion data, every other
array of the head kept (issue 37: emotion in people's own Japanese).

    .venv/bin/python scripts/train_emotion_ja.py --base HEAD --xed XED_FOLDER [--jted PKL] --tune
    .venv/bin/python scripts/train_emotion_ja.py --base HEAD --xed XED_FOLDER [--jted PKL] \
        --xed-weight W --jted-weight W --out PATH

Two sets, each read from where it is given (no row is copied into the project):
- XED (Helsinki-NLP, CC BY 4.0; scripts/data/xed.py): subtitle lines with Plutchik's eight, anticipation
  and trust (our affection) included. Its Japanese is only 66 projected lines, so its 17,528 English lines
  (and 3,000 of its neutral ones) teach the Japanese term across languages through the multilingual
  embedding: an English line's query embedding stands for a Japanese text's, the rest of its logit is the
  head's embedding map and bias (a Japanese text has none of its English words for the lexical term).
- The Japanese Text-Emoticon Data (Urabe et al. 2021, CC BY-SA 3.0; scripts/data/jted.py): messages
  people wrote in Japanese, each labelled by the emotion of the emoticon its writer put after it.
  `--jted-rows` of them, drawn with a fixed seed.
The seeds are what `train_emotion.py --japanese-from` trains on (JAPANESE_SEEDS), with the same loss,
standardization, class weights, learning rate, L2, batches and epochs; a row of either set counts its
`--...-weight` GoEmotions comments (a seed sentence counts 20).

--tune compares each set's weight (the other left out) on what is not trained on and may be tuned on: the
natural Japanese set's tuning half (tests/data/emotion_ja_natural/tune.jsonl, our labels; and its top-1
read as Plutchik's, as WRIME is scored) and XED's 66 Japanese lines (a reading is right when its label,
read as Plutchik's as bench/emotion_real.py reads it, is one of the line's). WRIME is never read here.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from data import jted, xed  # noqa: E402
from emotion_training.corpus import Corpus, embed_cached, load_corpus  # noqa: E402
from emotion_training.evaluation import macro_f1  # noqa: E402
from emotion_training.head import Settings, lexical_matrix, rows_of, sample_weights  # noqa: E402
from emotion_training.labels import seed_fine_targets  # noqa: E402
from train_emotion import DEFAULT_DATA, FINAL, JAPANESE_SEEDS, merged_seed, train_japanese_term  # noqa: E402

from bench.emotion_real import PLUTCHIK  # noqa: E402
from nexus_ark.mind.emotion_greeting import without_greeting  # noqa: E402
from nexus_ark.mind.labels import LABELS  # noqa: E402

TUNE_HALF = ROOT / "tests" / "data" / "emotion_ja_natural" / "tune.jsonl"
XED_NEUTRAL = 3000  # of XED's 9,674 neutral English lines (about a share of neutral like GoEmotions')
WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0)
JTED_ROWS = 8000  # of its 37,622 messages: what the shared two cores embed in a few minutes


@dataclass
class Rows:
    """What the Japanese term is trained on: standardized inputs, fine targets (every label a yes), row
    weights and the rest of each row's logit."""

    xs: np.ndarray
    y: np.ndarray
    w: np.ndarray
    fixed: np.ndarray


def load_head(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as f:
        return {name: f[name] for name in f.files}


def lexical_logits(head: dict[str, np.ndarray], texts: list[str], s: Settings) -> np.ndarray:
    """What the head's lexical term adds to each text's logits (its hashed words count for Japanese too)."""
    s_lex = replace(s, char_ns=tuple(int(n) for n in head["lex_char_ns"]))
    s_lex = replace(s_lex, char_min_word=int(head["lex_char_min_word"]))
    lex_w = head["lex"].astype(np.float32) * head["lex_scale"].astype(np.float32)
    out = np.zeros((len(texts), lex_w.shape[1]), np.float32)
    r, bucket, val = rows_of(lexical_matrix(texts, s_lex), np.arange(len(texts)))
    np.add.at(out, r, val[:, None] * lex_w[bucket])
    return out


def seed_rows(c: Corpus, head: dict[str, np.ndarray], s: Settings, mean: np.ndarray, sd: np.ndarray) -> Rows:
    """The seeds' Japanese texts as `train_emotion.py --japanese-from` trains on them."""
    rows = np.flatnonzero(c.japanese > 0)
    x = c.x[rows]
    fixed = x @ head["W"].astype(np.float32) + head["b"].astype(np.float32)
    fixed += lexical_logits(head, [c.texts[i] for i in rows], s)
    weights = sample_weights(c.y, c.is_seed, s)
    w = (weights / weights.mean()).astype(np.float32)[rows]
    y = c.y[rows] / np.maximum(c.y[rows].max(axis=1, keepdims=True), 1e-9)
    return Rows((x - mean) / sd, y, w, fixed)


def labelled_rows(
    y_ours: np.ndarray,
    x: np.ndarray,
    texts: list[str] | None,
    c: Corpus,
    head: dict[str, np.ndarray],
    s: Settings,
    mean: np.ndarray,
    sd: np.ndarray,
) -> Rows:
    """A labelled set's rows (targets over our labels): fine targets spread as a seed sentence's are,
    class weights as GoEmotions' comments get them (one row = one comment before its weight). `texts`:
    Japanese texts, whose words the lexical term reads as the detector does; None for XED's English lines,
    which stand for Japanese texts (the rest of their logit is the shared map and bias alone)."""
    assert c.g is not None
    y = seed_fine_targets(y_ours, c.g, c.y[~c.is_seed])
    weights = sample_weights(c.y, c.is_seed, s)
    mass = (c.y * np.where(c.is_seed, s.seed_weight, 1.0)[:, None]).sum(axis=0)
    class_w = (mass.sum() / np.maximum(mass, 1e-9)) ** s.balance
    w = ((y @ class_w) / weights.mean()).astype(np.float32)
    fixed = x @ head["W"].astype(np.float32) + head["b"].astype(np.float32)
    if texts is not None:
        fixed += lexical_logits(head, texts, s)
    y = y / np.maximum(y.max(axis=1, keepdims=True), 1e-9)
    return Rows((x - mean) / sd, y, w, fixed)


def train_term(rows: Rows, s: Settings, corpus_rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Wj and bj (in standardized inputs), from zero, the rest of each row's logit fixed: the loop of
    `--japanese-from` itself."""
    return train_japanese_term(rows.xs, rows.y, rows.w, rows.fixed, s, corpus_rows, rng)


def joined(parts: list[Rows]) -> Rows:
    return Rows(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("xs", "y", "w", "fixed")))


def with_term(
    head: dict[str, np.ndarray], params: dict[str, np.ndarray], mean: np.ndarray, sd: np.ndarray
) -> dict:
    """The head with this Japanese term (its standardization folded into Wj and bj, as the detector reads
    raw embeddings)."""
    out = dict(head)
    out["bj"] = (params["bj"] - (mean / sd) @ params["Wj"]).astype(np.float32)
    out["Wj"] = (params["Wj"] / sd[:, None]).astype(np.float16)
    return out


def read_japanese(head: dict[str, np.ndarray], x: np.ndarray, texts: list[str]) -> np.ndarray:
    """Our labels' probabilities for Japanese texts, as the detector computes them from their embeddings
    (the distress rule left out)."""
    logits = x @ head["W"].astype(np.float32) + head["b"].astype(np.float32)
    logits += lexical_logits(head, texts, FINAL)
    logits += x @ head["Wj"].astype(np.float32) + head["bj"].astype(np.float32)
    probs = 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
    probs /= probs.sum(axis=1, keepdims=True)
    # A head may scale Japanese text by its own Ekman offsets (`scale_ja`), else by the shared ones.
    probs *= head["scale_ja" if "scale_ja" in head else "scale"].astype(np.float32)
    probs /= probs.sum(axis=1, keepdims=True)
    return probs @ head["G"].astype(np.float32)


@dataclass
class Checks:
    """What settings are chosen on: embeddings and gold labels of sets never trained on."""

    tune_texts: list[str]
    tune_x: np.ndarray
    tune_gold: np.ndarray
    xed_texts: list[str]
    xed_x: np.ndarray
    xed_gold: list[set[str]]

    def score(self, head: dict[str, np.ndarray]) -> tuple[float, float, float, float]:
        """Tuning half accuracy and macro-F1 over our labels, its top-1 read as Plutchik's (as WRIME is
        scored: the messages whose label is one of Plutchik's eight), XED's Japanese top-1."""
        shown = read_japanese(head, self.tune_x, self.tune_texts).argmax(axis=1)
        acc = float(np.mean(shown == self.tune_gold))
        f1 = macro_f1(self.tune_gold, shown, len(LABELS))
        felt = [PLUTCHIK[LABELS[g]] != "none" for g in self.tune_gold]
        plutchik = float(
            np.mean(
                [
                    PLUTCHIK[LABELS[p]] == PLUTCHIK[LABELS[g]]
                    for p, g, f in zip(shown, self.tune_gold, felt, strict=True)
                    if f
                ]
            )
        )
        xed_shown = [
            PLUTCHIK[LABELS[i]] for i in read_japanese(head, self.xed_x, self.xed_texts).argmax(axis=1)
        ]
        top1 = float(np.mean([p in gold for p, gold in zip(xed_shown, self.xed_gold, strict=True)]))
        return acc, f1, plutchik, top1


def load_checks(folder: Path, cache: Path) -> Checks:
    tune = [json.loads(line) for line in TUNE_HALF.read_text(encoding="utf-8").splitlines() if line.strip()]
    ja = xed.japanese(folder)
    tune_texts = [without_greeting(r["text"]) for r in tune]
    xed_texts = [without_greeting(r.text) for r in ja]
    return Checks(
        tune_texts=tune_texts,
        tune_x=embed_cached(tune_texts, cache),
        tune_gold=np.array([LABELS.index(r["label"]) for r in tune]),
        xed_texts=xed_texts,
        xed_x=embed_cached(xed_texts, cache),
        xed_gold=[{xed.PLUTCHIK_NAMES[label] for label in r.labels} for r in ja],
    )


def scores(values: tuple[float, float, float, float]) -> str:
    acc, f1, plutchik, top1 = values
    return (
        f"tuning half acc {acc:.3f} macro-F1 {f1:.3f} Plutchik top-1 {plutchik:.3f}; XED ja top-1 {top1:.3f}"
    )


def xed_lines(args: argparse.Namespace) -> tuple[list[xed.XedRow], np.ndarray]:
    en = xed.english(args.xed, XED_NEUTRAL, np.random.default_rng(0))
    x_en = embed_cached([r.text for r in en], args.cache)  # all of them: one cache entry
    keep = np.array([r.labels != ("neutral",) for r in en])
    keep[np.flatnonzero(~keep)[: args.xed_neutral]] = True
    return [r for r, k in zip(en, keep, strict=True) if k], x_en[keep]


def jted_messages(args: argparse.Namespace) -> tuple[list[jted.JtedRow], np.ndarray]:
    """`--jted-rows` of the messages (drawn with a fixed seed; embedding all 37,622 takes too long here)."""
    rows = jted.read_jted(args.jted)
    pick = np.sort(
        np.random.default_rng(0).choice(len(rows), size=min(args.jted_rows, len(rows)), replace=False)
    )
    chosen = [rows[i] for i in pick]
    return chosen, embed_cached([r.text for r in chosen], args.cache)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=Path, required=True, help="the head whose Japanese term is trained")
    parser.add_argument(
        "--xed", type=Path, required=True, help="a folder with XED's files (scripts/data/xed.py)"
    )
    parser.add_argument(
        "--jted", type=Path, help="the Japanese Text-Emoticon Data's pickle (scripts/data/jted.py)"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the goemotions folder")
    parser.add_argument("--cache", type=Path, default=ROOT / "tmp" / "emotion_cache")
    parser.add_argument("--xed-weight", type=float, default=1.0)
    parser.add_argument(
        "--xed-neutral", type=int, default=XED_NEUTRAL, help=f"neutral XED lines (0-{XED_NEUTRAL})"
    )
    parser.add_argument("--jted-weight", type=float, default=1.0)
    parser.add_argument("--jted-rows", type=int, default=JTED_ROWS)
    parser.add_argument("--jted-balanced", action="store_true", help="weigh each emoticon emotion alike")
    parser.add_argument("--rng", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--tune", action="store_true", help="compare each set's weight (the other's 0)")
    parser.add_argument("--out", type=Path, default=ROOT / "tmp" / "e2" / "head_ja.npz")
    args = parser.parse_args()
    needed = [args.base, *(args.xed / n for n in ("en-annotated.tsv", "neu_en.txt", "ja-projections.tsv"))]
    for path in [*needed, *([args.jted] if args.jted else [])]:
        if not path.exists():
            raise SystemExit(f"{path} does not exist")
    s = FINAL
    c = load_corpus(args.data, args.cache, s, seed=merged_seed(JAPANESE_SEEDS, args.cache), sample=3000)
    head = load_head(args.base)
    mean, sd = c.x[c.embedded].mean(axis=0), c.x[c.embedded].std(axis=0) + 1e-6
    seeds = seed_rows(c, head, s, mean, sd)
    en, x_en = xed_lines(args)
    sets = {"XED": labelled_rows(xed.targets(en), x_en, None, c, head, s, mean, sd)}
    if args.jted:
        msgs, x_msgs = jted_messages(args)
        y_msgs = jted.targets(msgs)
        sets["JTED"] = labelled_rows(y_msgs, x_msgs, [m.text for m in msgs], c, head, s, mean, sd)
        if args.jted_balanced:  # each emoticon emotion the same total weight (joy is 36 % of the messages)
            share = y_msgs.sum(axis=0) / len(y_msgs)
            w = (y_msgs @ np.where(share > 0, 1.0 / np.maximum(share, 1e-9), 0.0)) / np.count_nonzero(share)
            sets["JTED"] = replace(sets["JTED"], w=(sets["JTED"].w * w / w.mean()).astype(np.float32))
    checks = load_checks(args.xed, args.cache)
    print(f"base {args.base}: " + scores(checks.score(head)), flush=True)
    given = {"XED": args.xed_weight, "JTED": args.jted_weight if args.jted else 0.0}
    grid = (
        [{**dict.fromkeys(given, 0.0), name: w} for name in sets for w in WEIGHTS] if args.tune else [given]
    )
    for weights in grid:
        parts = [seeds, *(replace(sets[n], w=sets[n].w * w) for n, w in weights.items() if w)]
        trained = [train_term(joined(parts), s, len(c.texts), np.random.default_rng(r)) for r in args.rng]
        params = {n: np.mean([p[n] for p in trained], axis=0) for n in ("Wj", "bj")}
        out = with_term(head, params, mean, sd)
        named = ", ".join(f"{n} weight {w:g}" for n, w in weights.items())
        print(f"{named}: " + scores(checks.score(out)), flush=True)
        if not args.tune:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(args.out, **out)
            print(
                f"wrote {args.out}: the Japanese term of {args.base} trained on the seeds, {named}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
