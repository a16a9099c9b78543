"""How a head is judged: Ekman macro-F1 of the label shown, one offset per Ekman group, and out-of-fold
predictions (every text scored by a head that did not train on it)."""

from __future__ import annotations

import numpy as np

from nexus_ark.mind.labels import LABELS

from .corpus import Corpus
from .head import Settings, lexical_matrix, predict, sample_weights, train
from .labels import EKMAN, ekman_matrix


def to_ekman(probs: np.ndarray, g: np.ndarray | None = None) -> np.ndarray:
    """Sum the head's probabilities (fine ones through g) into Ekman groups; index into EKMAN."""
    return (probs @ g if g is not None else probs) @ ekman_matrix()


def shown_group(probs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The Ekman group of the label the detector shows (the argmax of our twelve), with group offsets."""
    group_of = ekman_matrix().argmax(axis=1)
    return group_of[(np.log(probs + 1e-9) + offsets[group_of]).argmax(axis=1)]


def summed_group(probs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The Ekman group whose labels' summed probability is largest, with group offsets (what
    bench/emotion.py scores: the head's `scale` multiplies each group's sum by exp(offset))."""
    return (np.log(to_ekman(probs) + 1e-9) + offsets).argmax(axis=1)


def tune_offsets(probs: np.ndarray, gold: np.ndarray, rounds: int = 3, *, sums: bool = False) -> np.ndarray:
    """One log-offset per Ekman group, by coordinate ascent on the macro-F1 of the group of the label
    shown (probs: our labels; gold -1: left out), or with `sums` of the group whose summed probability
    is largest, as bench/emotion.py scores it (issue 37). Scoring the shown label keeps a clear joy from
    being shown as neutral because its mass is split between joy and happy."""
    keep = gold >= 0
    probs, gold = probs[keep], gold[keep]
    decide = summed_group if sums else shown_group
    offsets = np.zeros(len(EKMAN))
    best = macro_f1(gold, decide(probs, offsets), len(EKMAN))
    for _ in range(rounds):
        for c in range(len(EKMAN)):
            for value in np.linspace(-1.5, 1.5, 31):
                trial = offsets.copy()
                trial[c] = value
                score = macro_f1(gold, decide(probs, trial), len(EKMAN))
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


def ekman_targets(c: Corpus, rows: np.ndarray, s: Settings) -> tuple[np.ndarray, np.ndarray]:
    """What the Ekman loss (Settings.ekman) needs: each output's Ekman group (outputs, groups), and each
    row's weight on its one group (rows, groups; zeros for a comment whose labels span several groups): a
    seed sentence counts seed_weight comments, a group (1 / its share) ** ekman_balance, mean 1."""
    member = (c.g if c.g is not None else np.eye(len(LABELS), dtype=np.float32)) @ ekman_matrix()
    mass = c.y[rows] @ member
    single = mass.max(axis=1) >= mass.sum(axis=1) - 1e-6
    onehot = np.where(single[:, None], np.eye(len(EKMAN), dtype=np.float32)[mass.argmax(axis=1)], 0.0)
    onehot *= np.where(c.is_seed[rows], s.seed_weight, 1.0)[:, None]
    share = onehot.sum(axis=0)
    onehot *= ((share.sum() / np.maximum(share, 1e-9)) ** s.ekman_balance)[None, :]
    onehot /= onehot.sum() / max(int(single.sum()), 1)
    return member.astype(np.float32), onehot.astype(np.float32)


def fit(c: Corpus, rows: np.ndarray, s: Settings, rng_seed: int = 0) -> dict:
    lex = lexical_matrix([c.texts[i] for i in rows], s) if s.buckets else None
    weights = sample_weights(c.y[rows], c.is_seed[rows], s)
    ekman = ekman_targets(c, rows, s) if s.ekman else None
    return train(c.x[rows], c.y[rows], weights, s, lex, rng_seed, c.japanese[rows], ekman)


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
