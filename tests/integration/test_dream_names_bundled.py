"""Dreams with the bundled model over an imported three-day conversation whose speakers call each other by
name (issue 32's bar), through the command line: `memory import --user-name Calvin` makes Calvin the
person, Aria's lines are the persona's. Calvin calls Aria "Ari", Aria calls him "Cal", both sign off with
"Bye", "Cheers" and "Thanks"; the first day he failed his driving test, the second a doctor warned him.
The data (tests/data/named_days.jsonl) was written for this test."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.integration

CONVERSATION = REPO / "tests" / "data" / "named_days.jsonl"
DAYS = ("2026-10-05", "2026-10-06", "2026-10-07")
QUOTE = re.compile(r'(\w+): "(.+?)"(?= \w+: "|$)')
# Every name the two speakers have in the days, and the words that only greet, thank or sign off.
THE_TWO = {"calvin", "cal", "aria", "ari"}
NEVER = {"bye", "ttyl", "thanks", "cheers", "morning", "woohoo", "hey"}


def _dream(data_dir: Path, day: str) -> dict:
    proc = run_cli(
        "--data-dir", str(data_dir), "dream", "--persona", "aria", "--json", "--date", day, "--level", "1"
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_a_dream_files_neither_speaker_nor_a_greeting_and_quotes_the_persons_day(data_dir: Path):
    proc = run_cli(
        "--data-dir", str(data_dir), "memory", "import", "--persona", "aria", "--user-name", "Calvin",
        str(CONVERSATION),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    db = data_dir / "personas" / "aria" / "memory.db"
    with sqlite3.connect(db) as conn:
        roles = dict(
            conn.execute("select speaker, group_concat(distinct role) from messages group by speaker")
        )
        said = {
            f"msg:{i}": (speaker, text)
            for i, speaker, text in conn.execute("select id, speaker, content from messages")
        }
    assert roles == {"Calvin": "user", "Aria": "assistant"}, "--user-name maps the speaker"

    results = {day: _dream(data_dir, day) for day in DAYS}
    with sqlite3.connect(db) as conn:
        entities = dict(conn.execute("select name, text from entities"))
        (person,) = conn.execute("select value from reflection_meta where key = 'person_entity'").fetchone()
    outside = {name.casefold() for name in entities if name != person}
    assert not outside & THE_TWO, entities
    assert not outside & NEVER, entities
    assert {"nora", "biscuit"} <= outside, entities  # the people and the dog the person spoke of
    # What the days say of Calvin is in the entity marked as the person, in his own sentences.
    assert person == "Calvin"
    for line in entities[person].splitlines():
        assert line.split(") ", 1)[1].startswith('Calvin: "'), line

    for result in results.values():
        assert result["grounding"]["refused"] == 0, result["grounding"]
        episode = result["episode"]
        quotes = QUOTE.findall(episode["summary"])
        assert quotes, episode["summary"]
        for speaker, words in quotes:  # the person's own messages, word for word ("…" where cut)
            assert speaker == "Calvin", episode["summary"]
            pieces = [p.strip() for p in words.split("…") if p.strip()]
            assert any(all(p in said[s][1] for p in pieces) for s in episode["source_ids"]), words
        assert all(said[s][0] == "Calvin" for s in episode["source_ids"])
    assert "failed my driving test" in results["2026-10-05"]["episode"]["summary"]
    assert "Okafor warned me" in results["2026-10-06"]["episode"]["summary"]
    # A failed test and a doctor's warning are read as distress, however friendly the rest of the day.
    assert results["2026-10-05"]["episode"]["emotional_tone"] in ("stressed", "sadness")
    assert results["2026-10-06"]["episode"]["emotional_tone"] in ("stressed", "sadness")


def test_import_without_user_name_maps_the_name_the_app_was_told(data_dir: Path):
    """The name the person gave the app (setup, Settings) marks their lines when --user-name is not given."""
    from nexus_ark.app import NexusApp

    app = NexusApp(data_dir).open()
    try:
        app.admin.set_user_name("Calvin")
    finally:
        app.close()
    proc = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(CONVERSATION))
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(data_dir / "personas" / "aria" / "memory.db") as conn:
        roles = dict(
            conn.execute("select speaker, group_concat(distinct role) from messages group by speaker")
        )
    assert roles == {"Calvin": "user", "Aria": "assistant"}
