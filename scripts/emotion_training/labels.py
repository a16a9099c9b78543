"""GoEmotions' 28 labels onto our twelve and onto Ekman's groups: the mapping and the targets a head is
trained on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from nexus_ark.mind.labels import EKMAN_GROUP, LABELS

# GoEmotions' 28 labels onto ours. joy keeps the elated ones, happy the calmer positive ones, anticipation
# looking forward (excitement, optimism, desire: "can't wait", "hope it goes well", "I want that"), affection
# warmth towards someone (love, caring, gratitude; issue 37): all Ekman joy. nervousness becomes anxious
# (Ekman fear). tired, busy and stressed come from the seed set only.
MAPPING: dict[str, str] = {
    "joy": "joy",
    "amusement": "joy",
    "excitement": "anticipation",
    "optimism": "anticipation",
    "desire": "anticipation",
    "love": "affection",
    "caring": "affection",
    "gratitude": "affection",
    "admiration": "happy",
    "approval": "happy",
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


# Fine labels that count half for a second label of ours: GoEmotions' excitement is both the elation of
# what happened ("I got in, I'm so excited!", joy) and looking forward ("so excited for Saturday",
# anticipation); its words decide through the other fine labels (joy, desire, optimism) it comes with.
SHARED: dict[str, str] = {"excitement": "joy"}


def grouping(fine: list[str]) -> np.ndarray:
    """(fine, LABELS): which of our labels each fine label counts for (1, or a half each where SHARED)."""
    g = np.zeros((len(fine), len(LABELS)), np.float32)
    for i, name in enumerate(fine):
        g[i, LABELS.index(MAPPING.get(name, name))] = 1.0
        if name in SHARED:
            g[i] *= 0.5
            g[i, LABELS.index(SHARED[name])] = 0.5
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


def soft_targets(label_lists: list[list[str]]) -> np.ndarray:
    y = np.zeros((len(label_lists), len(LABELS)), np.float32)
    for row, names in enumerate(label_lists):
        for name in names:
            y[row, LABELS.index(MAPPING[name])] += 1.0 / len(names)
    return y


def ekman_matrix() -> np.ndarray:
    """(LABELS, EKMAN) 0/1: the Ekman group of each of our labels."""
    m = np.zeros((len(LABELS), len(EKMAN)), np.float32)
    for j, name in enumerate(LABELS):
        m[j, EKMAN.index(EKMAN_GROUP[name])] = 1.0
    return m


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
