"""Sound devices opened, restarted and closed from several threads at once, as the window does (an output
closing on one worker while the next opens on another, a paused output restarting on a thread of its own,
the microphone opening and closing on others), against the real null device (tests/null_sound.py).

PortAudio is not thread-safe: without audio_out.PORTAUDIO_LOCK two such calls at once fail ("Insufficient
memory", a host error) or lose the JACK thread's wake-up and wait ten minutes, which hung a test run."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from nexus_ark.voice.audio_in import open_microphone
from nexus_ark.voice.audio_out import open_output
from nexus_ark.voice.base import Audio

pytestmark = pytest.mark.skipif(
    not os.environ.get("JACK_DEFAULT_SERVER"),
    reason="no null sound device: jackd is not installed (.ci/run installs Debian's jackd2, libportaudio2)",
)
ROUNDS = 25
DEADLINE_S = 240.0  # some 10 s on an idle 2-core machine; a lost wake-up is ten minutes
BEEP = Audio(np.full(960, 0.1, dtype=np.float32), 48000)  # 20 ms


def _outputs() -> None:
    for _ in range(ROUNDS):
        output = open_output(pause_after=0.0)  # pauses at its first silent block
        try:
            output.play(BEEP)  # restarts the paused stream on a thread of its own, racing the others
            output.stop()
            output.play(BEEP)
        finally:
            output.close()


def _microphone() -> None:
    microphone = open_microphone()
    for _ in range(ROUNDS):
        microphone.start(lambda _chunk: None)
        microphone.stop()


def test_outputs_and_a_microphone_opened_and_closed_from_three_threads_at_once_all_work() -> None:
    errors: list[str] = []

    def run(work: Callable[[], None]) -> threading.Thread:
        def guarded() -> None:
            try:
                work()
            except Exception as exc:  # the test's verdict, not a thread's traceback
                errors.append(f"{type(exc).__name__}: {exc}")

        thread = threading.Thread(target=guarded, daemon=True)
        thread.start()
        return thread

    started = time.monotonic()
    threads = [run(_outputs), run(_outputs), run(_microphone)]
    for thread in threads:
        thread.join(timeout=max(0.0, DEADLINE_S - (time.monotonic() - started)))
    assert not [t for t in threads if t.is_alive()], f"still opening or closing after {DEADLINE_S:.0f} s"
    assert errors == []
    output = open_output()  # PortAudio is still sound afterwards: a beep plays to its end
    try:
        playback = output.play(BEEP)
        assert output.wait(timeout=10) and playback.played == len(playback.samples) and not playback.stopped
    finally:
        output.close()
