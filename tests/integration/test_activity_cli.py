"""`nexus-ark activity` as scripts use it: a fresh process reading a persona's timeline."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.memory.db import connect
from nexus_ark.memory.migrations import migrations
from nexus_ark.memory.store import MemoryStore
from tests.conftest import run_cli

pytestmark = pytest.mark.integration


def _memory_path(data_dir: Path) -> Path:
    with NexusApp(data_dir) as app:  # copies the shipped personas, creates aria's memory.db
        app.personas.memory("aria")
        return app.personas.load("aria").memory_path


@pytest.fixture
def timeline(data_dir: Path) -> Path:
    """aria's timeline: a morning exchange at 09:00 UTC, a memory write and an error an hour later."""
    clock = FixedClock(datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    store = MemoryStore(_memory_path(data_dir), clock)
    try:
        said = store.messages.add(speaker="Mika", role="user", content="I passed the exam!")
        store.activity.message(said, "Mika", "I passed the exam!", role="user")
        store.activity.emotion("joy", 1.0, 0.88, message_id=said, snippet="I passed the exam!")
        store.activity.message(said + 1, "aria", "Congratulations,\nMika! 🎉", role="assistant")
        clock.advance(3600)
        store.components.set_notepad("Celebrate with Mika on Friday.")
        store.activity.error("the model stopped answering")
    finally:
        store.close()
    return data_dir


def _activity(data_dir: Path, *args: str):
    return run_cli("--data-dir", str(data_dir), "activity", "--persona", "aria", *args)


def test_json_is_one_object_a_line_oldest_first(timeline: Path) -> None:
    proc = _activity(timeline, "--json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["kind"] for e in lines] == ["message", "emotion", "message", "memory_write", "error"]
    assert lines[0]["summary"] == "Mika: I passed the exam!"
    assert lines[0]["time"].startswith("2026-11-20T09:00:00")
    assert lines[1]["data"] == {"label": "joy", "value": 1.0, "confidence": 0.88}
    assert lines[1]["message_id"] == lines[0]["message_id"] is not None
    assert lines[2]["summary"] == "aria: Congratulations, Mika! 🎉"  # one line, emoji kept
    assert lines[3]["summary"] == "notepad: Celebrate with Mika on Friday."
    assert {"time", "kind", "summary", "message_id", "data"} <= set(lines[4])


def test_filters_by_kind_and_time(timeline: Path) -> None:
    proc = _activity(timeline, "--json", "--kind", "emotion", "--kind", "error")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["kind"] for line in proc.stdout.splitlines()] == ["emotion", "error"]
    later = _activity(timeline, "--json", "--since", "2026-11-20T19:30+09:00")  # 10:30 UTC
    assert [json.loads(line)["kind"] for line in later.stdout.splitlines()] == []
    later = _activity(timeline, "--json", "--since", "2026-11-20T09:30:00Z")
    assert [json.loads(line)["kind"] for line in later.stdout.splitlines()] == ["memory_write", "error"]


def test_readable_lines(timeline: Path) -> None:
    proc = _activity(timeline, "--kind", "message")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    assert "message" in lines[0] and lines[0].endswith("Mika: I passed the exam!")
    assert lines[1].endswith("aria: Congratulations, Mika! 🎉")


def test_a_time_that_is_not_iso_is_refused_with_an_example(timeline: Path) -> None:
    proc = _activity(timeline, "--since", "yesterday")
    assert proc.returncode == 2
    assert "'yesterday' is not an ISO-8601 time" in proc.stderr and "2026-11-20" in proc.stderr
    assert proc.stdout == ""


def test_a_misspelt_kind_is_named(timeline: Path) -> None:
    proc = _activity(timeline, "--kind", "emotions")
    assert proc.returncode == 0 and proc.stdout == ""
    assert "no entries of kind 'emotions'" in proc.stderr and "emotion" in proc.stderr


def test_a_database_from_before_the_timeline_is_brought_up_to_date(data_dir: Path) -> None:
    path = _memory_path(data_dir)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    db = connect(path)
    migrations.apply(db, stop_before="m006_activity")
    db.close()
    proc = _activity(data_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    reader = MemoryStore(path, role="reader")  # the owner migrated it: readers open it now
    reader.close()


def test_an_unknown_persona_is_named(data_dir: Path) -> None:
    proc = run_cli("--data-dir", str(data_dir), "activity", "--persona", "nobody")
    assert proc.returncode == 2
    assert "nobody" in proc.stderr
