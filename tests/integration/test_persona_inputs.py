"""Bad persona input where a user meets it: the real CLI in a fresh process, a temporary data dir.

Each case: a clear message naming the field or file, exit code 2 for a refusal, nothing lost or half made.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import cli_command, subprocess_env

pytestmark = pytest.mark.integration

SHIPPED = ["aria", "hikari"]


def run_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command("--data-dir", str(data_dir), *args),
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(),
        encoding="utf-8",
    )


def listed(data_dir: Path) -> list[list[str]]:
    proc = run_cli(data_dir, "persona", "list")
    assert proc.returncode == 0, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


def test_a_300_character_name_is_refused_with_field_and_limit(data_dir: Path) -> None:
    assert [row[0] for row in listed(data_dir)] == SHIPPED
    proc = run_cli(data_dir, "persona", "create", "N" * 300)
    assert proc.returncode == 2
    assert "name" in proc.stderr and "at most 80 characters" in proc.stderr
    assert "300 characters" in proc.stderr
    assert "pydantic" not in proc.stderr and "https://" not in proc.stderr and "N" * 100 not in proc.stderr
    assert "Traceback" not in proc.stderr
    assert [row[0] for row in listed(data_dir)] == SHIPPED, "nothing was created"


@pytest.mark.parametrize("name", ["Mi\tka", "Mi\nka", "Mika\x1b[31m"])
def test_a_name_that_would_break_the_list_is_refused(data_dir: Path, name: str) -> None:
    proc = run_cli(data_dir, "persona", "create", name)
    assert proc.returncode == 2, proc.stdout
    assert "name" in proc.stderr and "one line" in proc.stderr
    assert [row[0] for row in listed(data_dir)] == SHIPPED, "nothing was created"


def _windows_refuses(folder_name: str) -> bool:
    reserved = {"con", "prn", "aux", "nul"} | {f"{d}{n}" for d in ("com", "lpt") for n in "0123456789¹²³"}
    stem = folder_name.split(".")[0].rstrip(" ").lower()
    return not folder_name or folder_name[-1] in ". " or stem in reserved


def test_windows_reserved_names_become_folders_every_os_can_create(data_dir: Path) -> None:
    names = ["CON", "nul", "COM1", "con.txt", "aux.", "LPT9 "]
    slugs = []
    for name in names:
        proc = run_cli(data_dir, "persona", "create", name)
        assert proc.returncode == 0, proc.stderr
        slug = proc.stdout.strip()
        assert not _windows_refuses(slug), (name, slug)
        assert (data_dir / "personas" / slug / "persona.md").is_file()
        slugs.append(slug)
    rows = {row[0]: row for row in listed(data_dir)}
    shown = [rows[slug][1] for slug in slugs]
    assert shown == [name.strip() for name in names], "each listed under its own name"


def test_a_deleted_soul_is_said_in_the_list_and_by_doctor(data_dir: Path) -> None:
    listed(data_dir)  # first start: the shipped personas are copied
    (data_dir / "personas" / "aria" / "persona.md").unlink()
    proc = run_cli(data_dir, "persona", "list")
    assert proc.returncode == 0, proc.stderr
    assert [line.split("\t")[0] for line in proc.stdout.splitlines()] == SHIPPED
    assert re.search(r"warning: aria: persona\.md is missing", proc.stderr), proc.stderr
    assert "hikari" not in proc.stderr

    doctor = run_cli(data_dir, "doctor")
    line = next(line for line in doctor.stdout.splitlines() if re.match(r"\w+\s+personas\s", line))
    assert line.startswith("warn") and "aria: persona.md is missing" in line


def test_list_stays_one_line_per_persona_whatever_the_files_hold(data_dir: Path) -> None:
    listed(data_dir)
    personas = data_dir / "personas"
    # A hand-edited name with a tab, a multi-line description, and a file with two invalid fields
    # (whose error message has several lines).
    (personas / "tabbed").mkdir()
    (personas / "tabbed" / "persona.toml").write_text('name = "Ta\\tb"\n', encoding="utf-8")
    (personas / "aria" / "persona.toml").write_text(
        'name = "Aria"\ndescription = """two\nlines"""\n', encoding="utf-8"
    )
    (personas / "broken").mkdir()
    (personas / "broken" / "persona.toml").write_text(
        'name = "B"\nlanguage = "fr"\n[model]\ntemperature = "hot"\n', encoding="utf-8"
    )
    rows = listed(data_dir)
    assert [row[0] for row in rows] == ["aria", "broken", "hikari", "tabbed"]
    assert all(len(row) == 4 for row in rows), rows
    by_slug = {row[0]: row for row in rows}
    assert by_slug["aria"][3] == "two lines"
    assert by_slug["broken"][1] == "(unusable)"
    assert "language" in by_slug["broken"][3] and "model.temperature" in by_slug["broken"][3]
    assert by_slug["tabbed"][1] == "(unusable)" and "one line" in by_slug["tabbed"][3]
    assert (personas / "broken" / "persona.toml").read_text(encoding="utf-8").startswith('name = "B"')


def test_commands_write_the_log_file_the_readme_names(data_dir: Path) -> None:
    refused = run_cli(data_dir, "persona", "create", "N" * 300)
    assert refused.returncode == 2
    log = (data_dir / "logs" / "nexus-ark.log").read_text(encoding="utf-8")
    assert "persona" in log and "at most 80 characters" in log
