"""`nexus-ark simulate`: a persona's life over simulated days, on the injectable clock.

The persona (its soul and settings; never its memory) is copied into a temporary data folder and run by the
same runtime the app uses: a scripted person talks on some days and not on others, the scheduler's tick runs
every quarter of an hour of simulated time, and the report says what the persona did on its own: dreams per
level, goals created and completed, open questions, messages it wrote first (when, which drive, why), the
planned events it carried out, and how the database grew day by day.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time as wall
from collections.abc import Callable, Iterator
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.memory.db import database_bytes
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.registry import BackendFactory, default_factory
from nexus_ark.runtime.autonomy import in_quiet_hours
from nexus_ark.runtime.life import tick
from nexus_ark.runtime.persona_runtime import PersonaRuntime
from nexus_ark.runtime.scripted_mind import ScriptedMind

SimModel = Literal["scripted", "bundled"]
TICK_MINUTES = 15

_LINES = {
    "en": [
        "Good morning! I slept badly, my sister Yui kept calling about her birthday.",
        "Work was long today. Kenji says the project deadline moved again.",
        "I have my pastry exam on Friday and I am nervous.",
        "Momo the cat knocked my tea over this morning, she is fine.",
        "Yui loved the blue bowl I made her in pottery class!",
        "I had a job interview today, I think it went well.",
        "Kenji and I went for ramen after work, it was nice to relax.",
        "I am tired but happy. The pottery class was fun tonight.",
    ],
    "ja": [
        "おはよう！妹のユイが誕生日のことで何度も電話してきて、よく眠れなかった。",
        "今日は仕事が長かった。ケンジがまた締め切りが延びたって。",
        "金曜日にお菓子の試験があって緊張している。",
        "猫のモモが朝お茶をこぼしたけど、元気だよ。",
        "ユイが陶芸教室で作った青いお皿を喜んでくれた！",
        "今日は面接があった。たぶんうまくいったと思う。",
        "仕事の後ケンジとラーメンを食べに行って、ほっとした。",
        "疲れたけど楽しかった。今夜の陶芸教室はよかった。",
    ],
}


def person_lines(language: str) -> list[str]:
    """What the simulated person may say, in `language` (ja or en)."""
    return _LINES[language]


class AutonomousEntry(BaseModel):
    time: str  # ISO-8601, the persona's local time
    drive: str | None
    level: float | None
    reason: str
    trigger: str
    text: str


class SimulationReport(BaseModel):
    """What `nexus-ark simulate --json` prints."""

    days: int
    model: str
    dreams: dict[str, int] = Field(default_factory=lambda: {"1": 0, "2": 0, "3": 0})
    autonomous_messages: list[AutonomousEntry] = Field(default_factory=list)
    goals: dict[str, int] = Field(default_factory=lambda: {"created": 0, "completed": 0})
    open_questions: int = 0
    events_processed: int = 0
    user_messages: int = 0
    db_bytes: list[int] = Field(default_factory=list)  # one per day, at the day's end
    quiet_hours: str = ""
    in_quiet_hours: int = 0  # autonomous messages written in quiet hours (must be 0)
    seconds: float = 0.0


def simulate(
    persona_folder: Path,
    days: int,
    *,
    model: SimModel = "scripted",
    seed: int = 7,
    start: datetime | None = None,
    talk_share: float = 0.6,
    progress: Callable[[int, SimulationReport], None] | None = None,
    work_dir: Path | None = None,
    at_end: Callable[[PersonaRuntime], None] | None = None,
) -> SimulationReport:
    """Run the persona in `persona_folder` (copied: the original is not touched) for `days` days.
    at_end: called with the runtime after the last day, before the copy is removed (tests look inside), on
    the persona's queue thread."""
    began = wall.monotonic()
    rng = random.Random(seed)
    local_tz = datetime.now().astimezone().tzinfo
    first = start or datetime.combine(datetime.now().date() + timedelta(days=1), time(0, 0), local_tz)
    clock = FixedClock(first)
    temp = copy_personas([persona_folder], "nexus-sim-", work_dir)
    slug = persona_folder.name
    app = NexusApp(temp, clock=clock, backend_factory=backends(model), shipped_personas=temp / "none")
    app.open()
    report = SimulationReport(days=days, model=model)
    try:
        runtime = app.personas.runtime(slug)
        persona = runtime.persona
        language = "ja" if persona.settings.language == "ja" else "en"
        report.quiet_hours = persona.settings.autonomy.quiet_hours

        def written(topic: str, payload: dict) -> None:
            reason = payload["reason"]
            report.autonomous_messages.append(
                AutonomousEntry(
                    time=reason["time"],
                    drive=reason.get("drive"),
                    level=reason.get("level"),
                    reason=reason.get("why", ""),
                    trigger=reason.get("trigger", ""),
                    text=payload["text"],
                )
            )
            report.in_quiet_hours += in_quiet_hours(
                datetime.fromisoformat(reason["time"]), report.quiet_hours
            )

        app.events.subscribe("autonomous_message", written)
        processed: list[int] = []
        app.events.subscribe("event_processed", lambda topic, payload: processed.append(payload["event"].id))
        lines = _LINES[language]
        for day, talking, day_over in quarter_hours(clock, first, days, rng, talk_share):
            if talking:
                for _ in range(rng.randint(2, 4)):
                    for _item in runtime.send(rng.choice(lines)):
                        pass
                    report.user_messages += 1
                    runtime.queue.wait_idle()
                    clock.advance(60)
            tick(runtime)
            runtime.queue.wait_idle()
            if day_over:
                report.db_bytes.append(runtime.queue.call("size", lambda: database_bytes(runtime.memory.db)))
                if progress is not None:
                    progress(day + 1, report)
        if at_end is not None:
            runtime.queue.call("look at the end", lambda: at_end(runtime))
        runtime.queue.call("count", lambda: _count(runtime.memory, report))
        report.events_processed = len(processed)
    finally:
        app.close()
        shutil.rmtree(temp, ignore_errors=True)
    report.seconds = round(wall.monotonic() - began, 1)
    return report


