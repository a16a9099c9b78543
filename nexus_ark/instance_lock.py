"""One Nexus Ark process per data directory: two writers on one memory would lose messages."""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout

from nexus_ark.errors import InstanceLockedError
from nexus_ark.notices import notice


class InstanceLock:
    def __init__(self, lock_file: Path) -> None:
        self.lock_file = lock_file
        self._lock = FileLock(str(lock_file), timeout=0)
        self._pid_file = lock_file.with_suffix(".pid")

    def acquire(self) -> None:
        try:
            self._lock.acquire()
        except Timeout:
            holder = self._read_holder()
            who = notice(" (process {pid})", pid=holder) if holder else ""
            raise InstanceLockedError(
                notice(
                    "Another Nexus Ark{who} is already using the data directory {path}.",
                    who=who,
                    path=str(self.lock_file.parent),
                ),
                hint=notice("Close the other window or terminal chat first, or use another --data-dir."),
            ) from None
        self._pid_file.write_text(str(os.getpid()), encoding="utf-8")

    def release(self) -> None:
        if self._lock.is_locked:
            self._pid_file.unlink(missing_ok=True)
            self._lock.release()

    def _read_holder(self) -> str:
        try:
            return self._pid_file.read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
