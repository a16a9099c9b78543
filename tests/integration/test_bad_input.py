"""Bad input, as people meet it on the command line: each case gets a clear message naming the file, field
or value, the right hint, exit code 2 where nothing could be done, and nothing is lost."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import tomli_w

from nexus_ark.memory.store import MemoryStore
from tests.conftest import run_cli as _run_cli
from tests.integration.conftest import free_port

pytestmark = pytest.mark.integration


def run_cli(data_dir: Path, *args: str, stdin: str = "", timeout: float = 600) -> subprocess.CompletedProcess:
    return _run_cli("--data-dir", str(data_dir), *args, stdin=stdin, timeout=timeout)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _memory_with_history(data_dir: Path, turns: int = 400) -> Path:
    """aria's memory.db with enough history to span many pages."""
    assert run_cli(data_dir, "persona", "list").returncode == 0
    path = data_dir / "personas" / "aria" / "memory.db"
    lines = [
        json.dumps(
            {
                "id": f"t{i}",
                "speaker": "user" if i % 2 else "Aria",
                "text": f"Day {i}: we talked about the lighthouse, the tide and a recipe for plum jam {i}.",
                "timestamp": f"2026-01-{1 + i % 28:02d}T10:{i % 60:02d}:00",
            }
        )
        for i in range(turns)
    ]
    source = data_dir.parent / "history.jsonl"
    source.write_text("\n".join(lines), encoding="utf-8")
    imported = run_cli(data_dir, "memory", "import", "--persona", "aria", str(source))
    assert imported.returncode == 0, imported.stderr
    return path


