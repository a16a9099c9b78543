"""The log file the README points to: written, rotated, and holding what a console-less window would lose."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from nexus_ark.logfile import CRASH_KEEP
from tests.conftest import run_cli, subprocess_env


def _python(code: str, logs: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # A fresh process: setting up logging changes process-wide state (root handlers, excepthook).
    setup = (
        "from pathlib import Path\nfrom nexus_ark.logfile import setup_logging\n"
        f"setup_logging(Path({str(logs)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", setup + code],
        capture_output=True,
        text=True,
        env=env if env is not None else subprocess_env(),
        timeout=60,
    )


def test_warnings_and_crashes_reach_the_file(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    proc = _python(
        "import logging\n"
        "logging.getLogger('nexus_ark.x').warning('disk almost full')\n"
        "raise RuntimeError('boom')",
        logs,
    )
    assert proc.returncode == 1
    text = (logs / "nexus-ark.log").read_text(encoding="utf-8")
    assert "WARNING nexus_ark.x: disk almost full" in text
    assert "uncaught exception" in text and "RuntimeError: boom" in text
    assert "disk almost full" in proc.stderr and "RuntimeError: boom" in proc.stderr, "stderr still has them"


def test_the_file_rotates_and_keeps_three_old_ones(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    proc = _python("import logging\nfor i in range(6000):\n    logging.getLogger('t').info('x' * 500)", logs)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in logs.glob("nexus-ark.log*"))
    assert names == ["nexus-ark.log", "nexus-ark.log.1", "nexus-ark.log.2", "nexus-ark.log.3"]
    assert all(p.stat().st_size <= 1_100_000 for p in logs.iterdir())


def test_a_native_crash_leaves_every_threads_stack_in_crash_log_and_doctor_says_so(tmp_path: Path) -> None:
    """A segfault (Qt, llama.cpp) killed the console-less window with no trace anywhere; faulthandler now
    writes each thread's stack to logs/crash.log, which stays empty until then, and doctor tells of it."""
    data = tmp_path / "data"
    logs = data / "logs"
    env = {k: v for k, v in subprocess_env().items() if k != "PYTHONFAULTHANDLER"}
    calm = _python("print('fine')", logs, env)
    assert calm.returncode == 0 and (logs / "crash.log").read_text(encoding="utf-8") == ""
    doctor = run_cli("--data-dir", str(data), "doctor")
    assert re.search(r"^ok +crashes +none recorded$", doctor.stdout, re.MULTILINE), doctor.stdout
    crash = (
        "import ctypes, threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "def in_native_code():\n    ctypes.string_at(0)\n"
        "in_native_code()\n"
    )
    crashed = _python(crash, logs, env)
    assert crashed.returncode != 0
    stacks = (logs / "crash.log").read_text(encoding="utf-8")
    assert "Fatal Python error: Segmentation fault" in stacks
    assert "in in_native_code" in stacks and "threading.py" in stacks, "every thread's stack"
    doctor = run_cli("--data-dir", str(data), "doctor")
    assert re.search(r"^warn +crashes +the app crashed .*crash\.log holds", doctor.stdout, re.MULTILINE)


def test_a_crash_log_keeps_its_newest_part_and_leaves_pythonfaulthandler_to_stderr(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    old = "".join(f"crash {n:06d}\n" for n in range(60_000))  # 780 KB of old crashes
    (logs / "crash.log").write_text(old, encoding="utf-8")
    env = {k: v for k, v in subprocess_env().items() if k != "PYTHONFAULTHANDLER"}
    assert _python("pass", logs, env).returncode == 0
    kept = (logs / "crash.log").read_text(encoding="utf-8")
    assert 0 < len(kept) <= CRASH_KEEP and kept.endswith("crash 059999\n") and kept.startswith("crash ")
    crashed = _python("import ctypes\nctypes.string_at(0)\n", logs, {**env, "PYTHONFAULTHANDLER": "1"})
    assert "Segmentation fault" in crashed.stderr  # the developer asked for stderr: it goes there
    assert (logs / "crash.log").read_text(encoding="utf-8") == kept


def test_an_unwritable_log_folder_does_not_stop_the_app(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    proc = _python("print('still running')", blocker / "logs")
    assert proc.returncode == 0 and "still running" in proc.stdout
    assert "cannot write the log file" in proc.stderr


def test_a_running_scheduler_leaves_only_its_warnings_in_the_file(tmp_path: Path) -> None:
    """The persona's heartbeat wrote two APScheduler INFO lines a minute into the log people attach to bug
    reports (issue 23, defect 20): a real BackgroundScheduler runs a job a few times; its warning stays."""
    logs = tmp_path / "logs"
    proc = _python(
        "import logging, time\n"
        "from apscheduler.schedulers.background import BackgroundScheduler\n"
        "s = BackgroundScheduler()\n"
        "s.add_job(lambda: None, 'interval', seconds=0.2)\n"
        "s.start()\n"
        "time.sleep(0.9)\n"
        "s.shutdown()\n"
        "logging.getLogger('apscheduler.executors.default').warning('a job was missed')\n"
        "logging.getLogger('nexus_ark.runtime').info('heartbeat: nothing to do')\n",
        logs,
    )
    assert proc.returncode == 0, proc.stderr
    text = (logs / "nexus-ark.log").read_text(encoding="utf-8")
    assert "WARNING apscheduler.executors.default: a job was missed" in text
    assert "INFO nexus_ark.runtime: heartbeat: nothing to do" in text, "our own INFO stays"
    assert "INFO apscheduler" not in text, text
