"""`nexus-ark simulate --persona A --persona B`: a room of personas through simulated days (issue 24).

The members are copied into a temporary data folder (the originals are not touched) and live on a fixed
clock: the scripted person speaks in the room on some days (seeded), turn-taking picks who answers, every
member's scheduled life runs each quarter hour (a message written first lands in the room when the person
last spoke there). Reported: who answered, who wrote first, the journal's length, each member's memory size.
"""

from __future__ import annotations

import random
import shutil
import time as wall
from datetime import datetime, time, timedelta
from functools import partial
from pathlib import Path

from pydantic import BaseModel, Field

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.memory.db import database_bytes
from nexus_ark.rooms.conversation import Answered, room_key
from nexus_ark.rooms.turn_taking import Strategy
from nexus_ark.runtime.life import tick
from nexus_ark.simulation import SimModel, backends, copy_personas, person_lines, quarter_hours


class RoomSimulationReport(BaseModel):
    days: int
    model: SimModel
    members: list[str]
    person_messages: int = 0
    answers: dict[str, int] = Field(default_factory=dict)  # by member
    written_first: dict[str, int] = Field(default_factory=dict)  # in the room, by member
    journal_lines: int = 0
    db_bytes: dict[str, int] = Field(default_factory=dict)  # each member's memory.db at the end
    seconds: float = 0.0


def simulate_room(
    persona_folders: list[Path],
    days: int,
    *,
    model: SimModel = "scripted",
    seed: int = 7,
    strategy: Strategy = "natural",
    talk_share: float = 0.6,
    start: datetime | None = None,
    work_dir: Path | None = None,
) -> RoomSimulationReport:
    began = wall.monotonic()
    rng = random.Random(seed)
    local_tz = datetime.now().astimezone().tzinfo
    first = start or datetime.combine(datetime.now().date() + timedelta(days=1), time(0, 0), local_tz)
    clock = FixedClock(first)
    temp = copy_personas(persona_folders, "nexus-room-sim-", work_dir)
    slugs = [folder.name for folder in persona_folders]
    app = NexusApp(temp, clock=clock, backend_factory=backends(model), shipped_personas=temp / "none").open()
    report = RoomSimulationReport(
        days=days,
        model=model,
        members=slugs,
        answers=dict.fromkeys(slugs, 0),
        written_first=dict.fromkeys(slugs, 0),
    )
    try:
        slug = app.rooms.create("Simulated room", slugs, strategy)
        key = room_key(slug)

        def written(topic: str, payload: dict) -> None:
            if payload.get("room") == key:
                report.written_first[payload["persona"]] += 1

        app.events.subscribe("autonomous_message", written)
        room = app.rooms.open(slug, random.Random(seed))
        runtimes = [app.personas.runtime(s) for s in slugs]
        language = "ja" if runtimes[0].persona.settings.language == "ja" else "en"

        def settle() -> None:
            for _ in range(2):  # what a step queued, then what that queued
                for runtime in runtimes:
                    runtime.queue.wait_idle()

        try:
            for _day, talking, _ in quarter_hours(clock, first, days, rng, talk_share):
                if talking:
                    for _ in range(rng.randint(1, 3)):
                        for event in room.say(rng.choice(person_lines(language))):
                            if isinstance(event, Answered):
                                report.answers[event.slug] += 1
                        report.person_messages += 1
                        settle()
                        clock.advance(60)
                for runtime in runtimes:
                    tick(runtime)
                settle()
            report.journal_lines = len(room.lines(limit=1_000_000))
        finally:
            room.close()
        for runtime in runtimes:
            report.db_bytes[runtime.slug] = runtime.queue.call(
                "size", partial(database_bytes, runtime.memory.db)
            )
    finally:
        app.close()
        shutil.rmtree(temp, ignore_errors=True)
    report.seconds = round(wall.monotonic() - began, 1)
    return report
