"""Dreams with the bundled model (SmolLM2-135M through llama.cpp) over the five-day conversation in
tests/data, through the command line a person or a script would use (issue 21's bar): the model is below
the reflection capability, so nothing it would invent is written; the episode quotes the day, entities
keep the sentences that name them, no open question, insight or goal is written, and every written item
is found in the messages it cites. Turns after a dream are dreamt by the next pass."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.integration

CONVERSATION = REPO / "tests" / "data" / "dream_days.jsonl"
DAYS = ("2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22")
QUOTE = re.compile(r'(\w+): "(.+?)"(?= \w+: "|$)')
ENTITY_LINE = re.compile(r'^\((\d{4}-\d\d-\d\d)\) (\w+): "(.+)"$')


def _dream(data_dir: Path, *args: str) -> dict:
    proc = run_cli("--data-dir", str(data_dir), "dream", "--persona", "aria", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _messages(db: Path) -> dict[str, tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select id, speaker, content, created_at from messages").fetchall()
    return {f"msg:{i}": (speaker, text, stamp[:10]) for i, speaker, text, stamp in rows}


@pytest.mark.slow
def test_bundled_dreams_write_only_what_the_days_said(data_dir: Path):
    proc = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(CONVERSATION))
    assert proc.returncode == 0, proc.stderr
    db = data_dir / "personas" / "aria" / "memory.db"
    said = _messages(db)

    results = [_dream(data_dir, "--date", day, "--level", "1") for day in DAYS]
    for day, result in zip(DAYS, results, strict=True):
        assert result["date"] == day and result["skipped"] is None, result["stages"]
        assert result["reflection"] == "reflection needs a larger model"
        assert result["model"].startswith("SmolLM2-135M") and result["parameters"] < 1_000_000_000
        assert result["insight"] is None and result["open_questions"] == [] and result["goals"] == []
        assert result["grounding"]["refused"] == 0 and result["grounding"]["checked"] >= 3
        episode = result["episode"]
        quotes = QUOTE.findall(episode["summary"])
        assert len(quotes) == 3, episode["summary"]
        sources = [said[s] for s in episode["source_ids"]]
        for speaker, words in quotes:  # the day, in its speakers' own words, from the messages cited
            # Only the person's lines (issue 32), their telling sentences ("…" where some were left out).
            pieces = [p.strip() for p in words.split("…") if p.strip()]
            assert speaker == "Mika", episode["summary"]
            assert any(speaker == s and all(p in text for p in pieces) and d == day for s, text, d in sources)
    assert {"Yui", "Kenji", "Trattoria Luna"} <= {n for r in results for n in r["entities_updated"]}

    with sqlite3.connect(db) as conn:
        counts = conn.execute(
            "select (select count(*) from insights), (select count(*) from open_questions), "
            "(select count(*) from goals), (select count(*) from episodes)"
        ).fetchone()
        assert counts == (0, 0, 0, 5)
        entities = conn.execute("select name, text, source_ids from entities").fetchall()
        person = conn.execute("select count(*) from messages where role = 'user'").fetchone()[0]
        feelings = conn.execute("select count(*) from emotion_log").fetchone()[0]
        person_entity = conn.execute(
            "select value from reflection_meta where key = 'person_entity'"
        ).fetchone()
    assert feelings == person, "the imported messages' feelings were read"
    # The person is no outside entity (issue 32): what the days say of Mika is in the entity marked as
    # the person, in her own sentences.
    assert person_entity == ("Mika",)
    for name, text, source_ids in entities:  # every fact is a sentence that names it, where it was said
        cited = [said[s] for s in json.loads(source_ids)]
        for line in text.splitlines():
            day, speaker, sentence = ENTITY_LINE.match(line).groups()
            assert name.casefold() in sentence.casefold() or (name == "Mika" and speaker == "Mika")
            assert any(speaker == s and sentence in t and d == day for s, t, d in cited), line

    # A higher level on a day dreamt: only the higher stages, which need reflection.
    week = _dream(data_dir, "--date", "2026-11-22", "--level", "2")
    assert (
        week["stages"]["week"] == week["stages"]["short_goals"] == "skipped: reflection needs a larger model"
    )
    assert (
        week["stages"]["episode"] == "done earlier" and week["skipped"] == "reflection needs a larger model"
    )
    assert _dream(data_dir, "--date", "2026-11-22")["skipped"] == "already dreamt (level 2) on 2026-11-22"

    # The conversation goes on that evening: the next dream reads what came since, and only that.
    more = data_dir / "more.jsonl"
    line = {
        "id": "2026-11-22-late",
        "speaker": "Mika",
        "text": "Yui texted me that her fever is gone and she wants pasta at Trattoria Luna on Saturday.",
        "timestamp": "2026-11-22T23:10:00",
    }
    more.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert (
        run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(more)).returncode
        == 0
    )
    late = _dream(data_dir, "--date", "2026-11-22")
    assert late["skipped"] is None and late["messages"][0] == late["messages"][1]
    late_id = f"msg:{late['messages'][0]}"
    assert _messages(db)[late_id][1] == line["text"]
    assert "Yui" in late["entities_updated"] and "Trattoria Luna" in late["entities_updated"]
    with sqlite3.connect(db) as conn:
        yui = conn.execute("select text from entities where name = 'Yui'").fetchone()[0]
    assert yui.endswith(
        'Mika: "Yui texted me that her fever is gone and she wants pasta at Trattoria Luna on Saturday."'
    )
    again = _dream(data_dir, "--date", "2026-11-22")
    assert again["skipped"] == "already dreamt (level 2) on 2026-11-22", "the day's highest pass"
