"""Ctrl-C while a reply has not started yet (a model still loading, a slow first token) stops it at once,
also when the signal was taken by another thread than the one reading the reply (runtime/streaming.py).
Run in a fresh process, so the signal and its handler are the real ones."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import subprocess_env

# The press is a SIGINT aimed at a worker thread: what the kernel does with Ctrl-C's process-wide signal
# when that thread happens to be running. The turn waits for its stop for up to 30 s, as a stalled model does.
PROGRAM = """
import signal, threading, time
from nexus_ark.runtime.streaming import stream_turn
from nexus_ark.runtime.work_queue import WorkQueue

def start(chat, stop):
    yield "stopped" if stop.wait(30) else "never stopped"

def press():
    time.sleep(1.0)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

threading.Thread(target=press, daemon=True).start()
began = time.monotonic()
items = list(stream_turn(WorkQueue("aria"), "turn", lambda: None, start, None, lambda chat: None))
print(items, round(time.monotonic() - began, 1))
"""


def test_ctrl_c_taken_by_another_thread_stops_a_reply_that_has_not_started() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, env=subprocess_env()
    )
    assert done.returncode == 0, done.stderr
    items, seconds = done.stdout.rsplit(" ", 1)
    assert items == "['stopped']"
    assert float(seconds) < 10  # not the 30 s the turn would otherwise wait
