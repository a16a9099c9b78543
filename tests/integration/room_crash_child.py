"""Run by test_room_crash in a process of its own, to be killed with SIGKILL: Aria and ひかり in a room, the
person asks for a long story, and once Aria's answer has streamed for a second (its words journaled in her
memory every half second) it prints READY and waits to be killed mid-answer."""

from __future__ import annotations

import sys
import time

from nexus_ark.app import NexusApp
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.rooms.conversation import Said, Streamed

ASK = "Aria, tell me a long story about the sea, with many details."


def main(data_dir: str) -> None:
    # What is tested is what a kill leaves on disk, not the model: a scripted answer streamed slowly (the
    # bundled 135M model sometimes ended its whole story within the second, and there was nothing to cut).
    story = " ".join(f"The sea was calm on day {n}, and the gulls flew low." for n in range(1, 60))
    backend = ScriptedBackend([story], delay_s=0.05)
    app = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    room = app.rooms.open(app.rooms.room_for(["aria", "hikari"], "list"))
    print(f"ROOM {room.slug}", flush=True)
    first = None
    for event in room.say(ASK):
        if isinstance(event, Streamed) and event.slug == "aria":
            first = first or time.monotonic()
            if time.monotonic() - first > 1.0:
                print("READY", flush=True)
                time.sleep(600)  # killed here, mid-answer
        elif isinstance(event, Said) and event.line.author == "aria":
            print("COMPLETE", flush=True)  # the answer ended within a second: nothing was cut
            time.sleep(600)


if __name__ == "__main__":
    main(sys.argv[1])
