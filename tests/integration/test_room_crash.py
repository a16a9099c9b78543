"""A room answer cut by a kill (issue 33, item 4): it stayed, interrupted, in its author's memory but never
reached the room's journal or the other members. Now, as a conversation alone keeps a cut reply, the next
open journals it as far as it was said, and every other member hears it, once. A real kill -9 of a child
process (tests/integration/room_crash_child.py) while Aria's answer streams (a scripted answer, streamed
slowly: the bundled model's could end within the second)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nexus_ark.agent.room_turn import ROOM_SOURCE
from nexus_ark.app import NexusApp
from nexus_ark.rooms.conversation import room_key
from tests.conftest import REPO, subprocess_env
from tests.integration.room_crash_child import ASK

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _kill_mid_answer(data_dir: Path) -> str:
    """Run the child, kill it (-9) once Aria's answer has streamed for a second; returns the room's slug."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.room_crash_child", str(data_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=subprocess_env(),
    )
    try:
        room, line, deadline = "", "", time.monotonic() + 600
        while time.monotonic() < deadline and line.strip() not in ("READY", "COMPLETE"):
            line = child.stdout.readline()
            if line.startswith("ROOM "):
                room = line.split()[1]
            if not line and child.poll() is not None:
                pytest.fail(f"the child ended early: {child.stderr.read()[-2000:]}")
        assert line.strip() == "READY", "the answer ended within a second: nothing to cut (make it longer)"
        child.send_signal(signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    return room


def test_an_answer_cut_by_a_kill_reaches_the_journal_and_every_other_member_once(data_dir: Path) -> None:
    room = _kill_mid_answer(data_dir)
    key = room_key(room)
    for _ in range(2):  # opened twice: the second open adds nothing
        with NexusApp(data_dir) as app:
            conversation = app.rooms.open(room)
            lines = conversation.lines()
            conversation.close()
            cut = app.personas.change_memory(
                "aria", "look", lambda s: [m for m in s.messages.recent(key, 50) if m.role == "assistant"]
            )
            heard = app.personas.change_memory("hikari", "look", lambda s: s.messages.recent(key, 50))
        assert lines[0].text == ASK
        [said] = cut
        assert said.status == "interrupted" and said.content.strip(), "Aria's words so far, kept"
        [journaled] = [line for line in lines if line.author == "aria"]
        assert (journaled.text, journaled.reply_id) == (said.content, said.id)
        source = ROOM_SOURCE.format(room=key, key=journaled.key)
        assert [m.content for m in heard if m.source_id == source] == [said.content], "ひかり heard it once"
