"""When a persona may write first: a pure decision on the drives, the persona's [autonomy] settings and
the time, so tests choose every input. The runtime asks before each autonomy check; the reason it returns
is stored with the message (or, for a "no", in the log), so the person can see why it wrote or stayed quiet.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from pydantic import BaseModel

from nexus_ark.mind.drives import DriveName, DriveReport
from nexus_ark.personas.model import AutonomySettings


class AutonomyDecision(BaseModel):
    send: bool
    reason: str  # why (not): in words, for the log and the message's "why" line
    drive: DriveName | None = None
    level: float | None = None


def parse_hours(text: str) -> tuple[time, time]:
    start, end = (part.strip() for part in text.split("-"))
    return time.fromisoformat(start), time.fromisoformat(end)


def in_quiet_hours(local: datetime, quiet_hours: str) -> bool:
    """Quiet hours "HH:MM-HH:MM" in the persona's local time; a span may cross midnight ("22:00-07:00")."""
    start, end = parse_hours(quiet_hours)
    now = local.time()
    if start == end:
        return False
    if start < end:
        return start <= now < end
    return now >= start or now < end


def decide(
    report: DriveReport,
    settings: AutonomySettings,
    local_now: datetime,
    *,
    last_sent: datetime | None,
    sent_today: int,
    typing: bool,
    paused: bool,
    unanswered: int = 0,
) -> AutonomyDecision:
    """Every rule that keeps a persona decent, in order; the first that says no is the reason."""
    if not settings.enabled:
        return AutonomyDecision(send=False, reason="autonomy is off for this persona")
    if paused:
        return AutonomyDecision(send=False, reason="autonomy is paused")
    if in_quiet_hours(local_now, settings.quiet_hours):
        return AutonomyDecision(send=False, reason=f"quiet hours ({settings.quiet_hours})")
    if typing:
        return AutonomyDecision(send=False, reason="the person is typing")
    if last_sent is not None and local_now - last_sent < timedelta(minutes=settings.cooldown_minutes):
        return AutonomyDecision(
            send=False, reason=f"cooldown ({settings.cooldown_minutes} min since the last one)"
        )
    if sent_today >= settings.daily_cap:
        return AutonomyDecision(send=False, reason=f"daily cap reached ({settings.daily_cap})")
    if unanswered >= settings.max_unanswered:
        return AutonomyDecision(
            send=False, reason=f"its last {unanswered} messages are unanswered: it waits for the person"
        )
    if report.dominant is None:
        return AutonomyDecision(send=False, reason="no drive is stirring")
    drive = report.drives[report.dominant]
    if not drive.over:
        return AutonomyDecision(
            send=False,
            reason=f"{report.dominant} {drive.level:.2f} is below its threshold {drive.threshold:.2f}",
            drive=report.dominant,
            level=drive.level,
        )
    return AutonomyDecision(
        send=True,
        reason=f"{report.dominant} {drive.level:.2f} ≥ {drive.threshold:.2f}: {report.narrative}",
        drive=report.dominant,
        level=drive.level,
    )
