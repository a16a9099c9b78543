"""Privacy, tested: with the bundled model, chat, a memory import, a dream and the window's start reach no
host but this machine. Each runs inside a network namespace that has only loopback (`unshare -n`), under an
audit hook that writes down any attempt to connect beyond loopback or to look up another host's name
(tests/integration/audited_cli.py); the test fails on any. Skipped, with its reason, where the system does
not permit a network namespace. docs/privacy.md says what leaves the machine for each model choice."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, subprocess_env

pytestmark = pytest.mark.integration

CONVERSATION = REPO / "tests" / "data" / "dream_days.jsonl"
# A new network namespace has loopback only, and down: bring it up, then run the command.
LOOPBACK_ONLY = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


def _namespace_problem() -> str:
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs Linux with unshare and ip (util-linux, iproute2)"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:  # not root, and unprivileged namespaces are off
        return f"this system does not permit a network namespace: {probe.stderr.strip()}"
    return ""


def _offline(
    tmp_path: Path, *args: str, stdin: str = "", **env: str
) -> tuple[subprocess.CompletedProcess, list]:
    """`nexus-ark ARGS` with no network but loopback; returns the run and every attempt to reach out."""
    problem = _namespace_problem()
    if problem:
        pytest.skip(problem)
    audit = tmp_path / f"audit-{len(list(tmp_path.glob('audit-*')))}.log"
    audit.touch()
    command = [sys.executable, "-m", "tests.integration.audited_cli", *args]
    proc = subprocess.run(
        [*LOOPBACK_ONLY, *command],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,
        cwd=REPO,
        env=subprocess_env(NEXUS_ARK_AUDIT_LOG=str(audit), **env),
    )
    return proc, audit.read_text(encoding="utf-8").splitlines()


def test_the_audit_sees_an_attempt_to_reach_another_host(tmp_path: Path) -> None:
    """The check itself: a lookup and a connect beyond loopback are written down (inside the namespace
    they fail at once, so nothing leaves even then)."""
    problem = _namespace_problem()
    if problem:
        pytest.skip(problem)
    audit = tmp_path / "audit.log"
    script = (
        "import socket, sys\n"
        "from tests.integration.audited_cli import install\n"
        "install(sys.argv[1])\n"
        "for target in (('example.com', 80), ('93.184.215.14', 443)):\n"
        "    try:\n"
        "        socket.create_connection(target, timeout=2).close()\n"
        "    except OSError:\n"
        "        pass\n"
    )
    proc = subprocess.run(
        [*LOOPBACK_ONLY, sys.executable, "-c", script, str(audit)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=subprocess_env(),
    )
    assert proc.returncode == 0, proc.stderr
    seen = audit.read_text(encoding="utf-8")
    assert "getaddrinfo 'example.com'" in seen and "connect ('93.184.215.14', 443)" in seen, seen


@pytest.mark.slow
def test_chat_import_dream_and_the_window_reach_no_other_host(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    runs = {
        "chat": _offline(
            tmp_path, "--data-dir", data, "chat", "--persona", "aria", stdin="Hello! How are you?\n"
        ),
        "import": _offline(
            tmp_path, "--data-dir", data, "memory", "import", "--persona", "aria", str(CONVERSATION)
        ),
        "dream": _offline(tmp_path, "--data-dir", data, "dream", "--persona", "aria", "--date", "2026-11-20"),
        "window": _offline(
            tmp_path, "--data-dir", data, QT_QPA_PLATFORM="offscreen", NEXUS_ARK_QUIT_AFTER_MS="8000"
        ),
    }
    for what, (proc, attempts) in runs.items():
        assert proc.returncode == 0, f"{what}: {proc.stderr[-2000:]}"
        assert attempts == [], f"{what} tried to reach beyond this machine: {attempts}"
    assert runs["chat"][0].stdout.strip(), "the bundled model answered"
    assert "imported" in runs["import"][0].stderr + runs["import"][0].stdout
    assert "2026-11-20" in runs["dream"][0].stdout, runs["dream"][0].stdout
