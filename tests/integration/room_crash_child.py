"""Run by test_room_crash in a process of its own, to be killed with SIGKILL: Aria and ひかり in a room, the
person asks for a long story, and once Aria's answer has streamed for a second (its words journaled in her
memory every half second) it prints READY and waits to be killed mid-answer."""

from __future__ import annotations

import sys
import time

from nexus_ark.app import NexusApp
from nexus_ark.rooms.conversation import Said, Streamed

ASK = "Aria, tell me a long story about the sea, with many details."


def main(data_dir: str) -> None:
    app = NexusApp(data_dir).open()
    room = app.open_room(app.room_for(["aria", "hikari"], "list"))
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