def _damage_index_pages(path: Path) -> None:
    """Overwrite the pages of the archive and its keyword indexes; the header and schema stay intact."""
    store = MemoryStore(path)
    store.db.execute("pragma wal_checkpoint(truncate)")
    page_size = store.db.execute("pragma page_size").fetchone()[0]
    pages = [
        row[0]
        for row in store.db.execute(
            "select pageno from dbstat where name like 'items%' and name not like '%config'"
        ).fetchall()
    ]
    store.close()
    assert len(pages) > 20, "the test database is too small to damage realistically"
    with path.open("r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * page_size)
            fh.write(b"\xa5" * page_size)


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """A file (or folder) nobody may change, not even root (CI runs as root, so permission bits alone
    would not stop it)."""
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"this filesystem cannot make {path.name} immutable: {made.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.slow
def test_searching_a_damaged_database_says_damaged_and_points_to_backups(data_dir: Path) -> None:
    path = _memory_with_history(data_dir)
    _damage_index_pages(path)
    before = _digest(path)
    proc = run_cli(data_dir, "memory", "search", "--persona", "aria", "--mode", "fts", "plum jam")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "damaged" in proc.stderr and str(path) in proc.stderr and "backups" in proc.stderr
    assert _digest(path) == before  # left untouched


@pytest.mark.slow
def test_sending_to_a_damaged_database_says_damaged_not_disk_space(data_dir: Path) -> None:
    path = _memory_with_history(data_dir)
    _damage_index_pages(path)
    proc = run_cli(data_dir, "chat", "--persona", "aria", stdin="Do you remember the plum jam?\n")
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr
    assert "damaged" in proc.stderr and "backups" in proc.stderr
    assert "disk space" not in proc.stderr


def test_an_immutable_memory_db_is_named_as_read_only(data_dir: Path) -> None:
    assert run_cli(data_dir, "persona", "list").returncode == 0
    path = data_dir / "personas" / "aria" / "memory.db"
    MemoryStore(path).close()
    before = _digest(path)
    with immutable(path):
        proc = run_cli(data_dir, "chat", "--persona", "aria", stdin="Hello!\n")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "read-only" in proc.stderr and str(path) in proc.stderr
    assert "damaged" not in proc.stderr and "restore" not in proc.stderr.lower()
    assert _digest(path) == before


def test_a_read_only_persona_folder_is_named_as_read_only_not_damaged(data_dir: Path) -> None:
    assert run_cli(data_dir, "persona", "list").returncode == 0
    folder = data_dir / "personas" / "aria"
    with immutable(folder):
        proc = run_cli(data_dir, "chat", "--persona", "aria", stdin="Hello!\n")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert str(folder) in proc.stderr
    assert "read" in proc.stderr.lower() and "permission" in proc.stderr.lower()
    assert "damaged" not in proc.stderr and "backup" not in proc.stderr.lower()


@pytest.mark.parametrize("kind", ["litellm:openai/text-embedding-3-small", "ollama:nomic-embed-text"])
@pytest.mark.slow
def test_a_network_embedder_that_is_down_degrades_chat_to_keyword_recall(data_dir: Path, kind: str) -> None:
    assert run_cli(data_dir, "persona", "list").returncode == 0
    config = data_dir / "config.toml"
    closed = f"http://127.0.0.1:{free_port()}" + ("/v1" if kind.startswith("litellm") else "")
    settings = tomllib.loads(config.read_text(encoding="utf-8"))
    settings["embedder"] = {**settings.get("embedder", {}), "spec": kind, "api_base": closed}
    config.write_text(tomli_w.dumps(settings), encoding="utf-8")
    proc = run_cli(
        data_dir, "chat", "--persona", "aria", stdin="My sister is called Hana.\nWhat is her name?\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len([line for line in proc.stdout.splitlines() if line.strip()]) >= 2  # both turns answered
    # Said once, in words, naming the app's embedder setting rather than the persona's model.
    assert proc.stderr.count("warning: Recall by meaning is unavailable") == 1
    assert "embedder" in proc.stderr and "persona's model settings" not in proc.stderr
    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db")
    try:
        assert [m.content for m in store.messages.recent() if m.role == "user"] == [
            "My sister is called Hana.",
            "What is her name?",
        ]
        # Kept for the embedder's return: keyword search finds it now.
        assert store.archive.search("Hana", None, mode="fts")
    finally:
        store.close()

    search = run_cli(data_dir, "memory", "search", "--persona", "aria", "sister Hana")
    assert search.returncode == 0 and "Hana" in search.stdout
    assert "warning: searching by keywords only" in search.stderr and "Traceback" not in search.stderr
    vector = run_cli(data_dir, "memory", "search", "--persona", "aria", "--mode", "vector", "sister")
    assert vector.returncode == 2 and "Traceback" not in vector.stderr and "embedder" in vector.stderr


@pytest.mark.parametrize("flag", ["--since", "--until"])
def test_a_time_filter_that_is_not_a_time_is_refused(data_dir: Path, flag: str) -> None:
    assert run_cli(data_dir, "persona", "list").returncode == 0
    proc = run_cli(data_dir, "memory", "search", "--persona", "aria", flag, "yesterday", "jam")
    assert proc.returncode == 2
    assert f"{flag} 'yesterday'" in proc.stderr and "2026-11-21" in proc.stderr


@pytest.mark.slow
def test_a_one_megabyte_message_is_kept_and_refused_in_words(data_dir: Path) -> None:
    message = "word " * 200_000  # 1 MB on one line
    proc = run_cli(data_dir, "chat", "--persona", "aria", stdin=message + "\n")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "too long" in proc.stderr and "context" in proc.stderr
    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db")
    try:
        kept = [m for m in store.messages.recent() if m.role == "user"]
        assert len(kept) == 1 and len(kept[0].content) == len(message.strip())  # nothing lost
    finally:
        store.close()


def test_a_deeply_nested_persona_or_config_toml_is_named_never_a_traceback(data_dir: Path) -> None:
    # tomllib gives up on these with RecursionError, which ended every command (persona list listed nothing).
    deep = "x = " + "[" * 3000 + "]" * 3000 + "\n"
    assert run_cli(data_dir, "persona", "list").returncode == 0  # seeds the shipped personas
    persona = data_dir / "personas" / "aria" / "persona.toml"
    persona.write_text(persona.read_text(encoding="utf-8") + deep, encoding="utf-8")
    listed = run_cli(data_dir, "persona", "list")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, (listed.stdout, listed.stderr)
    rows = {line.split("\t")[0]: line for line in listed.stdout.splitlines()}
    assert "(unusable)" in rows["aria"] and "nested too deeply" in rows["aria"], listed.stdout
    assert "(unusable)" not in rows["hikari"], listed.stdout

    config = data_dir / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + deep, encoding="utf-8")
    refused = run_cli(data_dir, "persona", "list")
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert str(config) in refused.stderr and "nested too deeply" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
