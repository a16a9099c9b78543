"""The inbox names the room a message written first went to (issue 24)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.life.inbox_window import InboxWindow
from ui.util import i18n

NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # quiet hours and the day's plan are read in local time
    time.tzset()


def test_a_message_written_first_in_a_room_is_listed_with_the_rooms_name(qtbot, data_dir: Path) -> None:
    clock = FixedClock(NOON - timedelta(days=3))
    core = NexusApp(data_dir, clock=clock, backend_factory=lambda config: ScriptedMind()).open()
    i18n.set_language("en")
    try:
        room = core.rooms.open(core.rooms.create("Tea time", ["aria", "hikari"], strategy="manual"))
        try:
            list(room.say("I am off on a trip, see you both soon."))
        finally:
            room.close()
        clock.advance(3 * 24 * 3600)
        runtime = core.personas.runtime("aria")
        tick(runtime)
        for _ in range(2):
            assert runtime.queue.wait_idle(60)
        inbox = InboxWindow(core, {"aria": "Aria", "hikari": "ひかり"})
        qtbot.addWidget(inbox)
        qtbot.waitUntil(lambda: inbox.tree.topLevelItemCount() == 1, timeout=10_000)
        assert inbox.tree.topLevelItem(0).text(0) == "Aria · Tea time"
        inbox.close()
    finally:
        core.close()
