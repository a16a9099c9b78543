"""kill -9 while a dream and a chat turn run (the bundled model, a real process): at restart no message is
lost, the reply cut off is marked interrupted, the dream resumes once from its last finished stage, the
planned event is still pending, and SQLite's integrity check passes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from tests.conftest import REPO, cli_command, run_cli, subprocess_env

pytestmark = pytest.mark.integration


def _crash_mid_dream(data_dir: Path, child_module: str = "crash_child") -> None:
    """Run crash_child and kill it (-9) once a dream stage has finished and a reply is streaming (or
    another child, once it prints READY)."""
    child = subprocess.Popen(
        [sys.executable, "-m", f"tests.integration.{child_module}", str(data_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    try:
        deadline = time.monotonic() + 600
        line = ""
        while time.monotonic() < deadline and line.strip() != "READY":
            line = child.stdout.readline()
            if not line and child.poll() is not None:
                pytest.fail(f"the child ended early: {child.stderr.read()[-2000:]}")
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()


@pytest.mark.slow
def test_a_crash_during_a_dream_and_a_reply_loses_nothing_and_the_dream_resumes_once(data_dir: Path):
    _crash_mid_dream(data_dir)
    app = NexusApp(data_dir).open()
    try:
        runtime = app.personas.runtime("aria")  # recovery, then the interrupted dream is queued to resume
        memory = app.personas.memory("aria")
        assert memory.db.execute("pragma integrity_check").fetchone()[0] == "ok"
        rows = memory.db.execute("select role, status, content from messages order by id").fetchall()
        assert [r[2] for r in rows[:3]] == [
            "My sister Yui turns twenty on Friday and I made her a blue bowl in pottery class.",
            "We will celebrate at Trattoria Luna near the station.",
            "I am nervous about my pastry exam next week.",
        ]
        assert rows[3][:2] == ("user", "complete") and rows[3][2].startswith("Tell me a long story")
        reply = rows[4]
        assert reply[0] == "assistant" and reply[1] in ("interrupted", "complete") and reply[2]
        assert runtime.queue.wait_idle(600)
        jobs = memory.db.execute("select state, stages from dream_jobs").fetchall()
        assert len(jobs) == 1 and jobs[0][0] == "done"
        begun = [e.summary for e in memory.activity.query(kinds=["dream"], limit=100)]
        # What ran meanwhile, should a second "resumed" appear again (seen once in CI, 2026-11-22: a dream
        # cut short by something after the restart resumes again and says so).
        timeline = [f"{e.kind}: {e.summary}" for e in memory.activity.query(limit=200)]
        assert sum("began" in s for s in begun) == 1, "\n".join(timeline)
        assert sum("resumed" in s for s in begun) == 1, "\n".join(timeline)
        assert sum(s.startswith("stage insight") or "insight:" in s for s in begun) <= 1
        (event,) = memory.db.execute("select state, key from events").fetchall()
        assert event == ("pending", "exam")
        assert memory.db.execute("select count(*) from insights").fetchone()[0] <= 1  # not written twice
    finally:
        app.close()


@pytest.mark.slow
def test_nexus_ark_dream_after_a_kill_finishes_the_resumed_dream_and_reports_it(data_dir: Path):
    """Opening the runtime queues the cut-off dream; the command's own dream joins it (it was refused with
    "Aria is already dreaming.", exit 2, for any level or date, only `run` or the window finished it)."""
    _crash_mid_dream(data_dir)
    proc = run_cli("--data-dir", str(data_dir), "dream", "--persona", "aria", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    app = NexusApp(data_dir).open()
    try:
        memory = app.personas.memory("aria")
        jobs = memory.db.execute("select state, level, date from dream_jobs").fetchall()
    finally:
        app.close()
    assert len(jobs) == 1 and jobs[0][0] == "done", jobs
    assert (result["level"], result["date"]) == (jobs[0][1], jobs[0][2])


@pytest.mark.slow
def test_chat_while_the_cut_off_dream_resumes_drives_the_memory_from_one_thread(
    data_dir: Path, tmp_path: Path
):
    """`nexus-ark chat` ran the turn on the main thread and its after-turn work on a thread of its own while
    opening the persona resumed the cut-off dream on the queue's: three threads drove one connection
    (issue 22). Every statement the owner connection runs, from opening to closing, is now on the queue's
    thread; the dream finishes and both lines are answered."""
    _crash_mid_dream(data_dir)
    trace = tmp_path / "owner-statements.tsv"
    proc = subprocess.run(
        cli_command("--data-dir", str(data_dir), "chat", "--persona", "aria"),
        input="How was your day?\nTell me about the sea.\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        env=subprocess_env(NEXUS_ARK_TRACE_OWNER=str(trace)),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len([line for line in proc.stdout.splitlines() if line.strip()]) >= 2, proc.stdout
    lines = trace.read_text(encoding="utf-8").splitlines()
    threads = {line.split("\t", 1)[0] for line in lines}
    assert len(lines) > 100 and threads == {"persona-aria"}, (
        threads,
        [x for x in lines if not x.startswith("persona-aria")][:5],
    )
    assert any("dream_jobs" in line for line in lines) and any("insert" in line.lower() for line in lines)
    app = NexusApp(data_dir).open()
    try:
        jobs = app.personas.runtime("aria").queue.call(
            "jobs", lambda: app.personas.memory("aria").db.execute("select state from dream_jobs").fetchall()
        )
    finally:
        app.close()
    assert jobs == [("done",)], jobs


def test_a_message_written_first_cut_off_by_a_crash_leaves_no_draft(data_dir: Path):
    """Killing `nexus-ark run` while the persona wrote first left the draft in the conversation (3 in 10
    kills), marked interrupted, with no reason and no inbox row, beside the message written again later
    (issue 23, defect 10): a message written first is not a message until complete."""
    _crash_mid_dream(data_dir, "write_first_child")
    app = NexusApp(data_dir).open()
    try:
        memory = app.personas.memory("aria")
        assert memory.db.execute("pragma integrity_check").fetchone()[0] == "ok"
        left = memory.db.execute("select status, content from messages where role = 'assistant'").fetchall()
        assert left == [], f"a draft of the message written first is still there: {left}"
        assert memory.db.execute("select count(*) from inbox").fetchone()[0] == 0
    finally:
        app.close()
