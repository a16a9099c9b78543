"""Run by test_soul_crash in a process of its own: the persona proposes a change to its soul, the person
accepts it, and the process kills itself with SIGKILL at the point named on the command line (before the
file is replaced, halfway through writing it, or after it is replaced but before the version is marked)."""

from __future__ import annotations

import os
import signal
import sys

import nexus_ark.soul.keeper as keeper
from nexus_ark.app import NexusApp
from nexus_ark.soul.records import SoulRecords

NEW_TEXT = "- Short replies, and a haiku when the evening is quiet."


def die(*_args: object, **_kwargs: object) -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def main(data_dir: str, point: str) -> None:
    app = NexusApp(data_dir).open()
    runtime = app.personas.runtime("aria")
    proposal = runtime.soul.call(
        "propose", lambda k: k.propose("How you speak", NEW_TEXT, "haiku evenings", [], "tool")
    )
    print(f"PROPOSAL {proposal.id}", flush=True)
    if point == "before_file":
        keeper.write_soul = die  # type: ignore[assignment]
    elif point == "mid_write":
        os.fsync = die  # type: ignore[assignment]  # the temporary file is written, not renamed
    elif point == "after_file":
        SoulRecords.mark_applied = die  # type: ignore[assignment,method-assign]
    app.souls.accept("aria", proposal.id)
    print("NOT KILLED", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
