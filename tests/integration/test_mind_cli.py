"""`nexus-ark goals`, `questions` and `drives` as a script would use them (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

from nexus_ark.memory.components import OpenQuestion
from nexus_ark.memory.store import MemoryStore
from tests.conftest import run_cli


def cli(data_dir: Path, *args: str):
    return run_cli("--data-dir", str(data_dir), *args)


def test_goals_and_questions_round_trip_and_move_the_drives(data_dir: Path):
    added = cli(data_dir, "goals", "--persona", "aria", "add", "--priority", "1", "Learn Mika's exam date")
    assert added.returncode == 0, added.stderr
    goal_id = added.stdout.strip()
    drives = json.loads(cli(data_dir, "drives", "--persona", "aria", "--json").stdout)
    assert drives["drives"]["goal_achievement"]["inputs"]["goal_id"] == goal_id
    assert drives["dominant"] == "goal_achievement" and "Learn Mika's exam date" in drives["narrative"]

    assert cli(data_dir, "goals", "--persona", "aria", "progress", goal_id, "asked on Monday").returncode == 0
    assert (
        cli(data_dir, "goals", "--persona", "aria", "complete", goal_id, "it is on the 3rd").returncode == 0
    )
    (goal,) = [
        json.loads(line)
        for line in cli(data_dir, "goals", "--persona", "aria", "list", "--all", "--json").stdout.splitlines()
    ]
    assert goal["status"] == "completed" and goal["progress_notes"] == ["asked on Monday", "it is on the 3rd"]
    empty = cli(data_dir, "goals", "--persona", "aria", "add", "  ")
    assert empty.returncode == 2 and "empty" in empty.stderr

    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db", role="peer")
    first = store.components.add_question(OpenQuestion(question="Does Mika like rain?", priority=0.9))
    second = store.components.add_question(OpenQuestion(question="What is Yui's favourite pasta?"))
    store.close()
    listed = cli(data_dir, "questions", "--persona", "aria", "list").stdout.splitlines()
    assert [line.split("\t")[0] for line in listed] == [str(first), str(second)]
    assert cli(data_dir, "questions", "--persona", "aria", "resolve", str(first)).returncode == 0
    assert cli(data_dir, "questions", "--persona", "aria", "delete", str(second)).returncode == 0
    assert cli(data_dir, "questions", "--persona", "aria", "list").stdout == ""
    (resolved,) = [
        json.loads(x)
        for x in cli(
            data_dir, "questions", "--persona", "aria", "list", "--all", "--json"
        ).stdout.splitlines()
    ]
    assert resolved["resolved_by"] == "user"
    missing = cli(data_dir, "questions", "--persona", "aria", "delete", "99")
    assert missing.returncode == 2 and "no open question 99" in missing.stderr

    readable = cli(data_dir, "drives", "--persona", "aria", "--no-record")
    assert readable.returncode == 0 and "dominant:" in readable.stdout
    history = MemoryStore(data_dir / "personas" / "aria" / "memory.db", role="reader")
    assert history.db.execute("select count(*) from drive_history").fetchone()[0] == 1, (
        "--no-record wrote nothing"
    )
    history.close()
