"""A kill -9 while the person accepts a soul proposal (issue 25): persona.md is the old soul or the new one,
byte for byte, never a mix; the next open finishes the change, and the history holds it once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from tests.integration.soul_crash_child import NEW_TEXT

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("point", ["before_file", "mid_write", "after_file"])
def test_a_kill_during_accept_leaves_the_old_or_the_new_soul_and_the_next_open_finishes_it(
    tmp_path: Path, point: str
) -> None:
    data = tmp_path / "data"
    with NexusApp(data) as app:
        app.personas.runtime("aria")
        soul = app.personas.load("aria").folder / "persona.md"
        old = soul.read_bytes()
    child = subprocess.run(
        [sys.executable, "-m", "tests.integration.soul_crash_child", str(data), point],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -9, child.stderr[-2000:]
    assert "PROPOSAL" in child.stdout and "NOT KILLED" not in child.stdout
    new = old.decode("utf-8").replace(
        "- Short, natural replies in English, like a message from a friend.\n"
        "- One question at a time; never a lecture.\n",
        NEW_TEXT + "\n",
    )
    assert soul.read_bytes() in (old, new.encode("utf-8"))  # whole, one or the other
    with NexusApp(data) as app:
        versions = app.souls.versions("aria")
        assert soul.read_bytes() == new.encode("utf-8")  # the accepted change, finished at open
        assert [v.author for v in versions] == ["first", "proposal"]
        assert versions[-1].applied and versions[-1].text == new
        [proposal] = app.souls.proposals("aria")
        assert proposal.state == "accepted" and proposal.version_id == versions[-1].id
        assert NEW_TEXT in app.personas.load("aria").soul
    assert not list(soul.parent.glob("persona.md.*.tmp"))  # no half-written file left beside it
