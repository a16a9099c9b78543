"""The one connection factory for memory databases.

Python's stdlib sqlite3 cannot load extensions on many builds (this machine's included), and sqlite-vec
is an extension. Where it can't, we use sqlean-py (SQLite with extension loading) and register it as
`pysqlite3` *before* sqlite_utils is imported, so sqlite_utils catches the same OperationalError class
that the connection raises.
"""

from __future__ import annotations

import contextlib
import sqlite3 as _stdlib_sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote


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
from nexus_ark.notices import notice  # noqa: E402


class OwnerThreadError(RuntimeError):
    """A statement on a guarded owner connection from a thread that does not own it (a bug in our code: the
    work belongs on the persona's queue). Not a sqlite error, so no `except sqlite.Error` swallows it."""


_get_ident = threading.get_ident
_cursor = sqlite.Connection.cursor
_execute, _executemany, _executescript = (
    sqlite.Cursor.execute,
    sqlite.Cursor.executemany,
    sqlite.Cursor.executescript,
)


# The classes the guarded ones extend: those of the module chosen above (stdlib sqlite3 or sqlean), which
# share sqlite3's interface; mypy reads them as sqlite3's.
if TYPE_CHECKING:
    from sqlite3 import Connection as BaseConnection
    from sqlite3 import Cursor as BaseCursor
else:
    BaseConnection, BaseCursor = sqlite.Connection, sqlite.Cursor


class GuardedCursor(BaseCursor):
    """A cursor of a GuardedConnection: running a statement on it checks the thread too (a cursor made on
    the owner's thread and handed to another). Fetching rows of a statement already running is not checked."""

    def _check_thread(self) -> None:
        cast(GuardedConnection, self.connection).check_thread()  # it is made only by a GuardedConnection

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:
        self._check_thread()
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> GuardedCursor:
        self._check_thread()
        return super().executemany(sql, parameters)

    def executescript(self, script: str, /) -> BaseCursor:
        self._check_thread()
        return super().executescript(script)


