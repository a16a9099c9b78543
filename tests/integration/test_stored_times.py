"""Times out of range (issue 33, item 1): a line dated 0001-01-01 once went into memory.db through an import,
the import ended in a traceback ("year 0 is out of range"), and from then on every chat with that persona
crashed, in the archive's ranking (a naive time) and in the prompt's episode window (OverflowError, a time
with a zone). Now such a time is refused where it comes in, naming the file, the line and the value, and a
memory.db that already holds one (written by an older version) chats normally."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nexus_ark.memory.importer import ImportedTurn, ImportReport, TurnWriter, on_store
from nexus_ark.memory.store import MemoryStore
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

GOOD = {
    "id": "g1",
    "speaker": "Mika",
    "text": "I adopted a cat named Miso.",
    "timestamp": "2026-01-01T10:00:00",
}


def _data(data_dir: Path) -> str:
    assert run_cli("--data-dir", str(data_dir), "persona", "list").returncode == 0  # seeds the personas
    return str(data_dir)


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"]
)
def test_a_jsonl_line_dated_out_of_range_is_refused_naming_file_line_and_value(
    data_dir: Path, tmp_path: Path, stamp: str
) -> None:
    path = tmp_path / "turns.jsonl"
    bad = {"id": "b1", "speaker": "Mika", "text": "from long ago", "timestamp": stamp}
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    proc = run_cli("--data-dir", _data(data_dir), "memory", "import", "--persona", "aria", str(path))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert f"{path}:2:" in proc.stderr and "timestamp" in proc.stderr and stamp in proc.stderr, proc.stderr
    assert "out of range" in proc.stderr
    assert proc.stdout.startswith("imported 1 turns"), proc.stdout  # the good line is kept
    with sqlite3.connect(data_dir / "personas" / "aria" / "memory.db") as db:
        stored = [r[0] for r in db.execute("select created_at from messages where source_id is not null")]
    assert stored == ["2026-01-01T10:00:00"]


def test_a_chatgpt_create_time_of_year_1_is_refused_and_its_message_kept(
    data_dir: Path, tmp_path: Path
) -> None:
    year_1 = -62135596800.0  # 0001-01-01T00:00:00Z, which datetime.fromtimestamp accepts
    mapping = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["u1"]},
        "u1": {
            "id": "u1",
            "parent": "root",
            "children": ["a1"],
            "message": {
                "id": "u1",
                "author": {"role": "user"},
                "create_time": year_1,
                "content": {"content_type": "text", "parts": ["Do you remember the lighthouse?"]},
            },
        },
        "a1": {
            "id": "a1",
            "parent": "u1",
            "children": [],
            "message": {
                "id": "a1",
                "author": {"role": "assistant"},
                "create_time": 1720000020.0,
                "content": {"content_type": "text", "parts": ["The one by the harbour, yes."]},
            },
        },
    }
    export = [
        {
            "title": "Lighthouse",
            "create_time": 1720000000.0,
            "conversation_id": "c-old",
            "mapping": mapping,
            "current_node": "a1",
        }
    ]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    proc = run_cli(
        "--data-dir",
        _data(data_dir),
        "memory",
        "import",
        "--persona",
        "aria",
        "--format",
        "chatgpt",
        str(path),
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert str(path) in proc.stderr and "'Lighthouse'" in proc.stderr
    assert "message u1: create_time" in proc.stderr
    assert "(0001-01-01): the year 1 is out of range" in proc.stderr
    with sqlite3.connect(data_dir / "personas" / "aria" / "memory.db") as db:
        stored = dict(db.execute("select content, created_at from messages where source_id like 'chatgpt:%'"))
    assert set(stored) == {"Do you remember the lighthouse?", "The one by the harbour, yes."}
    assert all(stamp.startswith("2024-07-03") for stamp in stored.values()), stored  # from around it


@pytest.mark.slow
def test_a_persona_whose_memory_already_holds_year_1_rows_chats_normally(data_dir: Path) -> None:
    """As an older version left it: year-1 rows, naive and with a zone, in messages and the archive (written
    as its importer wrote them, past the check at the boundary), then a real turn that recalls them."""
    data = _data(data_dir)
    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db")
    try:
        writer = TurnWriter(on_store(store), ImportReport())
        for n, stamp in enumerate(["0001-01-01T00:00:00", "0001-01-01T03:00:00+05:00"]):
            writer.add(
                ImportedTurn(
                    source_id=f"old-{n}",
                    speaker="Mika",
                    role="user",
                    text=f"We lit the harbour lanterns together, evening {n}.",
                    created_at=stamp,
                )
            )
        writer.flush()
        assert (
            store.db.execute("select count(*) from items where created_at like '0001-%'").fetchone()[0] == 2
        )
    finally:
        store.close()
    proc = run_cli(
        "--data-dir", data, "chat", "--persona", "aria", stdin="Do you remember the harbour lanterns?\n"
    )
    assert "Traceback" not in proc.stderr and "out of range" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "the persona answered"
    search = run_cli("--data-dir", data, "memory", "search", "--persona", "aria", "harbour lanterns")
    assert search.returncode == 0 and "harbour lanterns" in search.stdout, search.stderr
    drives = run_cli("--data-dir", data, "drives", "--persona", "aria")
    assert drives.returncode == 0 and "Traceback" not in drives.stderr, drives.stderr
