"""A line typed at the terminal, with a Ctrl-C that is never lost: what the chat and room prompts read.

input() waits in a read() of the terminal. Ctrl-C's SIGINT goes to the whole process, and any of its threads
may take it: with a reply still being spoken, a model or a voice loading, one of those threads often does
(seen under load: the read was woken, found the signal gone and went back to waiting). Python then only
notices the Ctrl-C when the main thread runs again, after the next Enter. So on POSIX terminals the line is
read here instead: the main thread waits on the terminal and on the signal module's wakeup pipe together,
which every thread's signal handler writes to; either wakes it, and the KeyboardInterrupt is raised at once.
Elsewhere (Windows, a pipe) it is input().

A question asked from a worker thread (may this tool run?) reads with read_answer: it gives way when the
turn that asked is stopped, so the line typed next is the prompt's, not a stale question's.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from collections.abc import Callable


def read_line(prompt: str) -> str:
    """Like input(prompt): the line without its newline; EOFError on Ctrl-D at an empty line,
    KeyboardInterrupt on Ctrl-C (whichever thread took the signal)."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread() or not _on_tty():
        return input(prompt)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    try:
        previous = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter
        os.close(wake_r)
        os.close(wake_w)
        return input(prompt)
    try:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        return _read(sys.stdin.fileno(), wake_r)
    finally:
        signal.set_wakeup_fd(previous)
        os.close(wake_r)
        os.close(wake_w)


def read_answer(stopped: Callable[[], bool]) -> str | None:
    """A line typed at the terminal, from any thread (its prompt already shown): the line without its
    newline, "" at the end of input, or None once `stopped()` is true before a line came (checked every
    fifth of a second; the terminal hands over whole lines, so none is cut in two). Off a POSIX terminal,
    sys.stdin.readline(): a pipe's next line is the answer, and nothing else waits for it."""
    if stopped():
        return None
    if os.name != "posix" or not _on_tty():
        return sys.stdin.readline().removesuffix("\n")
    fd = sys.stdin.fileno()
    data = b""
    while not data.endswith(b"\n"):
        if stopped():
            return None
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    return _decoded(data)


def _on_tty() -> bool:
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # replaced or closed streams
        return False


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _read(fd: int, wake: int) -> str:
    data = b""
    while True:
        # A signal taken by the main thread raises here (select retries EINTR after running handlers);
        # one taken by another thread wakes `wake`, and its handler runs as this loop goes on.
        ready, _, _ = select.select([fd, wake], [], [])
        if wake in ready:
            _drain(wake)  # Python runs the signal's handler before this loop's next line
            continue
        chunk = os.read(fd, 4096)  # the terminal hands over at most one line at a time
        if not chunk:
            if data:
                break  # Ctrl-D after some text, then again: the text so far, as input() gives it
            raise EOFError
        data += chunk
        if data.endswith(b"\n"):
            break
    return _decoded(data)


def _decoded(data: bytes) -> str:
    """The line as input() gives it: in the terminal's encoding, without its newline."""
    encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
    return data.decode(encoding, errors="replace").removesuffix("\n").removesuffix("\r")