class GuardedConnection(BaseConnection):
    """A connection that can refuse statements from threads other than its owner's, in Python, before SQLite
    is entered (runtime/owner_trace.guard_owner sets `owner_threads`; None, the default, checks nothing).

    Not SQLite's authorizer: its callback takes the interpreter lock while SQLite holds the connection's
    mutex, so two threads on one connection deadlock (one holds the interpreter lock and waits for the
    mutex, the other holds the mutex and waits for the interpreter lock). Every way sqlite_utils and our
    code run a statement comes through here: execute, executemany, executescript, cursor (and the cursor's
    own execute*), commit, rollback, `with conn:` and backup. Not checked: fetching rows, and the
    properties (in_transaction, total_changes, isolation_level)."""

    owner_threads: frozenset[int] | None = None  # the threads allowed; None: any
    owner_name = ""  # what refusals call the connection (the persona and file)
    owner_thread_name = ""  # the thread that owns it

    def check_thread(self) -> None:
        threads = self.owner_threads
        if threads is not None and _get_ident() not in threads:
            raise self._refusal()

    def _refusal(self) -> OwnerThreadError:
        return OwnerThreadError(
            f"Thread {threading.current_thread().name!r} ran a statement on {self.owner_name}, which only "
            f"its queue's thread {self.owner_thread_name!r} may use (strict owner mode, "
            "NEXUS_ARK_STRICT_OWNER): run it on the queue (app.personas.change_memory, runtime.queue.call) "
            "or borrow the connection while the queue is idle (app.personas.memory)."
        )

    def cursor(self, factory: Any = GuardedCursor) -> Any:
        self.check_thread()
        return _cursor(self, factory)

    # These check once, then go straight to the base classes (no second check in cursor() and execute).
    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:
        threads = self.owner_threads
        if threads is not None and _get_ident() not in threads:
            raise self._refusal()
        return _execute(_cursor(self, GuardedCursor), sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> GuardedCursor:
        self.check_thread()
        return _executemany(_cursor(self, GuardedCursor), sql, parameters)

    def executescript(self, script: str, /) -> GuardedCursor:
        self.check_thread()
        return _executescript(_cursor(self, GuardedCursor), script)

    def commit(self) -> None:
        self.check_thread()
        super().commit()

    def rollback(self) -> None:
        self.check_thread()
        super().rollback()

    def __exit__(self, *exc: Any) -> Any:
        self.check_thread()
        return super().__exit__(*exc)

    def backup(self, *args: Any, **kwargs: Any) -> None:
        self.check_thread()
        super().backup(*args, **kwargs)


def connect(path: Path | str, *, read_only: bool = False) -> MemoryDatabase:
    """Open (creating if needed) a memory database with sqlite-vec loaded, WAL and sane pragmas.

    read_only: a connection that can never write (for searches and views); the file must exist."""
    where = str(path)
    try:
        if read_only:
            if not Path(where).is_file():
                raise DatabaseError(notice("There is no memory database at {path}.", path=where))
            uri = f"file:{quote(Path(where).resolve().as_posix())}?mode=ro"
            conn = sqlite.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        else:
            # GuardedConnection checks nothing until owner_trace.guard_owner arms it (strict mode, tests);
            # unarmed it costs nothing measurable (a select: 0.9 to 1.0 times a plain connection's time).
            conn = sqlite.connect(
                where, check_same_thread=False, isolation_level=None, factory=GuardedConnection
            )
    except sqlite.Error as exc:
        raise database_error(exc, where) from exc
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except (sqlite.Error, AttributeError) as exc:
        conn.close()
        raise DatabaseError(
            notice(
                "The sqlite-vec extension could not be loaded for {path}: {problem}.",
                path=where,
                problem=str(exc),
            ),
            hint=notice("Run `nexus-ark doctor` to see what this Python's SQLite supports."),
        ) from exc
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        if where != ":memory:" and not read_only:
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite.Error as exc:
        conn.close()
        raise database_error(exc, where) from exc
    return MemoryDatabase(conn, read_only=read_only)


class MemoryDatabase(sqlite_utils.Database):
    """sqlite_utils' Database whose outermost atomic() takes the write lock at once (BEGIN IMMEDIATE).

    A deferred BEGIN reads first and asks for the write lock at its first write; when another connection
    (the persona's runtime, a background embedder, an import) committed in between, SQLite cannot wait
    and answers "database is locked" at once. Taking the lock first makes the busy timeout apply instead.
    Read-only connections keep the deferred BEGIN (they never write)."""

    def __init__(self, conn: Any, *, read_only: bool = False) -> None:
        super().__init__(conn)
        self.read_only = read_only

    @contextlib.contextmanager
    def atomic(self) -> Iterator[MemoryDatabase]:
        if self.read_only or self.conn.in_transaction:
            with super().atomic():
                yield self
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.conn.rollback()
            raise
        else:
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.rollback()
                raise


def database_error(exc: BaseException, path: Path | str) -> DatabaseError:
    """What a SQLite failure on a memory database means for the person, and what to do about it.

    The same words everywhere (opening, sending, searching): a damaged file, a read-only one and a full disk
    need different remedies, and pointing at the wrong one costs people their data."""
    text = str(exc)
    low = text.lower()
    where = Path(path)
    at, folder = str(where), str(where.parent)
    if "readonly" in low or "read-only" in low or "permission" in low or "access permission" in low:
        return DatabaseError(
            notice(
                "Nexus Ark cannot write the memory database {path}: the file or its folder is read-only "
                "({problem}).",
                path=at,
                problem=text,
            ),
            hint=notice(
                "Make {path} and its folder {folder} writable for your user (check permissions and "
                "attributes), then try again. Nothing in it was changed.",
                path=at,
                folder=folder,
            ),
        )
    if "disk is full" in low or "database or disk is full" in low or "no space" in low:
        return DatabaseError(
            notice("The memory database {path} could not be written: the disk is full.", path=at),
            hint=notice("Free some disk space, then try again. What was already saved is safe."),
        )
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return DatabaseError(
            notice("The memory database {path} is damaged ({problem}).", path=at, problem=text),
            hint=notice(
                "It was left untouched. Restore a copy from the backups/ folder of your data folder "
                "(or move {name} aside to start this persona's memory afresh).",
                name=where.name,
            ),
        )
    if "locked" in low or "busy" in low:
        return DatabaseError(
            notice(
                "The memory database {path} is busy: another program is writing it ({problem}).",
                path=at,
                problem=text,
            ),
            hint=notice(
                "Close other programs that open it (a database browser, a second Nexus Ark), then try again."
            ),
        )
    if "unable to open" in low:
        return DatabaseError(
            notice(
                "The memory database {path} cannot be opened ({problem}): its folder may be read-only, "
                "missing or not yours.",
                path=at,
                problem=text,
            ),
            hint=notice(
                "Check the permissions of {folder}: you must be able to create files in it (SQLite "
                "keeps memory.db-wal and memory.db-shm beside memory.db). Nothing was changed.",
                folder=folder,
            ),
        )
    return DatabaseError(notice("The memory database {path} failed: {problem}.", path=at, problem=text))


def inserted_id(cursor: Any) -> int:
    """The id of the row an insert just made (sqlite sets lastrowid on every insert)."""
    row_id = cursor.lastrowid
    if row_id is None:
        raise RuntimeError("the insert made no row")
    return int(row_id)


def vec_version(db: sqlite_utils.Database) -> str:
    return db.execute("select vec_version()").fetchone()[0]


def database_bytes(db: sqlite_utils.Database) -> int:
    """The database's own size (pages in use and free), not the write-ahead log's, which comes and goes."""
    pages = db.execute("pragma page_count").fetchone()[0]
    return int(pages * db.execute("pragma page_size").fetchone()[0])


def capabilities() -> str:
    """What this machine's SQLite offers memory.db, in a line (`nexus-ark doctor`): its version and driver,
    sqlite-vec's version and FTS5 with the trigram tokenizer. Raises what a missing piece raises."""
    db = connect(":memory:")
    try:
        db.execute("create virtual table t using fts5(x, tokenize='trigram')")
        return (
            f"SQLite {db.execute('select sqlite_version()').fetchone()[0]} via {sqlite.__name__}, "
            f"sqlite-vec {vec_version(db)}, FTS5 with trigram"
        )
    finally:
        db.close()
