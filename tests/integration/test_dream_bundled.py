"""A real level-1 dream with the bundled model over a real three-day conversation (imported JSONL), through
the command line a person or a script would use."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.integration

CONVERSATION = REPO / "tests" / "data" / "dream_days.jsonl"


def _day_ids(db: Path, day: str) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select id from messages where created_at like ?", [f"{day}%"]).fetchall()
    return {f"msg:{r[0]}" for r in rows}


def test_a_level_one_dream_writes_a_valid_insight_entities_and_the_episode_with_sources(data_dir: Path):
    proc = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(CONVERSATION))
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(
        "--data-dir", str(data_dir), "dream", "--persona", "aria", "--date", "2026-11-20", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert {
        "level",
        "date",
        "insight",
        "episode",
        "entities_updated",
        "open_questions",
        "goals",
        "skipped",
    } <= set(result)
    assert result["level"] == 1 and result["date"] == "2026-11-20" and result["skipped"] is None
    assert "dreaming (1/5): insight" in proc.stderr, "progress is shown stage by stage"

    day = _day_ids(data_dir / "personas" / "aria" / "memory.db", "2026-11-20")
    insight = result["insight"]
    assert insight is not None, result["stages"]
    assert all(insight[k].strip() for k in ("trigger_topic", "insight", "strategy", "log_entry"))
    assert insight["source_ids"] and set(insight["source_ids"]) <= day, "the day's messages, none other"
    assert result["entities_updated"], result["stages"]
    episode = result["episode"]
    assert episode is not None and episode["date"] == "2026-11-20" and episode["summary"].strip()
    assert episode["source_ids"] and set(episode["source_ids"]) <= day

    with sqlite3.connect(data_dir / "personas" / "aria" / "memory.db") as conn:
        for name in result["entities_updated"]:
            sources = conn.execute("select source_ids from entities where name = ?", [name]).fetchone()[0]
            assert set(json.loads(sources)) <= day and json.loads(sources)
        before = conn.execute(
            "select (select count(*) from insights), (select count(*) from episodes)"
        ).fetchone()

    again = run_cli(
        "--data-dir", str(data_dir), "dream", "--persona", "aria", "--date", "2026-11-20", "--json"
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["skipped"] == "already dreamt (level 1) on 2026-11-20"
    with sqlite3.connect(data_dir / "personas" / "aria" / "memory.db") as conn:
        after = conn.execute(
            "select (select count(*) from insights), (select count(*) from episodes)"
        ).fetchone()
    assert after == before, "dreaming a finished day again changes nothing"

    drives = run_cli("--data-dir", str(data_dir), "drives", "--persona", "aria", "--json")
    assert drives.returncode == 0, drives.stderr
    report = json.loads(drives.stdout)
    assert set(report) == {"drives", "dominant", "narrative"}
    assert set(report["drives"]) == {"boredom", "curiosity", "goal_achievement", "devotion"}
    assert report["drives"]["curiosity"]["inputs"]["open_questions"] == len(result["open_questions"])
