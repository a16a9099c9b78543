"""Japanese Text-Emoticon Data (Urabe, Rzepka and Araki, Information Processing & Management 58(1), 2021;
github.com/kuroshiba-Ginji/JapaneseTextEmoticonData; the data CC BY-SA 3.0, the repository MIT): Japanese
messages people wrote, each followed by one emoticon (kept apart from the text), with the emotion category
of the emoticon the writer chose (`emoEmotion`) and of the emotive expression in the text (`textEmotion`,
"None" when there is none), both in Nakamura's ten (joy 喜, like 好, relief 安, anger 怒, dislike 厭, fear 恐,
sad 哀, amaze 驚, shy 恥, excite 昂).

Read from the repository's pandas pickle given at training time (issue 37: no row is copied into the
project) without pandas: an unpickler that builds only numpy arrays and refuses every other class, so a
file that is not this data cannot run code. The ten become ours as GoEmotions' nearest labels do
(scripts/emotion_training/labels.py): like is affection, relief happy, dislike disgust, amaze surprise,
shy sadness (embarrassment), excite half joy and half anticipation (excitement).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nexus_ark.mind.labels import LABELS

NAKAMURA: dict[str, dict[str, float]] = {
    "joy": {"joy": 1.0},
    "like": {"affection": 1.0},
    "relief": {"happy": 1.0},
    "anger": {"anger": 1.0},
    "dislike": {"disgust": 1.0},
    "fear": {"fear": 1.0},
    "sad": {"sadness": 1.0},
    "amaze": {"surprise": 1.0},
    "shy": {"sadness": 1.0},
    "excite": {"joy": 0.5, "anticipation": 0.5},
}
COLUMNS = ("text", "emoticon", "textEmotion", "textPolarity", "emoEmotion", "emoPolarity")


@dataclass(frozen=True)
class JtedRow:
    text: str  # the message without its emoticon
    emoticon_emotion: str  # one of NAKAMURA


class _Stub:
    """Stands for a pandas class: keeps what the pickle gives it."""

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.state: Any = None

    def __setstate__(self, state: Any) -> None:
        self.state = state


def _new_index(cls: Any, data: Any = None) -> Any:
    return data


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] == "numpy" and name in {"_reconstruct", "ndarray", "dtype", "_frombuffer"}:
            return super().find_class(module, name)
        if (module, name) == ("builtins", "slice"):
            return slice
        if module.split(".")[0] == "pandas":
            return _new_index if name == "_new_Index" else type(name, (_Stub,), {})
        raise pickle.UnpicklingError(f"{module}.{name} is not part of this data")


def read_jted(path: Path) -> list[JtedRow]:
    """The rows of train_20210126.pkl or test_20210126.pkl; anything else is a clear error."""
    try:
        with path.open("rb") as f:
            frame = _Unpickler(f).load()
        axes, blocks = frame.state["_mgr"].state[:2]
        columns = [str(c) for c in axes[0]["data"]]
        values = np.concatenate(blocks, axis=0)
    except (
        OSError,
        pickle.UnpicklingError,
        AttributeError,
        KeyError,
        IndexError,
        TypeError,
        ValueError,
    ) as e:
        raise SystemExit(f"{path}: not the Japanese Text-Emoticon Data's pickle ({e})") from None
    if sorted(columns) != sorted(COLUMNS) or values.shape[0] != len(columns):
        raise SystemExit(f"{path}: columns {columns}, not {list(COLUMNS)}")
    col = {name: values[columns.index(name)] for name in COLUMNS}
    return [
        JtedRow(str(text), str(felt))
        for text, felt in zip(col["text"], col["emoEmotion"], strict=True)
        if str(text).strip() and str(felt) in NAKAMURA
    ]


def targets(rows: list[JtedRow]) -> np.ndarray:
    """(rows, LABELS) from the emotion of the emoticon each writer chose."""
    y = np.zeros((len(rows), len(LABELS)), np.float32)
    for i, row in enumerate(rows):
        for label, share in NAKAMURA[row.emoticon_emotion].items():
            y[i, LABELS.index(label)] += share
    return y
