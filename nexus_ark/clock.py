"""An injectable clock, so schedules, drives and tests never read the wall clock directly."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

from nexus_ark.notices import notice

# The years a time from outside (an import, a card, an export) may name. Python's datetime ends at years
# 1 and 9999, and a day subtracted from 0001-01-01, or a local time taken of it, raises: a year-1 line
# stored once broke every later turn of its persona. Real conversations fall well inside these years.
EARLIEST_YEAR = 1900
LATEST_YEAR = 2999


class Clock(Protocol):
    def now(self) -> datetime: ...
    def monotonic(self) -> float: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class FixedClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start: datetime) -> None:
        self._now = start
        self._mono = 0.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        from datetime import timedelta

        self._now += timedelta(seconds=seconds)
        self._mono += seconds


def iso(dt: datetime) -> str:
    """ISO-8601 with timezone, the one timestamp format stored on disk."""
    return dt.isoformat(timespec="milliseconds")


def time_problem(dt: datetime) -> str:
    """Why a time from outside cannot be kept ("" when it can): a year outside EARLIEST_YEAR..LATEST_YEAR,
    also once shifted to UTC (so adding a day, or a local zone, never leaves Python's range)."""
    moved = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt
    try:
        year = moved.astimezone(UTC).year
    except (OverflowError, ValueError):
        year = dt.year
    if not EARLIEST_YEAR <= min(dt.year, year) <= max(dt.year, year) <= LATEST_YEAR:
        return notice(
            "the year {year} is out of range (from {first} to {last})",
            year=dt.year,
            first=EARLIEST_YEAR,
            last=LATEST_YEAR,
        )
    return ""


def checked_time(value: str) -> datetime:
    """An ISO-8601 time from outside, parsed and within the years kept; ValueError says what is wrong
    (with the value, cut to a line)."""
    shown = value if len(value) <= 40 else f"{value[:40]}…"
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(notice("{value!r} is not an ISO-8601 time", value=shown)) from None
    if problem := time_problem(dt):
        raise ValueError(notice("the time {value!r} cannot be kept: {problem}", value=shown, problem=problem))
    return dt


def checked_epoch(seconds: float) -> datetime:
    """Seconds since 1970 from outside (a ChatGPT export's create_time) as a UTC time within the years kept;
    ValueError says what is wrong."""
    try:
        dt = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        raise ValueError(
            notice(
                "{value} seconds is not a time from {first} to {last}",
                value=f"{seconds:.6g}",
                first=EARLIEST_YEAR,
                last=LATEST_YEAR,
            )
        ) from None
    if problem := time_problem(dt):
        raise ValueError(
            notice(
                "{value} ({date}): {problem}",
                value=f"{seconds:.6g}",
                date=dt.date().isoformat(),
                problem=problem,
            )
        )
    return dt


def stored_time(value: object) -> datetime | None:
    """A time read back from the data folder as an aware datetime, or None where it is no usable time:
    unparseable, or out of the years kept (written by an older version that let a year-1 date in).
    Stored data never breaks a turn: callers treat None as "no time known". A naive time is local."""
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if time_problem(dt):
        return None
    try:
        return dt if dt.tzinfo else dt.astimezone()
    except (OverflowError, OSError, ValueError):  # a local zone the platform cannot convert
        return dt.replace(tzinfo=UTC)
