"""Run by test_crash_safety in a process of its own, to be killed with SIGKILL: a day's conversation, a
planned event, then a dream on the bundled model and a chat turn at once. Prints READY once the dream has
finished a stage and the reply has streamed for a second, then waits to be killed."""

from __future__ import annotations

import sys
import threading
import time
from datetime import timedelta

from nexus_ark.app import NexusApp
from nexus_ark.clock import iso
from nexus_ark.memory.event_queue import EventQueue

TALK = [
    "My sister Yui turns twenty on Friday and I made her a blue bowl in pottery class.",
    "We will celebrate at Trattoria Luna near the station.",
    "I am nervous about my pastry exam next week.",
]


def main(data_dir: str) -> None:
    app = NexusApp(data_dir).open()
    runtime = app.personas.runtime("aria")
    memory = app.personas.memory("aria")
    yesterday = app.clock.now() - timedelta(days=1)
    for i, text in enumerate(TALK):
        memory.messages.add(
            speaker="user", role="user", content=text, created_at=iso(yesterday + timedelta(minutes=i))
        )
    EventQueue(memory, app.clock).enqueue(
        "reminder", {"what": "ask how the exam went"}, key="exam", delay=timedelta(days=2)
    )
    stage_done = threading.Event()
    runtime.dreams.start(
        day=yesterday.astimezone().date(), progress=lambda p: p.index >= 2 and stage_done.set()
    )
    stage_done.wait(600)
    first = None
    told = False
    for _item in runtime.send("Tell me a long story about the sea, with many details."):
        first = first or time.monotonic()
        # The reply is journaled every half second: kill once some of it has surely been written.
        if not told and time.monotonic() - first > 1.0:
            print("READY", flush=True)
            told = True
    if not told:  # the whole reply came in under a second: it is complete, kill now
        print("READY", flush=True)
    time.sleep(600)  # the reply may end before the kill: the process stays alive until killed


if __name__ == "__main__":
    main(sys.argv[1])