def copy_personas(folders: list[Path], prefix: str, work_dir: Path | None) -> Path:
    """A temporary data folder holding copies of the personas' soul and settings (never their memory)."""
    temp = Path(tempfile.mkdtemp(prefix=prefix, dir=work_dir))
    for folder in folders:
        target = temp / "personas" / folder.name
        target.mkdir(parents=True)
        for name in ("persona.md", "persona.toml"):
            if (folder / name).exists():
                shutil.copy2(folder / name, target / name)
    return temp


def backends(model: SimModel) -> BackendFactory:
    if model == "scripted":
        mind = ScriptedMind()
        return lambda config: mind  # one stand-in serves every persona and purpose
    return default_factory


def quarter_hours(
    clock: FixedClock, first: datetime, days: int, rng: random.Random, talk_share: float
) -> Iterator[tuple[int, bool, bool]]:
    """Each quarter hour of the simulated days, the clock moved there first: (day, whether the scripted
    person talks now, whether it is the day's last). The person talks the first day, later days by chance,
    at one to three moments between 8:00 and 22:00."""
    for day in range(days):
        day_start = first + timedelta(days=day)
        talks = day == 0 or rng.random() < talk_share
        slots = range(8 * 60, 22 * 60, TICK_MINUTES)
        talk_at = set(rng.sample(list(slots), k=rng.randint(1, 3))) if talks else set()
        for minute in range(0, 24 * 60, TICK_MINUTES):
            _move_to(clock, day_start + timedelta(minutes=minute))
            yield day, minute in talk_at, minute + TICK_MINUTES >= 24 * 60


def _move_to(clock: FixedClock, when: datetime) -> None:
    delta = (when - clock.now()).total_seconds()
    if delta > 0:
        clock.advance(delta)


def _count(memory: MemoryStore, report: SimulationReport) -> None:
    """What the days left in memory; on the persona's queue (the owner connection is used there only)."""
    for level, count in memory.dream_jobs.done_per_level().items():
        report.dreams[str(level)] = count
    report.goals["created"] = len(memory.components.goals(status=None))
    report.goals["completed"] = len(memory.components.goals(status="completed"))
    report.open_questions = len(memory.components.open_questions())
