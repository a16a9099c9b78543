"""Desktop notifications against a real notification daemon (dunst) on a private session D-Bus under Xvfb.

What a person would check: the notification shows the persona's name and the message's first line,
clicking it runs the callback that opens the conversation, and where no notification service exists the
app says so (doctor) and goes on, quickly, with nothing raised. Skipped only where the programs are not
installed (the skip names the apt-get line; .ci/run installs them).
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_ark.doctor import check_notifications
from nexus_ark.notify import DesktopNotifications
from tests.integration.desktop import Desktop, desktop, require, wait_for

pytestmark = pytest.mark.integration

MESSAGE = "I kept thinking about your exam today.\nHow did it go? Tell me everything."


def _use(d: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", d.display)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", d.bus)


@pytest.fixture
def notifier() -> Iterator[DesktopNotifications]:
    n = DesktopNotifications()
    yield n
    n.close()


def _displayed(d: Desktop) -> int:
    out = subprocess.run(["dunstctl", "count", "displayed"], env=d.env, capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def test_the_daemon_shows_the_first_line_and_a_click_opens_the_persona(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notifier: DesktopNotifications
) -> None:
    with desktop(tmp_path, notifications=True) as d:
        _use(d, monkeypatch)
        monitor = d.monitor()
        ok, detail = notifier.available()
        assert ok and "dunst" in detail
        check = check_notifications()
        assert check.status == "ok" and "dunst" in check.detail

        clicked_on: list[str] = []
        clicked = threading.Event()

        def open_aria() -> None:  # what the window's callback does: show Aria's conversation
            clicked_on.append(threading.current_thread().name)
            clicked.set()

        started = time.perf_counter()
        assert notifier.notify("Aria", MESSAGE, on_click=open_aria) is True  # called from plain sync code
        assert time.perf_counter() - started < 3.0

        # The daemon got it: the Notify call on the bus carries title and first line only ...
        wait_for(lambda: 'string "Aria"' in monitor.read_text(), 10, "the Notify call on the bus")
        calls = monitor.read_text()
        assert 'string "I kept thinking about your exam today."' in calls
        assert "How did it go" not in calls
        assert 'string "default"' in calls  # the click action was offered
        # ... and shows it on the (virtual) screen.
        wait_for(lambda: _displayed(d) == 1, 10, "dunst to display the notification")

        # The person clicks it: the daemon invokes the default action, our callback runs.
        subprocess.run(["dunstctl", "action", "0"], env=d.env, check=True, timeout=10)
        assert clicked.wait(10), "the click callback did not run"
        assert clicked_on == ["notify-loop"]  # on the notifier's thread: the window moves it to its own
        assert 'string "default"' in monitor.read_text().split("member=ActionInvoked", 1)[1]


def test_without_a_notification_service_it_says_why_and_recovers_when_one_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notifier: DesktopNotifications
) -> None:
    require("dunst")
    with desktop(tmp_path, activation=False) as d:  # a bus that starts no daemon by itself
        _use(d, monkeypatch)
        ok, detail = notifier.available()
        assert not ok and "no notification service" in detail
        check = check_notifications()
        assert check.status == "warn" and "inbox" in check.detail and "tray" in check.detail

        for _ in range(3):  # never raises, never hangs the caller
            started = time.perf_counter()
            assert notifier.notify("Aria", MESSAGE, on_click=lambda: None) is False
            assert time.perf_counter() - started < 3.0

        d.start_dunst()  # the person starts a notification daemon: no restart of the app needed
        monitor = d.monitor()
        assert notifier.available()[0]
        assert notifier.notify("Aria", MESSAGE) is True
        wait_for(lambda: 'string "Aria"' in monitor.read_text(), 10, "the Notify call on the bus")
        wait_for(lambda: _displayed(d) == 1, 10, "dunst to display the notification")


def test_without_a_session_bus_the_reason_is_said_once_and_no_traceback_is_logged(
    monkeypatch: pytest.MonkeyPatch, notifier: DesktopNotifications, caplog: pytest.LogCaptureFixture
) -> None:
    """`nexus-ark run` on a machine without a desktop session printed desktop-notifier's traceback for every
    message written first (issue 23, defect 7)."""
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    caplog.set_level(logging.DEBUG)
    for _ in range(3):
        assert notifier.notify("Aria", MESSAGE) is False
    assert not [r for r in caplog.records if r.exc_info or r.exc_text], "a traceback was logged"
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1, said
    assert "notifications are off" in said[0] and "DBUS_SESSION_BUS_ADDRESS" in said[0] and "inbox" in said[0]
