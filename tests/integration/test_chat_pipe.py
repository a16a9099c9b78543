"""Piped `nexus-ark chat` as a script reads it: one line on stdout per line sent, the reply as stored, its
own line breaks escaped and no trailing spaces; `--raw` prints the reply as it streamed. Real processes, the
real bundled model, and a loopback Ollama stand-in whose model answers in several lines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.cli.chat import one_line
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.scripted import ScriptedBackend
from tests.conftest import run_cli
from tests.integration.wire_server import SERVED_MODEL, WireServer

pytestmark = pytest.mark.integration

# Line breaks, a blank line, trailing spaces and a backslash: everything that could break a pipe's lines.
MULTILINE = "Roses are red,   \nviolets are blue.\n\nA path: C:\\tea\\cups.  "


def _replies(data_dir: Path) -> list[str]:
    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db")
    try:
        return [m.content for m in store.messages.recent() if m.role == "assistant"]
    finally:
        store.close()


def test_four_piped_lines_give_exactly_four_lines_on_stdout(data_dir: Path) -> None:
    sent = [
        "Hello! Who are you?",
        "Tell me about the sea in three short lines.",
        "What do you like to do on rainy days?",
        "Write a two-line poem about tea.",
    ]
    proc = run_cli("--data-dir", str(data_dir), "chat", "--persona", "aria", stdin="\n".join(sent) + "\n")
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.split("\n")
    assert printed[-1] == "" and len(printed) == 5, proc.stdout  # four lines, each ended by a newline
    assert len(proc.stdout.splitlines()) == 4  # no other kind of line break inside a reply either
    assert all(line and line == line.rstrip() for line in printed[:4]), printed
    replies = _replies(data_dir)
    assert len(replies) == 4
    assert printed[:4] == [one_line(reply) for reply in replies], "line N is reply N, as stored"


@pytest.fixture(scope="module")
def multiline_server() -> Iterator[WireServer]:
    """Ollama's wire format on 127.0.0.1, its model answering in several lines (a stand-in for the model's
    words only: the HTTP, the stream and the CLI are the real ones)."""
    with WireServer(ScriptedBackend([MULTILINE])) as server:
        yield server


def _chat(data_dir: Path, server: WireServer, *extra: str) -> str:
    proc = run_cli(
        "--data-dir", str(data_dir), "chat", "--persona", "aria", "--model", f"ollama:{SERVED_MODEL}",
        "--api-base", server.url, *extra, stdin="Write me a poem.\nAnother one?\n",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_reply_in_several_lines_is_one_line_with_its_breaks_escaped(
    data_dir: Path, multiline_server: WireServer
) -> None:
    stdout = _chat(data_dir, multiline_server)
    expected = r"Roses are red,\nviolets are blue.\n\nA path: C:\\tea\\cups."
    assert stdout == f"{expected}\n{expected}\n"
    assert _replies(data_dir) == [MULTILINE.strip()] * 2  # what is stored keeps its lines


def test_raw_prints_each_reply_as_it_streamed(data_dir: Path, multiline_server: WireServer) -> None:
    stdout = _chat(data_dir, multiline_server, "--raw")
    # Each reply with its own line breaks and spaces, then the newline that ends it.
    replies = stdout.split("\nRoses")
    assert len(replies) == 2 and replies[0].rstrip(" ") == MULTILINE.rstrip(" ")
    assert stdout.count("\n") == 2 * (MULTILINE.count("\n") + 1)


def test_one_line_escapes_every_kind_of_line_break_and_keeps_the_text() -> None:
    assert one_line("  a  \r\nb\u2028c\\n  ") == r"a\nb\nc\\n"
    assert one_line("plain reply") == "plain reply"
    assert one_line("") == ""
