from __future__ import annotations

import os

# Set before Qt is imported anywhere: tests render offscreen, no display needed.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

# The loopback model servers, shared with the integration tests.
from tests.integration.conftest import llama_server, ollama_wire, served, shared_llama  # noqa: F401

# Every wait in the window's tests is on a condition or a signal; its timeout is only how long a test may
# wait before it calls the condition false. On a loaded machine (a CI box running other jobs at load 10-20)
# the worker threads behind a condition are slower, so the limits are stretched: a test that passes waits
# no longer, one that fails says so later. NEXUS_ARK_TEST_PATIENCE=1 gives the written limits.
PATIENCE = float(os.environ.get("NEXUS_ARK_TEST_PATIENCE", "3"))


def _patient(timeout: int) -> int:
    return int(timeout * PATIENCE) if timeout > 0 else timeout


@pytest.fixture(autouse=True)
def _patient_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytestqt.qtbot import QtBot

    wait_until, wait_signal = QtBot.waitUntil, QtBot.waitSignal

    def patient_wait_until(self, callback, *, timeout: int = 5000) -> None:
        return wait_until(self, callback, timeout=_patient(timeout))

    def patient_wait_signal(self, signal, *, timeout: int = 5000, **kwargs):
        return wait_signal(self, signal, timeout=_patient(timeout), **kwargs)

    monkeypatch.setattr(QtBot, "waitUntil", patient_wait_until)
    monkeypatch.setattr(QtBot, "waitSignal", patient_wait_signal)


@pytest.fixture
def english_core(data_dir):
    """The core on a new data folder (the shipped personas are installed), with the window in English."""
    from nexus_ark.app import NexusApp
    from ui.util import i18n

    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    yield app
    app.close()
