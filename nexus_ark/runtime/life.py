"""What a persona does on its own: the scheduled jobs, its planned events, and writing first.

The scheduler calls tick() (every minute in the app; simulate calls it on its own clock). tick() asks the pure
schedule (runtime.schedule.due_jobs) what is due and queues each job as background work with its name as the
key, so a job never overlaps itself; each records when it ran (job_runs), so a restart neither repeats it nor
forgets a run it missed. Due events (the persona's emit_event plans) are processed outside quiet hours. Every
message the persona writes first goes through one path (write_first): its full internal state in the prompt,
the reason stored with the message, an inbox row, a core event and a desktop notification.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from nexus_ark.agent.session import ChatSession, TurnResult
from nexus_ark.clock import iso
from nexus_ark.errors import NexusArkError
from nexus_ark.memory import retention
from nexus_ark.memory.backups import backup_if_due
from nexus_ark.memory.event_queue import QueuedEvent
from nexus_ark.memory.room_keys import is_room_key
from nexus_ark.mind.drives import DEVOTION_WINDOW_H, DriveReport
from nexus_ark.mind.narrative import internal_state
from nexus_ark.notices import notice
from nexus_ark.prompts.life import DRIVE_PROMPTS, PLANNED, WRITE_FIRST
from nexus_ark.providers.base import model_priority
from nexus_ark.runtime.autonomy import AutonomyDecision, decide, in_quiet_hours
from nexus_ark.runtime.first_words import first_message
from nexus_ark.runtime.schedule import due_jobs, read_state, record_run
from nexus_ark.runtime.work_queue import BACKGROUND, WorkItem

if TYPE_CHECKING:
    from nexus_ark.runtime.persona_runtime import PersonaRuntime

log = logging.getLogger(__name__)

EVENTS_PER_TICK = 3  # a backlog of planned events (after a long sleep) comes a few at a time
# What made the persona write, as the timeline names it (translated where it is shown).
_TRIGGER_WORDS = {
    "drive": notice("drive"),
    "heartbeat": notice("heartbeat"),
    "event": notice("event"),
    "routine": notice("routine"),
}
# The write-first instructions under the names bench/small_model_turns.py reads them by.
_WRITE_FIRST, _DRIVE_PROMPTS = WRITE_FIRST, DRIVE_PROMPTS


def tick(rt: PersonaRuntime) -> WorkItem | None:
    """Queue a look at what is due now (from any thread: the scheduler's, simulate's). The look itself is
    background work on the persona's queue, so it never makes the person wait."""
    return rt.queue.submit_background("tick", lambda _: _queue_due(rt), key="tick")


def _queue_due(rt: PersonaRuntime) -> list[str]:
    now = rt.local_now()
    autonomy = rt.persona.settings.autonomy
    state = read_state(rt.memory, now)
    queued = []
    for job in due_jobs(now, autonomy, state):
        if job == "dream":
            item = rt.dreams.start(day=state.undreamt_day, trigger="schedule")
        else:
            item = rt.queue.submit_background(job, _job_runner(rt, job, now), key=job)
        if item is not None:
            queued.append(job)
    if not in_quiet_hours(now, autonomy.quiet_hours) and _may_act(rt) and rt.events.due_count():
        item = rt.queue.submit_background(
            "events", lambda give_way: process_events(rt, give_way), key="events"
        )
        if item is not None:
            queued.append("events")
    if rt.session_if_open() is not None:
        rt.queue.submit_background("conversation end", lambda _: _end_if_idle(rt), key="conversation_end")
    return queued


def _may_act(rt: PersonaRuntime) -> bool:
    return rt.persona.settings.autonomy.enabled and not rt.host.autonomy_paused()


def _end_if_idle(rt: PersonaRuntime) -> None:
    session = rt.session_if_open()
    if session is not None:
        with model_priority(BACKGROUND):
            session.end_if_idle(rt.host.clock.now())


def _job_runner(rt: PersonaRuntime, job: str, planned: datetime) -> Callable[[threading.Event], Any]:
    def run(give_way: threading.Event) -> Any:
        try:
            if job == "drives":
                report = rt.recompute_drives("schedule")
                consider_writing(rt, report, trigger="drive", give_way=give_way)
            elif job == "backup":
                backup_if_due(rt.memory, rt.host.backups_dir(rt.slug), clock=rt.host.clock)
            elif job == "retention":  # after the backup: the newest copy still holds the detail
                retention.apply(rt.memory.db, rt.local_now(), give_way=give_way)
            elif job == "heartbeat":
                heartbeat(rt, give_way)
            elif job.startswith("routine:"):
                routine(rt, int(job.split(":", 1)[1]), give_way)
        finally:
            record_run(rt.memory, job, planned)

    return run


