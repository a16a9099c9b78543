"""`room create` refuses a room of one persona in words, through the real command line (it printed
pydantic's internals: "List should have at least 2 items after validation … RoomMemberSettings(…)")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("members", [["aria"], ["aria", "aria"]])
def test_a_room_of_one_persona_is_refused_in_words(data_dir: Path, members: list[str]) -> None:
    args = [a for m in members for a in ("--persona", m)]
    result = run_cli("--data-dir", str(data_dir), "room", "create", "Tea", *args)
    assert result.returncode == 2
    assert (
        "The room Tea cannot be made: a room needs 2 to 6 different personas, not 1 (aria)." in result.stderr
    )
    for internal in ("List should have", "RoomMemberSettings", "validation"):
        assert internal not in result.stderr
    assert result.stdout == ""
    listed = run_cli("--data-dir", str(data_dir), "room", "list")
    assert "Tea" not in listed.stdout, "nothing was made"


def test_a_room_of_two_is_made(data_dir: Path) -> None:
    result = run_cli(
        "--data-dir", str(data_dir), "room", "create", "Tea", "--persona", "aria", "--persona", "hikari"
    )
    assert result.returncode == 0, result.stderr
    assert "Tea" in run_cli("--data-dir", str(data_dir), "room", "list").stdout
