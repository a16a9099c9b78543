"""The nastiest inputs of the fuzz bar (tests/core/test_boundary_fuzz.py runs thousands in-process) through
the command line as a script runs it, a fresh process each: never a traceback on stderr, a refusal exits 2
naming the file and field, an import with bad parts exits 1 naming each and keeps the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cards_maker import v3_card
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parent.parent / "data"


def _card_with_raw(path: Path, raw: str) -> Path:
    """shizuku's card with data.extensions.x set to the JSON text `raw`, as it is."""
    card = v3_card()
    card["data"]["extensions"]["x"] = "@@"
    path.write_text(json.dumps(card).replace('"@@"', raw), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("7" * 5000, "field 'data.extensions.x' holds a number of more than 4,300 digits"),
        ("[" * 900 + "]" * 900, "is nested more than 100 levels deep"),
    ],
    ids=["5000-digits", "900-deep"],
)
def test_a_card_python_cannot_keep_exits_2_naming_the_file_and_field(
    data_dir: Path, tmp_path: Path, raw: str, said: str
) -> None:
    card = _card_with_raw(tmp_path / "nasty.json", raw)
    proc = run_cli("--data-dir", str(data_dir), "persona", "import", str(card))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2 and proc.stdout == ""
    assert "nasty.json" in proc.stderr and said in proc.stderr, proc.stderr


def test_a_card_with_a_huge_integer_spec_version_imports(data_dir: Path, tmp_path: Path) -> None:
    card = v3_card()
    card["spec_version"] = int("9" * 400)
    path = tmp_path / "version.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    proc = run_cli("--data-dir", str(data_dir), "persona", "import", str(path))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "newer than 3.0" in proc.stderr


def test_jsonl_with_unreadable_lines_exits_1_naming_each_and_keeps_the_rest(
    data_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "turns.jsonl"
    good = {
        "id": "g1",
        "speaker": "Mika",
        "text": "I adopted a cat named Miso.",
        "timestamp": "2026-01-01T10:00:00",
    }
    odd = {"id": "g2", "speaker": "Mika\ud800", "text": "half a pair", "timestamp": "2026-01-01T10:00:09"}
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                '{"id": "d", "text": ' + "[" * 5000 + "]" * 5000 + "}",
                '{"id": "n", "text": ' + "1" * 5000 + "}",
                json.dumps(odd),
            ]
        )
        + "\n",
        encoding="ascii",
    )
    proc = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(path))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert f"{path}:2:" in proc.stderr and f"{path}:3:" in proc.stderr
    assert proc.stdout.startswith("imported 2 turns (0 already there, 2 bad lines)"), proc.stdout


def test_a_config_too_big_to_quote_exits_2_naming_the_file(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text("font_size = 0x" + "f" * 5000 + "\n", encoding="utf-8")
    proc = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2
    assert (
        "config.toml" in proc.stderr
        and "font_size" in proc.stderr
        and "more than 4,300 digits" in proc.stderr
    )
    assert len(proc.stderr) < 1_000
