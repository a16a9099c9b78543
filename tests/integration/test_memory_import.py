"""`nexus-ark memory import` as people run it: killed part-way and run again; fed a file with a bad line."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import cli_command, run_cli, subprocess_env

pytestmark = pytest.mark.integration

LINES = 6000
# Few distinct texts: the same text (with the same turn before it) is embedded once, so the runs spend
# their time importing, not embedding.
SAYINGS = [
    ("Mika", "Good morning! The coffee machine is broken again."),
    ("aria", "Oh no. Tea today, then?"),
    ("Mika", "Green tea, yes. My sister Keiko visits on Sunday."),
    ("aria", "Lovely! Will you cook for her?"),
    ("Mika", "Curry, she loves it."),
    ("aria", "Make it mild, you said she hates spicy food."),
]


def _write_turns(path: Path) -> list[str]:
    ids = [f"t{i}" for i in range(LINES)]
    with path.open("w", encoding="utf-8") as fh:
        for i, source_id in enumerate(ids):
            speaker, text = SAYINGS[i % len(SAYINGS)]
            stamp = f"2026-03-{1 + i // 1000:02d}T{8 + (i // 100) % 10:02d}:{i % 60:02d}:00"
            line = {"id": source_id, "speaker": speaker, "text": text, "timestamp": stamp}
            fh.write(json.dumps(line) + "\n")
    return ids


def _count_messages(db: Path) -> int:
    """Rows the importer has committed so far (0 while the database or its tables do not exist yet)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("select count(*) from messages").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet, or a migration holds the write lock
        return 0


def _import(data_dir: Path, turns: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_command("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(turns)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
        text=True,
        encoding="utf-8",
    )


@pytest.mark.slow
def test_an_import_killed_at_several_points_and_run_again_keeps_every_line_once(
    data_dir: Path, tmp_path: Path
) -> None:
    turns = tmp_path / "turns.jsonl"
    ids = _write_turns(turns)
    db = data_dir / "personas" / "aria" / "memory.db"
    killed_at: list[int] = []
    for threshold in (1, 2000, 4000):
        proc = _import(data_dir, turns)
        deadline = time.monotonic() + 180
        while (count := _count_messages(db)) < threshold and proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"the import never reached {threshold} messages in 180 s (at {count})")
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        killed_at.append(_count_messages(db))
    # The kills must have landed inside the import, or this test proves nothing about resuming one.
    assert min(killed_at) < LINES, killed_at

    proc = _import(data_dir, turns)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "0 bad lines" in out, out

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        messages = conn.execute("select source_id, count(*) from messages group by source_id").fetchall()
        items = conn.execute(
            "select source_id, count(*) from items where kind = 'message' group by source_id"
        ).fetchall()
        texts = dict(conn.execute("select source_id, content from messages"))
    assert sorted(messages) == sorted((i, 1) for i in ids), f"killed at {killed_at}"
    assert sorted(items) == sorted((i, 1) for i in ids), f"killed at {killed_at}"
    assert texts["t2"] == SAYINGS[2][1] and texts[f"t{LINES - 1}"] == SAYINGS[(LINES - 1) % len(SAYINGS)][1]


def test_a_line_that_is_not_utf8_is_named_and_the_rest_imports(data_dir: Path, tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    good = '{{"id": "{}", "speaker": "Mika", "text": "{}", "timestamp": "2026-01-01T10:00:0{}"}}\n'
    turns.write_bytes(
        good.format("u1", "Hello", 1).encode()
        + b'{"id": "u2", "speaker": "Mika", "text": "caf\xe9 au lait", "timestamp": "2026-01-01T10:00:02"}\n'
        # A raw line separator inside a string is valid JSON (ensure_ascii=False writes it): not a line end.
        + good.format("u3", "two\u2028lines \u3042", 3).encode()
        + good.format("u4", "Bye", 4).encode()
    )
    proc = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(turns))
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert f"{turns}:2: " in proc.stderr, proc.stderr
    assert "UTF-8" in proc.stderr, proc.stderr
    assert "imported 3 turns" in proc.stdout, proc.stdout
    db = data_dir / "personas" / "aria" / "memory.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("select source_id, content from messages order by id").fetchall()
    assert rows == [("u1", "Hello"), ("u3", "two\u2028lines \u3042"), ("u4", "Bye")]


def test_lines_python_cannot_read_are_named_and_the_rest_imports(data_dir: Path, tmp_path: Path) -> None:
    # A number over 4,300 digits (ValueError) or nesting a thousand deep (RecursionError) is valid JSON that
    # json.loads cannot make values of: it ended the import with a traceback, losing the batch before it.
    turns = tmp_path / "turns.jsonl"
    good = '{{"id": "{}", "speaker": "Mika", "text": "{}", "timestamp": "2026-01-01T10:00:0{}"}}\n'
    turns.write_text(
        good.format("v1", "Hello", 1)
        + '{"id": "v2", "speaker": "Mika", "text": "big", "n": '
        + "9" * 5000
        + "}\n"
        + '{"id": "v3", "speaker": "Mika", "text": "deep", "n": '
        + "[" * 5000
        + "]" * 5000
        + "}\n"
        + good.format("v4", "Bye", 4),
        encoding="utf-8",
    )
    proc = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(turns))
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"{turns}:2: " in proc.stderr and "4,300 digits" in proc.stderr, proc.stderr
    assert f"{turns}:3: " in proc.stderr and "nested too deeply" in proc.stderr, proc.stderr
    assert "imported 2 turns" in proc.stdout, proc.stdout
    db = data_dir / "personas" / "aria" / "memory.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("select source_id, content from messages order by id").fetchall()
    assert rows == [("v1", "Hello"), ("v4", "Bye")]
