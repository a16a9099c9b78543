"""The chat and room prompt (cli/line_input.read_line) on a real terminal (a pty): a Ctrl-C that another
thread's signal handler took still interrupts the prompt at once, where input() would wait for the next
Enter; a typed line and Ctrl-D read as input() reads them. And the chat's question before a tool runs
(asked on the turn's thread): once the turn is stopped it gives way, and the next line typed is the
prompt's."""

from __future__ import annotations

import os
import select
import sys
import time

import pytest

from tests.conftest import start_on_terminal

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a pty; Windows reads the prompt with input()")

# A worker thread takes the SIGINT (a signal aimed at that thread alone: what the kernel does with Ctrl-C's
# process-wide one when that thread happens to be running), while the main thread waits at the prompt.
PROGRAM = """
import signal, sys, threading, time
from nexus_ark.cli.line_input import read_line
if sys.argv[1] == "asked-then-stopped":
    # What `nexus-ark chat` does: the turn's thread asks before a tool runs; Ctrl-C stops the turn (its
    # event set), and the person goes on typing at the prompt.
    from nexus_ark.cli.tools import terminal_asker
    from nexus_ark.mcp_tools.faults import ToolInfo
    from nexus_ark.mcp_tools.offer import ApprovalRequest
    stopped, answers = threading.Event(), []
    tool = ToolInfo("helper", "weather", "Today's weather.", {})
    ask = terminal_asker(set(), interactive=True)
    asking = threading.Thread(target=lambda: answers.append(ask(ApprovalRequest("Aria", tool, {}, stopped))))
    asking.start()
    time.sleep(1.0)
    stopped.set()
    asking.join(10)
    print("[answer " + (answers[0] if answers else "none: still asking") + "]", flush=True)
if sys.argv[1] == "other-thread":
    def press():
        time.sleep(1.0)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    threading.Thread(target=press, daemon=True).start()
try:
    line = read_line("> ")
except KeyboardInterrupt:
    print("[interrupted]")
except EOFError:
    print("[end of input]")
else:
    print("[line " + repr(line) + "]")
"""


def run_at_prompt(mode: str, typed: bytes = b"", timeout: float = 20) -> str:
    proc, leader = start_on_terminal([sys.executable, "-c", PROGRAM, mode])
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while (
            b"\n> " not in b"\n" + shown
        ):  # the prompt at the start of a line (not the question's "[d]eny: ")
            shown += _read(leader, deadline, shown)
        if typed:
            os.write(leader, typed)
        while b"]" not in (b"\n" + shown).split(b"\n> ", 1)[1]:
            shown += _read(leader, deadline, shown)
        assert proc.wait(timeout=10) == 0, shown
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    return shown.decode("utf-8", errors="replace")


def _read(fd: int, deadline: float, shown: bytes) -> bytes:
    left = deadline - time.monotonic()
    assert left > 0, f"the prompt never answered; the terminal showed {shown!r}"
    ready, _, _ = select.select([fd], [], [], left)
    if not ready:
        return b""
    try:
        return os.read(fd, 4096)
    except OSError:  # the child closed the terminal
        raise AssertionError(f"the terminal closed early: {shown!r}") from None


def test_ctrl_c_taken_by_another_thread_interrupts_the_prompt_without_an_enter() -> None:
    started = time.monotonic()
    shown = run_at_prompt("other-thread")
    assert "[interrupted]" in shown
    assert time.monotonic() - started < 15


def test_a_typed_line_comes_back_without_its_newline_and_in_utf8() -> None:
    assert "[line 'こんにちは, Aria']" in run_at_prompt("plain", "こんにちは, Aria\n".encode())


def test_ctrl_d_at_an_empty_prompt_is_the_end_of_input() -> None:
    assert "[end of input]" in run_at_prompt("plain", b"\x04")


def test_a_stopped_turns_tool_question_gives_way_and_the_next_line_is_the_prompts() -> None:
    shown = run_at_prompt("asked-then-stopped", b"hello\n")
    assert "Allow it? [o]nce, [a]lways, [d]eny:" in shown
    assert "[answer deny]" in shown  # the tool did not run, and the question did not wait for a line
    assert "[line 'hello']" in shown  # what was typed next reached the prompt
