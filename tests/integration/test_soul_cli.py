"""`nexus-ark soul` as a person or a script uses it (issue 25): on the bundled model a monthly dream never
proposes a change to the soul; a proposal is listed, shown as a diff, accepted with the person's edit from
a file or declined; the history lists every version, shows one byte for byte, diffs two and restores one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.integration

CONVERSATION = REPO / "tests" / "data" / "dream_days.jsonl"


def _soul(data_dir: Path, *args: str):
    return run_cli("--data-dir", str(data_dir), "soul", *args, "--persona", "aria")


def test_a_monthly_dream_on_the_bundled_model_never_proposes_a_change_to_the_soul(data_dir: Path):
    assert (
        run_cli(
            "--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(CONVERSATION)
        ).returncode
        == 0
    )
    soul = data_dir / "personas" / "aria" / "persona.md"
    before = soul.read_bytes()
    proc = run_cli(
        "--data-dir",
        str(data_dir),
        "dream",
        "--persona",
        "aria",
        "--level",
        "3",
        "--date",
        "2026-11-22",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["stages"]["soul"] == "skipped: reflection needs a larger model"
    assert result["soul_proposal"] is None
    listed = _soul(data_dir, "proposals", "--all")
    assert listed.returncode == 0 and listed.stdout == ""
    assert soul.read_bytes() == before
    history = _soul(data_dir, "history").stdout.splitlines()
    assert len(history) == 1 and history[0].split("\t")[2] == "first"


def test_proposals_and_history_from_the_command_line(data_dir: Path, tmp_path: Path):
    with NexusApp(data_dir) as app:
        runtime = app.personas.runtime("aria")
        voice = runtime.soul.call(
            "p",
            lambda k: k.propose(
                "How you speak", "- In haiku, now and then.", "The person asked.", [], "tool"
            ),
        )
        joys = runtime.soul.call(
            "p", lambda k: k.propose("Small joys", "- Rain.", "We talked of rain.", [], "tool")
        )
        soul = app.personas.load("aria").folder / "persona.md"
    original = soul.read_bytes()

    listed = _soul(data_dir, "proposals")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (str(joys.id), "open", "Small joys", "tool"),
        (str(voice.id), "open", "How you speak", "tool"),
    ]
    shown = _soul(data_dir, "proposals", "show", str(voice.id))
    assert "+- In haiku, now and then." in shown.stdout and "-- One question at a time" in shown.stdout

    edit = tmp_path / "edit.md"
    edit.write_text("- In haiku, when the person asks.\n", encoding="utf-8")
    accepted = _soul(data_dir, "proposals", "accept", str(voice.id), "--text-file", str(edit))
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["state"] == "accepted"
    text = soul.read_text(encoding="utf-8")
    assert "## How you speak\n- In haiku, when the person asks.\n" in text and "never a lecture" not in text

    declined = _soul(data_dir, "proposals", "decline", str(joys.id))
    assert json.loads(declined.stdout) == {"id": joys.id, "state": "declined"}
    assert "Small joys" not in soul.read_text(encoding="utf-8")

    history = [line.split("\t") for line in _soul(data_dir, "history").stdout.splitlines()]
    assert [h[2] for h in history] == ["first", "proposal"]
    diff = _soul(data_dir, "diff", "1")
    assert "+- In haiku, when the person asks." in diff.stdout.splitlines()
    restored = _soul(data_dir, "restore", "1")
    assert restored.returncode == 0 and restored.stdout.strip() == "3"
    assert soul.read_bytes() == original
    shown_first = run_cli("--data-dir", str(data_dir), "soul", "show", "1", "--persona", "aria")
    assert shown_first.stdout.encode("utf-8") == original

    missing = _soul(data_dir, "show", "99")
    assert missing.returncode == 2 and "There is no soul version 99." in missing.stderr
    no_id = _soul(data_dir, "proposals", "accept")
    assert no_id.returncode == 2 and "needs the proposal's ID" in no_id.stderr
    again = _soul(data_dir, "proposals", "accept", str(joys.id))
    assert again.returncode == 2 and "was declined already" in again.stderr
