"""How long closing a memory database stops the other threads (the window's), by the way it is closed.

sqlean's Connection.close() (the SQLite module we load extensions with where the stdlib's cannot) keeps
the GIL while SQLite folds the WAL into the database file, so every other Python thread waits for the
whole checkpoint; statements run through execute() release it. A worker thread closes a memory.db whose
WAL holds --rows fresh messages (autocheckpoint off, as after a busy stretch), while the main thread ticks
every 1 ms and records its largest gap:

- raw close: the connection's close() as it comes (what MemoryStore.close did before);
- MemoryStore.close: `PRAGMA wal_checkpoint(PASSIVE)` through execute(), then close();
- a bare table with the same WAL, closed by that module and by Python's own sqlite3, for reference.

    .venv/bin/python -m bench.sqlite_close [--rows 20000] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from nexus_ark.memory.db import sqlite
from nexus_ark.memory.store import MemoryStore

TEXT = "the sea was calm that morning and the light moved slowly over the water " * 4


def _memory(path: Path, rows: int) -> MemoryStore:
    """A memory.db whose WAL holds `rows` messages not yet checkpointed."""
    store = MemoryStore(path)
    store.db.execute("PRAGMA wal_autocheckpoint = 0")
    with store.db.atomic():
        store.db.conn.executemany(
            "insert into messages (room, speaker, role, content, status, created_at) values (?,?,?,?,?,?)",
            [("main", "user", "user", f"{i} {TEXT}", "complete", "2026-11-22T10:00:00") for i in range(rows)],
        )
    return store


def _plain(module, path: Path, rows: int):
    """The same WAL through a bare connection of `module`: one table, no extension."""
    conn = module.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("create table t (x text)")
    conn.execute("begin")
    conn.executemany("insert into t values (?)", [(f"{i} {TEXT}",) for i in range(rows)])
    conn.execute("commit")
    return conn


def _largest_gap_ms(close: Callable[[], None]) -> float:
    done = threading.Event()

    def work() -> None:
        close()
        done.set()

    gaps = [0.0]
    worker = threading.Thread(target=work)
    last = time.perf_counter()
    worker.start()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    return round(max(gaps) * 1000, 1)


def run(rows: int, rounds: int) -> dict:
    kinds = ("memory_raw_close", "memory_store_close", "plain_module_close", "plain_stdlib_close")
    results: dict = {"rows": rows, "module": sqlite.__name__, **{k: [] for k in kinds}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(rounds):
            results["memory_raw_close"].append(
                _largest_gap_ms(_memory(folder / f"a{i}.db", rows).db.conn.close)
            )
            results["memory_store_close"].append(_largest_gap_ms(_memory(folder / f"b{i}.db", rows).close))
            results["plain_module_close"].append(
                _largest_gap_ms(_plain(sqlite, folder / f"c{i}.db", rows).close)
            )
            results["plain_stdlib_close"].append(
                _largest_gap_ms(_plain(sqlite3, folder / f"d{i}.db", rows).close)
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.rows, args.rounds)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
