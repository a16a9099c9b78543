"""Run by test_crash_safety in a process of its own, to be killed with SIGKILL: the persona writes a message
first on a model that writes slowly (a logic stand-in with a large model's capability record, so the message
is generated, not templated). Prints READY once the draft's first words are stored, then waits to be
killed."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator

from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatRequest, StreamChunk
from nexus_ark.runtime import life
from nexus_ark.runtime.scripted_mind import ScriptedMind

WORDS = ("I", "kept", "thinking", "about", "your", "exam", "today", "and", "wondered")


class SlowWriter(ScriptedMind):
    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        for i, word in enumerate(WORDS):
            yield StreamChunk(text=word + " ")
            if i == 3:  # the draft row is written at the first word: it surely exists now
                print("READY", flush=True)
            time.sleep(0.2)
        time.sleep(600)
        yield StreamChunk(text="how it went.", finish_reason="stop")


def main(data_dir: str) -> None:
    app = NexusApp(data_dir, backend_factory=lambda config: SlowWriter(parameters=7_000_000_000)).open()
    runtime = app.personas.runtime("aria")
    report = runtime.drives(record=False)
    reason = {"trigger": "drive", "drive": "curiosity", "level": 0.9, "why": "a crash test"}
    runtime.queue.call(
        "write first",
        lambda: life.write_first(runtime, "Write to the person first.", report, reason, threading.Event()),
    )


if __name__ == "__main__":
    main(sys.argv[1])
