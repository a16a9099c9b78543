"""When a persona may write first: a pure decision on the drives, the persona's [autonomy] settings and
the time, so tests choose every input. The runtime asks before each autonomy check; the reason it returns
is stored with the message (or, for a "no", in the log), so the person can see why it wrote or stayed quiet.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from pydantic import BaseModel, SkipValidation

from nexus_ark.mind.drives import DriveName, DriveReport, drive_word
from nexus_ark.notices import notice
from nexus_ark.personas.model import AutonomySettings


class AutonomyDecision(BaseModel):
    send: bool
    reason: SkipValidation[str]  # why (not): in words (a notice), for the log and the message's "why" line
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
        return AutonomyDecision(send=False, reason=notice("autonomy is off for this persona"))
    if paused:
        return AutonomyDecision(send=False, reason=notice("autonomy is paused"))
    if in_quiet_hours(local_now, settings.quiet_hours):
        return AutonomyDecision(
            send=False, reason=notice("quiet hours ({hours})", hours=settings.quiet_hours)
        )
    if typing:
        return AutonomyDecision(send=False, reason=notice("the person is typing"))
    if last_sent is not None and local_now - last_sent < timedelta(minutes=settings.cooldown_minutes):
        return AutonomyDecision(
            send=False,
            reason=notice("cooldown ({minutes} min since the last one)", minutes=settings.cooldown_minutes),
        )
    if sent_today >= settings.daily_cap:
        return AutonomyDecision(
            send=False, reason=notice("daily cap reached ({cap})", cap=settings.daily_cap)
        )
    if unanswered >= settings.max_unanswered:
        return AutonomyDecision(
            send=False,
            reason=notice(
                "its last {count} messages are unanswered: it waits for the person", count=unanswered
            ),
        )
    if report.dominant is None:
        return AutonomyDecision(send=False, reason=notice("no drive is stirring"))
    drive = report.drives[report.dominant]
    if not drive.over:
        return AutonomyDecision(
            send=False,
            reason=notice(
                "{drive} {level:.2f} is below its threshold {threshold:.2f}",
                drive=drive_word(report.dominant),
                level=drive.level,
                threshold=drive.threshold,
            ),
            drive=report.dominant,
            level=drive.level,
        )
    return AutonomyDecision(
        send=True,
        reason=notice(
            "{drive} {level:.2f} ≥ {threshold:.2f}: {narrative}",
            drive=drive_word(report.dominant),
            level=drive.level,
            threshold=drive.threshold,
            narrative=report.narrative,
        ),
        drive=report.dominant,
        level=drive.level,
    )