def heartbeat(rt: PersonaRuntime, give_way: threading.Event) -> None:
    """Look around: due plans first, then the drives; it may well decide to do nothing (recorded why)."""
    process_events(rt, give_way)
    report = rt.recompute_drives("heartbeat")
    decision = consider_writing(rt, report, trigger="heartbeat", give_way=give_way)
    if not decision.send:
        rt.memory.activity.append(
            "heartbeat",
            notice("heartbeat: nothing to do ({reason})", reason=decision.reason),
            data={"reason": decision.reason},
        )


def routine(rt: PersonaRuntime, index: int, give_way: threading.Event) -> None:
    """A routine always writes: its task is the reason (quiet hours were checked when it became due)."""
    routines = rt.persona.settings.autonomy.routines
    if index >= len(routines):
        return  # the routine was removed from persona.toml since it was queued
    task = routines[index].task
    report = rt.recompute_drives("routine")
    why = notice("routine {cron}: {task}", cron=routines[index].cron, task=task)
    reason = _reason(rt, report, trigger="routine", why=why)
    write_first(rt, task, report, reason, give_way, what=task)


def consider_writing(
    rt: PersonaRuntime, report: DriveReport, *, trigger: str, give_way: threading.Event
) -> AutonomyDecision:
    """Write first when every rule allows it (runtime.autonomy.decide); the decision either way."""
    now = rt.local_now()
    decision = decide(
        report,
        rt.persona.settings.autonomy,
        now,
        last_sent=rt.inbox.last_sent(),
        sent_today=rt.inbox.sent_on(now.date()),
        typing=rt.typing,
        paused=rt.host.autonomy_paused(),
        unanswered=rt.inbox.unanswered(),
    )
    if decision.send and report.dominant is not None:
        language = "ja" if rt.persona.settings.language == "ja" else "en"
        instruction = WRITE_FIRST[language].format(why=DRIVE_PROMPTS[language][report.dominant])
        reason = _reason(rt, report, trigger=trigger, why=decision.reason, decision=decision)
        write_first(rt, instruction, report, reason, give_way)
    return decision


def process_events(rt: PersonaRuntime, give_way: threading.Event) -> int:
    """Carry out the persona's due plans (a few per call): each becomes a message it writes first."""
    done = 0
    now = rt.local_now()
    autonomy = rt.persona.settings.autonomy
    if in_quiet_hours(now, autonomy.quiet_hours) or not _may_act(rt) or rt.typing:
        return 0
    if rt.inbox.sent_on(now.date()) >= autonomy.daily_cap:
        return 0  # the plans wait for tomorrow: the daily cap holds for them too
    for _ in range(EVENTS_PER_TICK):
        if give_way.is_set():
            break
        event = rt.events.claim_due()
        if event is None:
            break
        try:
            _carry_out(rt, event, give_way)
        except InterruptedError:  # the person came first: not a failed attempt
            rt.events.release(event.id)
            break
        except Exception as exc:  # retried with a backoff, dead after a few tries (kept to be seen)
            rt.events.fail(event.id, f"{type(exc).__name__}: {exc}")
            continue
        rt.events.done(event.id)
        done += 1
        rt.host.events.publish("event_processed", persona=rt.slug, event=event)
    return done


def _carry_out(rt: PersonaRuntime, event: QueuedEvent, give_way: threading.Event) -> None:
    what = str(event.payload.get("what") or event.payload.get("text") or event.kind)
    language = "ja" if rt.persona.settings.language == "ja" else "en"
    planned = PLANNED[language].format(what=what)
    report = rt.recompute_drives("event")
    reason = _reason(rt, report, trigger="event", why=notice("planned: {what}", what=what))
    reason["event_id"] = event.id
    result = write_first(rt, WRITE_FIRST[language].format(why=planned), report, reason, give_way, what=what)
    if result is None:
        raise InterruptedError("gave way to the person before the message was written")


def _writes_well(backend: Any) -> bool:
    """Whether the chat model is big enough to write a message of its own (its capability record)."""
    with suppress(NexusArkError):  # the record is read from the loaded model; a failed load says so later
        backend.ensure_ready()
    return bool(backend.capabilities().reflects)


