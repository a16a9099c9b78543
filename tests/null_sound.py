"""A real sound device with no sound card: a JACK server on its dummy driver, for the test session.

PortAudio (sounddevice) opens JACK's "system" device like any other; the dummy driver runs the audio
callbacks in real time (a 512-frame period at 48 kHz: one block every 10.7 ms), plays into nothing and
records silence. ALSA's "null" PCM was tried first: it never blocks, so a stream "plays" at some 150
million frames a second and no timing means anything (docs/voice.md, "Sound in tests and CI").

The server gets a name of its own (two test runs on one machine do not share it), and JACK_DEFAULT_SERVER
names it for this process and every process it starts: it must be set before sounddevice is first
imported, since PortAudio lists the devices then. Hence pytest_configure, not a fixture.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

RATE = 48000
PERIOD = 512


def start_null_sound() -> subprocess.Popen[bytes] | None:
    """Starts the server unless one is named already (JACK_DEFAULT_SERVER) or jackd is not installed
    (.ci/run installs Debian's jackd2); returns it running, or None."""
    jackd = shutil.which("jackd")
    if jackd is None or os.environ.get("JACK_DEFAULT_SERVER"):
        return None
    name = f"nexus-ark-test-{os.getpid()}"
    server = subprocess.Popen(
        # 32 ports (the default's shared memory is 107 MB, this 39 MB): the four "system" ones and room for
        # a dozen streams open at once (two ports an output, one a microphone).
        [
            jackd,
            "-n",
            name,
            "--port-max",
            "32",
            "--no-realtime",
            "-d",
            "dummy",
            "-r",
            str(RATE),
            "-p",
            str(PERIOD),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C in the terminal stops pytest, which stops the server
        preexec_fn=_end_with_parent,
    )
    socket_dir = Path(os.environ.get("JACK_TMPDIR", "/dev/shm"))
    deadline = time.monotonic() + 10
    while not any(socket_dir.glob(f"jack_{name}_*")):
        if server.poll() is not None or time.monotonic() > deadline:
            _stop(server, socket_dir, name)
            return None
        time.sleep(0.01)
    os.environ["JACK_DEFAULT_SERVER"] = name
    # Stopped at exit, after PortAudio lets go of it: sounddevice registers its own atexit handler when it
    # is imported, later than this one, so it runs first (PortAudio's JACK code aborts the process if the
    # server went away before Pa_Terminate).
    atexit.register(_stop, server, socket_dir, name)
    return server


def _end_with_parent() -> None:
    """In the child before exec: the kernel sends it SIGTERM when the test process dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _stop(server: subprocess.Popen[bytes], socket_dir: Path, name: str) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    for left in socket_dir.glob(f"jack_sem.*_{name}_*"):  # the clients' semaphores, which nobody removes
        left.unlink(missing_ok=True)


def loop_back() -> None:
    """Connects the left playback port of the output stream open now to the capture port(s) of the input
    stream open now (the left speaker into a mono microphone): what is played is what is recorded, with
    no air in between. PortAudio numbers its ports on from the streams opened before."""
    name = os.environ["JACK_DEFAULT_SERVER"]
    listed = subprocess.run(["jack_lsp", "-s", name], capture_output=True, text=True, check=True, timeout=10)
    ports = listed.stdout.split()
    outs = [p for p in ports if p.startswith("PortAudio") and ":out_" in p]
    ins = [p for p in ports if p.startswith("PortAudio") and ":in_" in p]
    assert outs and ins, f"no PortAudio streams open on {name}: {ports}"
    left = min(outs, key=lambda port: int(port.rsplit("_", 1)[1]))
    for target in ins:
        subprocess.run(["jack_connect", "-s", name, left, target], check=True, timeout=10)
