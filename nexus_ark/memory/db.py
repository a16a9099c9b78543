"""The one connection factory for memory databases.

Python's stdlib sqlite3 cannot load extensions on many builds (this machine's included), and sqlite-vec
is an extension. Where it can't, we use sqlean-py (SQLite with extension loading) and register it as
`pysqlite3` *before* sqlite_utils is imported, so sqlite_utils catches the same OperationalError class
that the connection raises.
"""

from __future__ import annotations

import sqlite3 as _stdlib_sqlite3
import sys
from pathlib import Path
from types import ModuleType


def _choose_sqlite() -> ModuleType:
    if hasattr(_stdlib_sqlite3.Connection, "enable_load_extension"):
        return _stdlib_sqlite3
    import sqlean

    sys.modules.setdefault("pysqlite3", sqlean)
    sys.modules.setdefault("pysqlite3.dbapi2", sqlean.dbapi2)
    return sqlean


sqlite = _choose_sqlite()

import sqlite_utils  # noqa: E402  (must follow the module selection above)
import sqlite_vec  # noqa: E402

from nexus_ark.errors import DatabaseError  # noqa: E402


def connect(path: Path | str) -> sqlite_utils.Database:
    """Open (creating if needed) a memory database with sqlite-vec loaded, WAL and sane pragmas."""
    where = str(path)
    try:
        conn = sqlite.connect(where, check_same_thread=False, isolation_level=None)
    except sqlite.Error as exc:
        raise DatabaseError(f"Cannot open the memory database {where}: {exc}.") from exc
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except (sqlite.Error, AttributeError) as exc:
        conn.close()
        raise DatabaseError(
            f"The sqlite-vec extension could not be loaded for {where}: {exc}.",
            hint="Run `nexus-ark doctor` to see what this Python's SQLite supports.",
        ) from exc
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        if where != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite.DatabaseError as exc:
        conn.close()
        raise DatabaseError(
            f"{where} is not a Nexus Ark memory database or is damaged: {exc}.",
            hint="It was left untouched. Restore it from backups/, or move it aside to start afresh.",
        ) from exc
    return sqlite_utils.Database(conn)


def vec_version(db: sqlite_utils.Database) -> str:
    return db.execute("select vec_version()").fetchone()[0]
