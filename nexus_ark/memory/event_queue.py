"""A persona's event queue, in its memory.db (migration m011), so what it scheduled survives a restart.

An event has a kind ("ask", "reminder", ...), a JSON payload, an optional identity key, a due time and a
state. Enqueueing with the key of a pending event replaces that event (the newer plan wins: "ask about the
exam in 2h" twice is one question). The runtime claims due events one at a time (pending → processing),
then marks them done, or failed: retried later with a backoff, and dead after MAX_ATTEMPTS, kept for the
person to see. An event left "processing" by a crash is pending again when the runtime opens the persona.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from nexus_ark.clock import Clock, iso
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.db import inserted_id
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice

EventState = Literal["pending", "processing", "done", "failed", "dead", "cancelled"]
MAX_ATTEMPTS = 3
RETRY_BASE = timedelta(minutes=5)
MAX_DELAY = timedelta(days=365)
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|d|day|w|week)s?\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400, "day": 86400}
_UNITS |= {"w": 604800, "week": 604800}


class QueuedEvent(BaseModel):
    id: int
    kind: str
    key: str | None
    payload: dict[str, Any]
    due_at: str
    state: EventState
    attempts: int
    last_error: str | None = None
    source: str
    created_at: str


def parse_delay(text: str) -> timedelta:
    """ "90s", "30m", "2h", "1d", "1w" → a timedelta; a clear error for anything else."""
    match = _DELAY.match(text or "")
    if not match:
        raise NexusArkError(f"{text!r} is not a delay: use a number and a unit, e.g. 30m, 2h, 1d.")
    delay = timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2).lower()])
    if delay > MAX_DELAY:
        raise NexusArkError(f"{text!r} is too far ahead: at most a year.")
    return delay


def _row(row: tuple) -> QueuedEvent:
    i, kind, key, payload, due, state, attempts, error, source, created = row
    return QueuedEvent(
        id=i,
        kind=kind,
        key=key,
        payload=json.loads(payload),
        due_at=due,
        state=state,
        attempts=attempts,
        last_error=error,
        source=source,
        created_at=created,
    )


_COLUMNS = "id, kind, key, payload, due_at, state, attempts, last_error, source, created_at"


class EventQueue:
    def __init__(self, memory: MemoryStore, clock: Clock) -> None:
        self.memory = memory
        self.db = memory.db
        self.clock = clock

    def enqueue(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        key: str | None = None,
        delay: timedelta | None = None,
        due: datetime | None = None,
        source: str = "persona",
    ) -> QueuedEvent:
        now = self.clock.now()
        when = due or (now + (delay or timedelta(0)))
        body = json.dumps(payload or {}, ensure_ascii=False)
        with self.db.atomic():
            if key:
                replaced = self.db.execute(
                    "update events set state = 'cancelled', updated_at = ?, "
                    "last_error = 'replaced by a newer event with the same key' "
                    "where key = ? and state = 'pending'",
                    [iso(now), key],
                ).rowcount
            else:
                replaced = 0
            cur = self.db.execute(
                "insert into events (kind, key, payload, due_at, state, source, created_at, updated_at) "
                "values (?,?,?,?,'pending',?,?,?)",
                [kind, key, body, iso(when), source, iso(now), iso(now)],
            )
            self.memory.activity.append(
                "event",
                notice(
                    "{kind} scheduled for {when} (replacing the earlier one)", kind=kind, when=iso(when)[:16]
                )
                if replaced
                else notice("{kind} scheduled for {when}", kind=kind, when=iso(when)[:16]),
                data={"event_id": inserted_id(cur), "kind": kind, "key": key, "due_at": iso(when)},
            )
        return self.get(inserted_id(cur))

    def get(self, event_id: int) -> QueuedEvent:
        row = self.db.execute(f"select {_COLUMNS} from events where id = ?", [event_id]).fetchone()
        if row is None:
            raise NexusArkError(f"There is no event {event_id}.")
        return _row(row)

    def list(self, states: tuple[str, ...] = ("pending", "processing", "failed")) -> list[QueuedEvent]:
        marks = ",".join("?" * len(states))
        rows = self.db.execute(
            f"select {_COLUMNS} from events where state in ({marks}) order by due_at, id", list(states)
        ).fetchall()
        return [_row(r) for r in rows]

    def cancel(self, event_id: int) -> bool:
        """The person cancels a pending (or failed, waiting to retry) event."""
        with self.db.atomic():
            cur = self.db.execute(
                "update events set state = 'cancelled', updated_at = ? "
                "where id = ? and state in ('pending', 'failed')",
                [iso(self.clock.now()), event_id],
            )
            if cur.rowcount:
                self.memory.activity.append(
                    "event", notice("event {id} cancelled", id=event_id), data={"event_id": event_id}
                )
        return bool(cur.rowcount)

    def claim_due(self) -> QueuedEvent | None:
        """The oldest due event (pending, or failed and due for its retry), now processing."""
        now = iso(self.clock.now())
        with self.db.atomic():
            row = self.db.execute(
                f"select {_COLUMNS} from events where state in ('pending', 'failed') and due_at <= ? "
                "order by due_at, id limit 1",
                [now],
            ).fetchone()
            if row is None:
                return None
            self.db.execute(
                "update events set state = 'processing', attempts = attempts + 1, updated_at = ? "
                "where id = ?",
                [now, row[0]],
            )
        return self.get(row[0])

    def done(self, event_id: int) -> None:
        with self.db.atomic():
            self.db.execute(
                "update events set state = 'done', updated_at = ? where id = ?",
                [iso(self.clock.now()), event_id],
            )

    def fail(self, event_id: int, error: str) -> QueuedEvent:
        """A failed attempt: retried after a backoff (5, 10, 20 min …), dead after MAX_ATTEMPTS."""
        event = self.get(event_id)
        now = self.clock.now()
        dead = event.attempts >= MAX_ATTEMPTS
        retry = now + RETRY_BASE * (2 ** max(0, event.attempts - 1))
        with self.db.atomic():
            self.db.execute(
                "update events set state = ?, last_error = ?, due_at = ?, updated_at = ? where id = ?",
                [
                    "dead" if dead else "failed",
                    error[:500],
                    event.due_at if dead else iso(retry),
                    iso(now),
                    event_id,
                ],
            )
            self.memory.activity.error(
                notice(
                    "event {id} ({kind}) failed for good: {error}", id=event_id, kind=event.kind, error=error
                )
                if dead
                else notice(
                    "event {id} ({kind}) failed, will retry: {error}",
                    id=event_id,
                    kind=event.kind,
                    error=error,
                ),
                event_id=event_id,
            )
        return self.get(event_id)

    def release(self, event_id: int) -> None:
        """A claimed event that gave way (the person started a turn): pending again, the try not counted."""
        with self.db.atomic():
            self.db.execute(
                "update events set state = 'pending', attempts = max(0, attempts - 1), updated_at = ? "
                "where id = ? and state = 'processing'",
                [iso(self.clock.now()), event_id],
            )

    def due_count(self) -> int:
        """How many events are due now (pending, or failed and due for their retry)."""
        return int(
            self.db.execute(
                "select count(*) from events where state in ('pending', 'failed') and due_at <= ?",
                [iso(self.clock.now())],
            ).fetchone()[0]
        )

    def recover(self) -> int:
        """Events a crash left processing are pending again (once, when the runtime opens the persona)."""
        with self.db.atomic():
            return self.db.execute(
                "update events set state = 'pending', updated_at = ? where state = 'processing'",
                [iso(self.clock.now())],
            ).rowcount
