"""Where warnings go: stderr when there is one, and always a rotating file in the data dir's logs/.

The windowed build has no console, so without the file every warning and crash of the window is lost.
Set up once per process by the command line (which also starts the window).
"""

from __future__ import annotations

import faulthandler
import logging
import logging.handlers
import os
import re
import sys
from pathlib import Path
from types import TracebackType
from typing import TextIO

LOG_FILE = "nexus-ark.log"
MAX_BYTES = 1_000_000
BACKUP_COUNT = 3  # nexus-ark.log plus .1 .. .3: at most about 4 MB
FILE_FORMAT = "%(asctime)s %(process)d %(threadName)s %(levelname)s %(name)s: %(message)s"
_installed: list[logging.Handler] = []
# A native crash (in Qt, llama.cpp, SQLite or Python itself) ends the process with no Python traceback and,
# in the windowed build, no console: faulthandler writes every thread's stack here instead. It stays empty
# until a crash; past CRASH_KEEP bytes the oldest crashes go.
CRASH_FILE = "crash.log"
CRASH_KEEP = 256 * 1024
_crash_file: list[TextIO] = []
# Libraries that log their routine at INFO: APScheduler two lines a minute for the persona's heartbeat,
# LiteLLM one per request. Their warnings and errors are kept; their INFO only with --verbose.
CHATTY_LIBRARIES = ("apscheduler", "LiteLLM", "httpx", "httpcore", "huggingface_hub", "urllib3")
# With --verbose, libraries log whole requests at DEBUG: the prompt (the soul, memories, the conversation)
# and the reply. They go to stderr, which the person watches; the log file, which people attach to bug
# reports and which stays on disk, gets them only when this variable is set to 1 (docs/privacy.md).
LOG_CONTENT_ENV = "NEXUS_ARK_LOG_CONTENT"
# user:password@ (or a key alone) inside a URL: "http://me:sk-...@host/v1" names the server and gives away
# the key. Masked wherever a URL is shown or logged, as an API key is never shown.
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@?#'\"<>]+@")


def masked_url(text: str) -> str:
    """`text` with the credentials of every URL in it replaced by *** ("http://***@host/v1")."""
    return _URL_CREDENTIALS.sub(r"\1***@", text) if "@" in text else text


class _Masking(logging.Formatter):
    """Formats a record, traceback included, with every URL's credentials masked."""

    def format(self, record: logging.LogRecord) -> str:
        return masked_url(super().format(record))


class _NoContent(logging.Filter):
    """The log file's filter with --verbose: libraries' DEBUG records (whole prompts and replies) stay out
    unless LOG_CONTENT_ENV asks for them; ours, and everything at INFO and above, go in."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.INFO or record.name.startswith("nexus_ark")


class _QuietLibraries(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        return not any(
            record.name == name or record.name.startswith(f"{name}.") or record.name.startswith(f"{name} ")
            for name in CHATTY_LIBRARIES
        )


def setup_logging(logs_dir: Path | None, *, verbose: bool = False) -> Path | None:
    """Log to stderr (warnings, or everything with verbose) and to logs_dir/nexus-ark.log (info and up).

    Returns the log file, or None when it could not be opened (then only stderr gets the messages, and
    a warning there says why). Calling it again replaces the handlers it installed before.
    """
    root = logging.getLogger()
    for handler in _installed:
        root.removeHandler(handler)
        handler.close()
    _installed.clear()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    if sys.stderr is not None:  # None in a windowed build
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(logging.DEBUG if verbose else logging.WARNING)
        console.setFormatter(_Masking("%(levelname)s %(name)s: %(message)s"))
        _installed.append(console)
    path: Path | None = None
    if logs_dir is not None:
        try:
            logs_dir.mkdir(parents=True, exist_ok=True)
            file_handler = logging.handlers.RotatingFileHandler(
                logs_dir / LOG_FILE, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8"
            )
        except OSError as exc:
            if sys.stderr is not None:
                print(f"warning: cannot write the log file in {logs_dir}: {exc.strerror}", file=sys.stderr)
        else:
            file_handler.setLevel(logging.DEBUG if verbose else logging.INFO)
            file_handler.setFormatter(_Masking(FILE_FORMAT))
            if os.environ.get(LOG_CONTENT_ENV) != "1":
                file_handler.addFilter(_NoContent())
            _installed.append(file_handler)
            path = logs_dir / LOG_FILE
            record_crashes(logs_dir)
    for handler in _installed:
        if not verbose:
            handler.addFilter(_QuietLibraries())
        root.addHandler(handler)
    logging.captureWarnings(True)
    # A crash of the window would otherwise vanish with its console-less process.
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _log_uncaught
    return path


def record_crashes(logs_dir: Path) -> Path | None:
    """Have a native crash write each thread's stack to logs_dir/crash.log (doctor tells of it). Left to
    whoever turned faulthandler on already (PYTHONFAULTHANDLER, pytest): they read the stacks on stderr."""
    if _crash_file:
        faulthandler.disable()
        _crash_file.pop().close()
    elif os.environ.get("PYTHONFAULTHANDLER") or faulthandler.is_enabled():
        return None
    path = logs_dir / CRASH_FILE
    try:
        if path.exists() and path.stat().st_size > CRASH_KEEP:
            kept = path.read_bytes()[-CRASH_KEEP // 2 :]
            path.write_bytes(kept[kept.find(b"\n") + 1 :])  # from a whole line
        crash_file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open while the process lives)
    except OSError as exc:
        logging.getLogger(__name__).warning("native crashes will not be recorded in %s: %s", path, exc)
        return None
    faulthandler.enable(file=crash_file, all_threads=True)
    _crash_file.append(crash_file)
    return path


def _log_uncaught(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    if not issubclass(kind, KeyboardInterrupt):
        logging.getLogger("nexus_ark").critical("uncaught exception", exc_info=(kind, value, tb))
    # The console handler (if any) has printed it with its traceback already.
    if sys.stderr is not None and not any(type(h) is logging.StreamHandler for h in _installed):
        sys.__excepthook__(kind, value, tb)
