"""The emotion head's training tools (scripts/emotion_training/): the Ekman-group loss's gradient, and Ekman
offsets chosen for the group sums that bench/emotion.py scores (issue 37)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from emotion_training.evaluation import macro_f1, summed_group, tune_offsets
from emotion_training.head import ekman_gradient
from emotion_training.labels import EKMAN, ekman_matrix

from nexus_ark.mind.labels import LABELS


def _ekman_loss(logits: np.ndarray, member: np.ndarray, target: np.ndarray) -> float:
    s = 1.0 / (1.0 + np.exp(-logits))
    group = (s / s.sum(axis=1, keepdims=True)) @ member
    return float(-(target * np.log(group)).sum())


def test_the_ekman_loss_gradient_is_the_losss_derivative() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 6))
    member = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], float)
    target = np.array([[2.0, 0, 0], [0, 1.0, 0], [0, 0, 0.5], [0, 0, 0]])  # weights; a row without a group
    analytic = ekman_gradient(1.0 / (1.0 + np.exp(-logits)), member, target)
    numeric = np.zeros_like(logits)
    for i, j in np.ndindex(*logits.shape):
        step = np.zeros_like(logits)
        step[i, j] = 1e-6
        numeric[i, j] = (
            _ekman_loss(logits + step, member, target) - _ekman_loss(logits - step, member, target)
        ) / 2e-6
    assert np.allclose(analytic, numeric, atol=1e-6)
    assert not analytic[3].any()  # a comment whose labels span groups adds nothing


def test_offsets_for_the_group_sums_find_a_group_read_too_weakly() -> None:
    # Fear's comments put 0.4 on fear and 0.6 on joy: the sums never pick fear until its offset lifts it.
    rng = np.random.default_rng(1)
    fear, joy = LABELS.index("fear"), LABELS.index("joy")
    gold = rng.integers(0, 2, 400)
    probs = np.zeros((400, len(LABELS)))
    probs[:, fear] = np.where(gold == 1, 0.4, 0.1) + rng.uniform(0, 0.05, 400)
    probs[:, joy] = 1.0 - probs[:, fear]
    gold = np.where(gold == 1, EKMAN.index("fear"), EKMAN.index("joy"))
    before = macro_f1(gold, summed_group(probs, np.zeros(len(EKMAN))), len(EKMAN))
    offsets = tune_offsets(probs, gold, sums=True)
    after = macro_f1(gold, summed_group(probs, offsets), len(EKMAN))
    assert offsets[EKMAN.index("fear")] - offsets[EKMAN.index("joy")] > np.log(0.6 / 0.45)
    # Two of the seven groups occur: each read right is a macro-F1 of 2/7; the sums alone read fear never.
    assert after == pytest.approx(2 / 7) and before < 0.1
    assert ekman_matrix().shape == (len(LABELS), len(EKMAN))
