"""`nexus-ark memory import --format chatgpt` as a person runs it: a ChatGPT export imported, embedded and
recalled; run again; broken conversations and unreadable files named with the exit codes scripts rely on."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.db import connect
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parent.parent / "data" / "chatgpt"


def _import(data_dir: Path, export: Path):  # type: ignore[no-untyped-def]
    return run_cli(
        "--data-dir",
        str(data_dir),
        "memory",
        "import",
        "--persona",
        "aria",
        "--format",
        "chatgpt",
        str(export),
    )


def _search(data_dir: Path, query: str, k: int = 1) -> list[dict]:
    proc = run_cli(
        "--data-dir", str(data_dir), "memory", "search", "--persona", "aria", "-k", str(k), "--json", query
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _messages(data_dir: Path) -> list[tuple[str, str]]:
    db = data_dir / "personas" / "aria" / "memory.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("select source_id, content from messages order by id").fetchall()


def test_an_export_imports_embeds_and_is_recalled_and_a_rerun_adds_nothing(data_dir: Path) -> None:
    first = _import(data_dir, DATA / "conversations.json")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(
        "imported 9 messages from 3 conversations (0 already there, 0 conversations skipped, "
        "3 messages on other branches left out) and embedded 9 items"
    ), first.stdout

    again = _import(data_dir, DATA / "conversations.json")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("imported 0 messages from 3 conversations (9 already there"), again.stdout
    assert len(_messages(data_dir)) == 9
    db = data_dir / "personas" / "aria" / "memory.db"
    reader = connect(db, read_only=True)
    timeline = [entry.summary for entry in ActivityLog(reader).query(kinds=["import"])]
    reader.close()
    assert timeline == ["9 messages imported from conversations.json (chatgpt)"], "a re-run adds none"

    # The reply after the person's message carries that message as its context, so either may come first
    # (since issue 37's query expansion, the reply does in this nine-item archive).
    hits = {h["source_id"]: h for h in _search(data_dir, "When does my new job start?", k=2)}
    assert "chatgpt:conv-job-0003:j-u1" in hits, hits
    job = hits["chatgpt:conv-job-0003:j-u1"]
    assert job["timestamp"].startswith("2024-07-01T09:01"), "the time the export gives, not today's"
    hits = _search(data_dir, "姉の恵子と京都へ行くのはいつ？", k=2)
    assert "chatgpt:conv-kyoto-0002:k-u1" in [h["source_id"] for h in hits], hits


def test_broken_conversations_are_named_exit_1_and_an_unreadable_file_exit_2_losing_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    malformed = DATA / "malformed.json"
    partly = _import(data_dir, malformed)
    assert partly.returncode == 1, (partly.stdout, partly.stderr)
    assert (
        f"{malformed}: conversation 3 ('Going round', id conv-cycle): its mapping has a cycle"
        in partly.stderr
    )
    assert partly.stderr.count("; skipped") == 5, partly.stderr
    assert "imported 2 messages from 2 conversations" in partly.stdout
    before = _messages(data_dir)
    assert [s for s, _ in before] == ["chatgpt:conv-good-a:g1-u", "chatgpt:conv-good-b:g2-u"]

    not_json = tmp_path / "conversations.json"
    not_json.write_text("<html>This is chat.html, not conversations.json</html>", encoding="utf-8")
    refused = _import(data_dir, not_json)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert f"{not_json} is not a ChatGPT export" in refused.stderr and "Traceback" not in refused.stderr
    assert _messages(data_dir) == before

    unknown = run_cli(
        "--data-dir",
        str(data_dir),
        "memory",
        "import",
        "--persona",
        "aria",
        "--format",
        "claude",
        str(malformed),
    )
    assert unknown.returncode == 2 and "invalid choice: 'claude'" in unknown.stderr


def _conversation(cid: str, said: str, metadata: str = "{}") -> str:
    node = (
        f'{{"id": "{cid}-u", "parent": null, "children": [], "message": {{"id": "{cid}-u", "author": '
        f'{{"role": "user"}}, "create_time": 1720000010.0, "content": {{"content_type": "text", "parts": '
        f'["{said}"]}}, "metadata": {metadata}, "recipient": "all"}}}}'
    )
    return (
        f'{{"title": "{cid}", "create_time": 1720000000.0, "conversation_id": "{cid}", '
        f'"current_node": "{cid}-u", "mapping": {{"{cid}-u": {node}}}}}'
    )


def test_conversations_python_cannot_read_are_named_and_skipped_and_the_rest_imports(
    data_dir: Path, tmp_path: Path
) -> None:
    # Valid JSON that json cannot make values of (a number over 4,300 digits: ValueError; nesting a thousand
    # deep: RecursionError) ended the import with a traceback and lost the conversations before and after.
    # One nesting is longer than the reader's 1 MB chunk, so stepping over it reads on.
    export = tmp_path / "conversations.json"
    export.write_text(
        "["
        + ",".join(
            [
                _conversation("c-before", "I grow basil on the balcony."),
                _conversation("c-big", "big", '{"n": ' + "9" * 5000 + "}"),
                _conversation("c-deep", "deep", '{"d": ' + "[" * 3000 + '"]}"' + "]" * 3000 + "}"),
                "[" * 600_000 + "]" * 600_000,
                _conversation("c-after", "My sister lives in Sapporo."),
            ]
        )
        + "]",
        encoding="utf-8",
    )
    proc = _import(data_dir, export)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"{export}: conversation 2: " in proc.stderr and "4,300 digits" in proc.stderr, proc.stderr
    assert f"{export}: conversation 3: " in proc.stderr and f"{export}: conversation 4: " in proc.stderr
    assert proc.stderr.count("nested too deeply") == 2 and proc.stderr.count("; skipped") == 3, proc.stderr
    assert "imported 2 messages from 2 conversations" in proc.stdout, proc.stdout
    assert [s for s, _ in _messages(data_dir)] == ["chatgpt:c-before:c-before-u", "chatgpt:c-after:c-after-u"]
