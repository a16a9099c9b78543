"""`nexus-ark persona import CARD` and `persona export NAME [--format png|json] OUT` as scripts run them: a
fresh process each time, a temporary data folder, the fixtures in tests/data/cards. No model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

from nexus_ark.personas.cards import read_card_file
from tests.conftest import run_cli

CARDS = Path(__file__).resolve().parents[1] / "data" / "cards"


def _list(data_dir: Path) -> list[list[str]]:
    proc = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert proc.returncode == 0, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


def test_import_export_and_import_again_from_the_command_line(data_dir: Path, tmp_path: Path) -> None:
    base = ["--data-dir", str(data_dir), "persona"]
    proc = run_cli(*base, "import", str(CARDS / "seraphina_v2.png"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "seraphina-vale\n"  # what --persona takes, alone on stdout
    assert "3 greetings, 2 lore entries in memory, 1 always in the soul, avatar.png" in proc.stderr
    assert _list(data_dir)[2][:3] == ["seraphina-vale", "Seraphina Vale", "en"]

    proc = run_cli(*base, "export", "seraphina-vale", "--format", "json", str(tmp_path / "card.json"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "card.json")
    card = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert (card["spec"], card["data"]["name"]) == ("chara_card_v3", "Seraphina Vale")
    assert [e["keys"] for e in card["data"]["character_book"]["entries"]][:2] == [
        ["Eldoria", "floating isles"],
        ["lunar pendant", "moonstone"],
    ]

    proc = run_cli(*base, "export", "seraphina-vale", str(tmp_path))  # a folder: NAME.png in it, PNG
    assert proc.returncode == 0, proc.stderr
    png = tmp_path / "seraphina-vale.png"
    assert proc.stdout.strip() == str(png)
    assert read_card_file(png).spec == "chara_card_v3"

    proc = run_cli(*base, "import", str(png))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "seraphina-vale-2\n"
    folder = data_dir / "personas"
    assert (folder / "seraphina-vale-2" / "persona.md").read_text(encoding="utf-8") == (
        folder / "seraphina-vale" / "persona.md"
    ).read_text(encoding="utf-8")


def test_bad_card_and_unknown_persona_exit_2_with_the_reason(data_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"spec": "chara_card_v2", "data": {"name": "A", "tags": "x"}}), encoding="utf-8"
    )
    proc = run_cli("--data-dir", str(data_dir), "persona", "import", str(bad))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "error: bad.json: field 'data.tags': Input should be a valid list" in proc.stderr
    assert [row[0] for row in _list(data_dir)] == ["aria", "hikari"]

    proc = run_cli("--data-dir", str(data_dir), "persona", "export", "nobody", str(tmp_path / "x.png"))
    assert proc.returncode == 2
    assert "There is no persona 'nobody'" in proc.stderr
    assert not (tmp_path / "x.png").exists()


def test_export_to_a_folder_that_is_not_there_is_refused_not_written_as_a_file(
    data_dir: Path, tmp_path: Path
) -> None:
    """Issue 23: `persona export NAME dir/` with dir missing wrote a file named `dir`."""
    missing = tmp_path / "cards"
    proc = run_cli("--data-dir", str(data_dir), "persona", "export", "aria", f"{missing}/")
    assert proc.returncode == 2 and "the folder" in proc.stderr and "does not exist" in proc.stderr
    assert not missing.exists()
    missing.mkdir()
    proc = run_cli("--data-dir", str(data_dir), "persona", "export", "aria", f"{missing}/")
    assert proc.returncode == 0 and (missing / "aria.png").is_file()
