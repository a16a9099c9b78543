"""The log file the README points to: written, rotated, and holding what a console-less window would lose."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import subprocess_env


def _python(code: str, logs: Path) -> subprocess.CompletedProcess[str]:
    # A fresh process: setting up logging changes process-wide state (root handlers, excepthook).
    setup = (
        "from pathlib import Path\nfrom nexus_ark.logfile import setup_logging\n"
        f"setup_logging(Path({str(logs)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", setup + code], capture_output=True, text=True, env=subprocess_env(), timeout=60
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
    names = sorted(p.name for p in logs.iterdir())
    assert names == ["nexus-ark.log", "nexus-ark.log.1", "nexus-ark.log.2", "nexus-ark.log.3"]
    assert all(p.stat().st_size <= 1_100_000 for p in logs.iterdir())


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
