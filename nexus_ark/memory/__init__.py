"""The persona's SQLite memory. Import `db` first: it picks the sqlite3 module before sqlite_utils loads."""

from nexus_ark.memory import db as _db  # noqa: F401  (side effect: sqlite module selection)
