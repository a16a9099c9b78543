"""scripts/data/xed.py reads XED's files as the repository lays them out (issue 37): Plutchik's eight become
our labels (trust is affection), a line with several emotions counts a share for each, neutral lines have
their label first, and a damaged line is named with its file and line number. The rows here are written
for the test (no XED line is copied into the project)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from data import xed

from nexus_ark.mind.labels import LABELS


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "en-annotated.tsv").write_text(
        "I can't wait to see you tomorrow!\t2\nYou lied to me again.\t1, 3\nThank you, I owe you one.\t8\n",
        encoding="utf-8",
    )
    (tmp_path / "neu_en.txt").write_text("9\tThe bus leaves at six.\n9\tPass the salt.\n", encoding="utf-8")
    (tmp_path / "ja-projections.tsv").write_text("明日が待ちきれない\t2, 5\n", encoding="utf-8")
    return tmp_path


def test_plutchik_labels_become_ours_with_trust_as_affection(tmp_path: Path) -> None:
    rows = xed.english(_folder(tmp_path), neutral=1, rng=np.random.default_rng(0))
    assert [r.labels for r in rows[:3]] == [("anticipation",), ("anger", "disgust"), ("affection",)]
    assert len(rows) == 4 and rows[3].labels == ("neutral",)
    assert rows[3].text in {"The bus leaves at six.", "Pass the salt."}
    assert xed.japanese(tmp_path)[0].labels == ("anticipation", "joy")


def test_a_line_with_two_emotions_counts_half_for_each(tmp_path: Path) -> None:
    y = xed.targets(xed.read_xed(_folder(tmp_path) / "en-annotated.tsv"))
    assert y[1, LABELS.index("anger")] == pytest.approx(0.5)
    assert y[1, LABELS.index("disgust")] == pytest.approx(0.5)
    assert y.sum(axis=1) == pytest.approx([1.0, 1.0, 1.0])


def test_a_damaged_line_names_its_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "en-annotated.tsv"
    bad.write_text("Fine line.\t5\nNo label here\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"en-annotated.tsv:2: no tab"):
        xed.read_xed(bad)
    bad.write_text("Fine line.\t5\nOdd label.\t12\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"en-annotated.tsv:2: labels '12'"):
        xed.read_xed(bad)