def _templated(rt: PersonaRuntime, report: DriveReport, reason: dict[str, Any], what: str) -> str:
    """The templated message for the reason, with what memory holds for it (never invented)."""
    drive = reason.get("drive")
    components = rt.memory.components
    worry = question = goal = ""
    if drive == "devotion":  # the person's latest worry within the drive's window
        since = iso(rt.host.clock.now() - timedelta(hours=DEVOTION_WINDOW_H))
        worry = next((e.snippet for e in reversed(components.emotions(since)) if e.value < 0), "")
    elif drive == "curiosity":  # the question the drive comes from, if it is still open
        wanted = report.drives["curiosity"].inputs.get("top_question_id")
        open_now = components.open_questions()
        top = next((q for q in open_now if q.id == wanted), None) or max(
            open_now, key=lambda q: q.priority, default=None
        )
        question = top.question if top is not None else ""
    elif drive == "goal_achievement":
        wanted = report.drives["goal_achievement"].inputs.get("goal_id")
        found = components.goal(str(wanted)) if wanted else None
        goal = found.goal if found is not None and found.status == "active" else ""
    return first_message(
        rt.persona.settings.language,
        reason["trigger"],
        drive,
        worry=worry,
        question=question,
        goal=goal,
        what=what,
    )


def _reason(
    rt: PersonaRuntime,
    report: DriveReport,
    *,
    trigger: str,
    why: str,
    decision: AutonomyDecision | None = None,
) -> dict[str, Any]:
    """Why the persona wrote, stored with the message: the trigger, the dominant drive and its level,
    the drives' inputs and the narrative."""
    drive = decision.drive if decision else report.dominant
    level = decision.level if decision else (report.drives[drive].level if drive else None)
    return {
        "trigger": trigger,
        "drive": drive,
        "level": round(level, 3) if level is not None else None,
        "why": why,
        "narrative": report.narrative,
        "levels": {name: round(d.level, 3) for name, d in report.drives.items()},
        "inputs": {name: d.inputs for name, d in report.drives.items()},
        "time": iso(rt.local_now()),
    }


def write_first(
    rt: PersonaRuntime,
    instruction: str,
    report: DriveReport,
    reason: dict[str, Any],
    give_way: threading.Event,
    *,
    what: str = "",
) -> TurnResult | None:
    """The persona writes a message on its own. If the person starts a turn meanwhile, the message gives
    way: what was written of it is removed (it would interrupt them) and None is returned. A model too
    small to write it well sends the template for its reason instead (runtime.first_words); `what` is the
    plan's or the routine's own words."""
    session, room_title = _where_to_write(rt)
    if session is None:
        rt.memory.activity.append(
            "autonomy",
            notice("a message was not sent: {why}", why=notice("another member spoke in the room just now")),
            data={"reason": reason},
        )
        return None
    language = "ja" if rt.persona.settings.language == "ja" else "en"
    with model_priority(BACKGROUND):
        text = None if _writes_well(session.backend) else _templated(rt, report, reason, what)
        result = session.write_first(
            instruction, internal_state(report, language), reason, give_way, text=text
        )
    if give_way.is_set() or result.status != "complete" or result.reply_id is None or not result.text:
        if result.reply_id is not None:
            session.delete(result.reply_id, forget=True)
        why = notice("gave way to the person") if give_way.is_set() else (result.error or result.status)
        rt.memory.activity.append(
            "autonomy", notice("a message was not sent: {why}", why=why), data={"reason": reason}
        )
        return None
    with rt.memory.db.atomic():
        rt.inbox.add(result.reply_id, session.room)
        rt.memory.activity.append(
            "autonomy",
            notice(
                "wrote first ({trigger}): {why}",
                trigger=_TRIGGER_WORDS.get(reason["trigger"], reason["trigger"]),
                why=reason["why"],
            ),
            data={"message_id": result.reply_id, **reason},
        )
    rt.host.events.publish(
        "autonomous_message",
        persona=rt.slug,
        message_id=result.reply_id,
        text=result.text,
        reason=reason,
        unread=rt.inbox.unread(),
        room=session.room,  # a room's ("room:<slug>"): NexusApp hands it to the room's other members
        room_title=room_title,
    )
    first_line = next((line for line in result.text.splitlines() if line.strip()), result.text)
    title = rt.persona.settings.name if room_title is None else f"{rt.persona.settings.name} · {room_title}"
    rt.host.notify(title, first_line[:200], rt.slug)
    return result


ROOM_QUIET_S = 60  # one message written first in a room a minute (a tick) at most, whoever writes it


def _where_to_write(rt: PersonaRuntime) -> tuple[ChatSession | None, str | None]:
    """Where the persona writes first: the room in which the person last spoke with it, while that room
    exists, else its own conversation with the person. (None, title) when another member of that room
    spoke there within the last minute (one message written first per room and tick)."""
    room = rt.memory.messages.room_person_last_wrote_in()
    title = rt.host.room_title(room) if room is not None and is_room_key(room) else None
    if room is None or title is None:
        return rt.session(), None
    since = iso(rt.host.clock.now() - timedelta(seconds=ROOM_QUIET_S))
    recent = rt.memory.messages.others_spoke_since(room, since)
    return (None, title) if recent else (rt.rooms.session(room), title)
