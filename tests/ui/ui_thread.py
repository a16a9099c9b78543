"""Which files the UI thread opens: one audit hook for the whole run (an audit hook cannot be removed), which
records nothing unless a test is watching."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_roots: list[str] = []
_opened: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _roots or threading.current_thread() is not threading.main_thread():
        return
    path = str(args[0])
    if any(path.startswith(root) for root in _roots):
        _opened.append(path)


sys.addaudithook(_audit)


@contextmanager
def files_opened_on_the_ui_thread(*roots: Path) -> Iterator[list[str]]:
    """The files under roots that the UI thread opens inside the block, in order."""
    _opened.clear()
    _roots[:] = [str(root) for root in roots]
    try:
        yield _opened
    finally:
        _roots.clear()
