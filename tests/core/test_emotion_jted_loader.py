"""scripts/data/jted.py reads the Japanese Text-Emoticon Data's pandas pickle without pandas (issue 37): the
messages with the emotion of the emoticon each writer chose, mapped onto our labels, and a pickle that would
run anything else is refused before it runs. The frames here are built for the test in the layout pandas
writes (a DataFrame holding a BlockManager whose state is its axes and blocks); no row of the data is
copied into the project."""

from __future__ import annotations

import os
import pickle
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from data import jted

from nexus_ark.mind.labels import LABELS


class _Pickled:
    """Pickles as `module.name(*args)` with `state`, as a pandas object does."""

    def __init__(self, module: str, name: str, state: Any) -> None:
        self.where, self.state = (module, name), state

    def __reduce__(self) -> tuple[Any, ...]:
        return (_global(*self.where), (), self.state)


def _global(module: str, name: str) -> Any:
    holder = sys.modules.setdefault(module, types.ModuleType(module))
    cls = type(name, (), {"__module__": module, "__qualname__": name})
    setattr(holder, name, cls)
    return cls


def _frame(columns: list[str], values: np.ndarray) -> _Pickled:
    axes = [{"data": np.array(columns, dtype=object), "name": None}, {"data": np.arange(values.shape[1])}]
    manager = _Pickled("pandas.core.internals.managers", "BlockManager", (axes, [values], axes[:1], {}))
    return _Pickled("pandas.core.frame", "DataFrame", {"_mgr": manager, "_typ": "dataframe"})


def _write(path: Path, obj: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    for module in ("pandas", "pandas.core", "pandas.core.frame", "pandas.core.internals.managers"):
        monkeypatch.setitem(sys.modules, module, types.ModuleType(module))
    path.write_bytes(pickle.dumps(obj))
    return path


def test_messages_keep_the_emotion_of_their_writers_emoticon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = np.array(
        [
            ["明日から旅行だー", "やらかした…", "本当にありがとう"],
            ["(≧▽≦)", "(´・ω・`)", "(*´ω｀*)"],
            ["None", "sad", "like"],
            ["None", "negative", "positive"],
            ["excite", "sad", "like"],
            ["positive", "negative", "positive"],
        ],
        dtype=object,
    )
    path = _write(tmp_path / "test.pkl", _frame(list(jted.COLUMNS), values), monkeypatch)
    rows = jted.read_jted(path)
    assert [(r.text, r.emoticon_emotion) for r in rows] == [
        ("明日から旅行だー", "excite"),
        ("やらかした…", "sad"),
        ("本当にありがとう", "like"),
    ]
    y = jted.targets(rows)
    assert y[0, LABELS.index("joy")] == pytest.approx(0.5)
    assert y[0, LABELS.index("anticipation")] == pytest.approx(0.5)
    assert y[1, LABELS.index("sadness")] == 1.0 and y[2, LABELS.index("affection")] == 1.0


def test_a_pickle_that_would_run_code_is_refused_before_it_runs(tmp_path: Path) -> None:
    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, ("echo should-not-run",))

    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(
        SystemExit, match=r"evil.pkl: not the Japanese Text-Emoticon Data's pickle \(.*system"
    ):
        jted.read_jted(path)


def test_other_columns_are_named_in_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "other.pkl", _frame(["a", "b"], np.zeros((2, 1), dtype=object)), monkeypatch)
    with pytest.raises(SystemExit, match=r"other.pkl: columns \['a', 'b'\]"):
        jted.read_jted(path)
