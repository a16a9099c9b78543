"""`nexus-ark chat --speak` on a real terminal (a pty), playing into the test session's null sound device:
Ctrl-C while a reply is still being spoken silences it and the chat goes on (Ctrl-C at a quiet prompt
still leaves). The model's words come from a loopback Ollama stand-in (a long reply, so it is still being
spoken when the prompt is back); the HTTP, the CLI, Piper and the sound device are the real ones."""

from __future__ import annotations

import os
import select
import signal
import time
from pathlib import Path

import pytest

from nexus_ark.providers.scripted import ScriptedBackend
from tests.conftest import cli_command, run_cli, start_on_terminal
from tests.integration.wire_server import SERVED_MODEL, WireServer

pytestmark = pytest.mark.integration

# About ten seconds of speech (within the persona's token limit): Piper is still saying it when the reply has
# streamed and the prompt is back.
LONG_REPLY = " ".join(
    f"This is sentence number {n} of a long answer, spoken one sentence at a time." for n in range(1, 4)
)


def read_until(fd: int, wanted: str, seen: list[str], count: int = 1, timeout: float = 120) -> str:
    """What the terminal showed once `wanted` appears `count` times in it (polled up to `timeout`)."""
    deadline = time.monotonic() + timeout
    while "".join(seen).count(wanted) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"the terminal never showed {wanted!r} x{count}; it showed:\n{''.join(seen)}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            assert chunk, f"the terminal closed before {wanted!r} x{count}:\n{''.join(seen)}"
            seen.append(chunk.decode("utf-8", errors="replace"))
    return "".join(seen)


@pytest.mark.skipif(not os.environ.get("JACK_DEFAULT_SERVER"), reason="needs the null sound device (jackd)")
def test_ctrl_c_while_a_reply_is_spoken_silences_it_and_the_chat_goes_on(data_dir: Path) -> None:
    assert run_cli("--data-dir", str(data_dir), "persona", "list").returncode == 0
    with WireServer(ScriptedBackend([LONG_REPLY])) as server:
        args = ("--data-dir", str(data_dir), "chat", "--speak", "--persona", "aria")
        model = ("--model", f"ollama:{SERVED_MODEL}", "--api-base", server.url)
        proc, leader = start_on_terminal(cli_command(*args, *model))
        seen: list[str] = []
        try:
            read_until(leader, "> ", seen)
            os.write(leader, b"Tell me a long story.\n")
            read_until(leader, "sentence number 3", seen)
            read_until(leader, "> ", seen, count=2)  # the reply has streamed; its speech goes on
            # Pressed as soon as the prompt shows, while the speech threads and the after-turn work are busy:
            # whichever thread takes the signal, the prompt hears it (cli/line_input.py).
            proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
            read_until(leader, "> ", seen, count=3)  # the speech stopped, the chat asks again
            assert proc.poll() is None, "".join(seen)
            os.write(leader, b"/quit\n")
            assert proc.wait(timeout=30) == 0, "".join(seen)
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(leader)
    assert "Traceback" not in "".join(seen)
