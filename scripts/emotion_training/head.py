"""The emotion head: its settings, its training (mini-batch Adam in numpy) and its predictions, over e5
embeddings plus hashed lexical features (nexus_ark/mind/features.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nexus_ark.mind.features import CHAR_MIN_WORD, CHAR_NS, lexical_features

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
    # Issue 37: a second loss on what is judged, the Ekman group (the normalized outputs summed per group):
    # its cross-entropy, this much of it, each group weighted (1 / its share) ** ekman_balance. 0: none.
    ekman: float = 0.0
    ekman_balance: float = 0.5


def train(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    s: Settings,
    lex: Sparse | None = None,
    rng_seed: int = 0,
    japanese: np.ndarray | None = None,
    ekman: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict:
    """Adam on the weighted soft-target cross-entropy; returns the head's arrays. `japanese` (0/1 per
    row) says where the Japanese-only term applies (s.japanese). `ekman`: (each output's Ekman group
    membership (outputs, groups), each row's weight in the Ekman loss (rows, groups): its group's class
    weight where it has one group, else zeros), for s.ekman."""
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
            prob = activate(logits, s.loss)
            d_logits = (prob - yb) * w
            if s.ekman and ekman is not None:
                d_logits += s.ekman * ekman_gradient(prob, ekman[0], ekman[1][idx]) / len(idx)
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


def ekman_gradient(prob: np.ndarray, member: np.ndarray, target: np.ndarray) -> np.ndarray:
    """d/d(logits) of -sum_g target[g] * log(P_g), P_g = the normalized sigmoids summed over group g's
    outputs: with s = sigmoid(z), S = sum(s), S_g = the sum over g of s, it is
    s(1-s) (sum(t)/S - t_{g(i)}/S_g)."""
    total = prob.sum(axis=1, keepdims=True)
    group_sum = prob @ member  # (rows, groups)
    per_output = (target / np.maximum(group_sum, 1e-9)) @ member.T  # t_g / S_g at each output of g
    return prob * (1.0 - prob) * (target.sum(axis=1, keepdims=True) / total - per_output)


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
