"""`nexus-ark emotion classify` in a fresh process: the scripting contract of the README.

No persona and no chat model are needed: it works on an empty data folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexus_ark.mind.labels import EKMAN_GROUP, LABELS, VALUES
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

TEXTS = [
    "I just got the job, I'm over the moon!",
    "",
    "My grandfather passed away last night and I can't stop crying.",
    "   ",
    "約束を破られて本当に腹が立つ！許せない！",
    "夜道で誰かに後をつけられて、怖くて震えた。",
]
# Ekman groups: "over the moon" is an idiom the head reads weakly, split between joy and happy (0.24 / 0.25
# with the shipped head, 0.27 / 0.25 with the one before), both of the joy group; this test is about the
# command's contract, tests/core/test_emotion.py about the labels of clear sentences.
EXPECTED = ["joy", "sadness", "anger", "fear"]


def test_json_lines_one_per_text(tmp_path: Path) -> None:
    proc = run_cli(
        "--data-dir", str(tmp_path / "empty"), "emotion", "classify", "--json", stdin="\n".join(TEXTS) + "\n"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(EXPECTED)  # empty and blank lines are skipped
    readings = [json.loads(line) for line in lines]
    assert [EKMAN_GROUP[r["label"]] for r in readings] == EXPECTED
    for r in readings:
        assert set(r) == {"label", "value", "confidence", "scores"}
        assert r["value"] == VALUES[r["label"]]
        assert set(r["scores"]) == set(LABELS)
        assert abs(sum(r["scores"].values()) - 1) < 1e-3
        assert r["confidence"] == max(r["scores"].values())
    assert readings[0]["value"] > 0 > readings[1]["value"]
    # No persona was needed, and none was created.
    assert not (tmp_path / "empty" / "personas").exists() or not any(
        (tmp_path / "empty" / "personas").iterdir()
    )


def test_readable_lines_name_the_feeling(tmp_path: Path) -> None:
    proc = run_cli("--data-dir", str(tmp_path), "emotion", "classify", stdin="疲れた…もう寝たい\n")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert line.startswith("tired") and "疲れた" in line


def test_emotion_without_an_action_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("--data-dir", str(tmp_path), "emotion")
    assert proc.returncode == 2
    assert "classify" in proc.stderr


# Issue 37's bar, through the command a script runs: looking forward in both languages is anticipation; a
# failure and a chest pain after a cheerful greeting are distress, never a happy reading.
@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("来週の旅行、今から楽しみで仕方ない!", {"anticipation"}),
        ("I can't wait for the concert tomorrow!", {"anticipation"}),
        ("Hi! I failed the exam and my chest has been hurting all day.", {"stressed", "sadness"}),
    ],
)
def test_the_issues_sentences_read_as_a_person_would(tmp_path: Path, text: str, labels: set[str]) -> None:
    proc = run_cli("--data-dir", str(tmp_path), "emotion", "classify", "--json", stdin=text + "\n")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert json.loads(line)["label"] in labels
