"""Names and values too long to echo, through the command line (issue 33, items 5 and 8): a persona or room
name of 300 characters (as typed, or as a member in room.toml) is "no such persona", never an uncaught
OSError "File name too long"; a 10 MB model spec in persona.toml is quoted cut in `persona list`, on
stderr and in the log, not 10 MB at each chat."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomli_w

from tests.conftest import run_cli

pytestmark = pytest.mark.integration

LONG = "a" * 300


@pytest.mark.parametrize(
    "command",
    [
        ["drives", "--persona", LONG],
        ["chat", "--persona", LONG],
        ["memory", "search", "--persona", LONG, "cats"],
        ["persona", "export", LONG, "card.png"],
        ["chat", "--room", LONG],
    ],
    ids=["drives", "chat", "memory", "export", "room"],
)
def test_a_name_of_300_characters_is_no_persona_or_room(data_dir: Path, command: list[str]) -> None:
    proc = run_cli("--data-dir", str(data_dir), *command, stdin="hi\n")
    assert "Traceback" not in proc.stderr and "File name too long" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2, proc.stderr
    assert "There is no persona" in proc.stderr or "There is no room" in proc.stderr
    assert len(proc.stderr) < 2_000


def test_a_room_member_of_300_characters_is_named_no_persona(data_dir: Path) -> None:
    data = str(data_dir)
    created = run_cli("--data-dir", data, "room", "create", "Tea", "--persona", "aria", "--persona", "hikari")
    assert created.returncode == 0, created.stderr
    room = created.stdout.strip()
    toml = data_dir / "rooms" / room / "room.toml"
    settings = tomllib.loads(toml.read_text("utf-8"))
    settings["members"][1]["persona"] = LONG
    toml.write_text(tomli_w.dumps(settings), "utf-8")
    listed = run_cli("--data-dir", data, "room", "list")
    chat = run_cli("--data-dir", data, "chat", "--room", room, stdin="hi\n")
    for proc in (listed, chat):
        assert "Traceback" not in proc.stderr and "File name too long" not in proc.stderr, proc.stderr[-2000:]
    assert listed.returncode == 0
    assert chat.returncode == 2 and "There is no persona" in chat.stderr, chat.stderr[-2000:]


def test_a_ten_megabyte_spec_is_quoted_cut_in_the_list_on_stderr_and_in_the_log(data_dir: Path) -> None:
    data = str(data_dir)
    assert run_cli("--data-dir", data, "persona", "list").returncode == 0
    toml = data_dir / "personas" / "aria" / "persona.toml"
    settings = tomllib.loads(toml.read_text("utf-8"))
    settings["model"]["spec"] = "x" * 10_000_000
    toml.write_text(tomli_w.dumps(settings), "utf-8")
    listed = run_cli("--data-dir", data, "persona", "list")
    chat = run_cli("--data-dir", data, "chat", "--persona", "aria", stdin="hi\n")
    assert listed.returncode == 0 and "aria" in listed.stdout and "model.spec" in listed.stdout
    assert len(listed.stdout) + len(listed.stderr) < 5_000
    assert chat.returncode == 2 and "model.spec" in chat.stderr and len(chat.stderr) < 2_000
    assert (data_dir / "logs" / "nexus-ark.log").stat().st_size < 20_000
