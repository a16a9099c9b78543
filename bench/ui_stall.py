"""The window's main loop while a persona dreams and the person chats: does the UI ever stall?

The real MainWindow (offscreen) on a temporary data folder with the bundled model. A 10 ms QTimer probe
records the gap between its ticks; a gap beyond 10 ms is the time the main loop could not run. The persona
dreams (level 1, on the same bundled model: its requests wait behind the person's) while the person sends
N messages through the input box, each after the previous reply finished. Reports the largest stall, the
99th percentile, how many ticks were late by more than 16 ms, each reply's first-token wait, and how long the
dream took; the same probe with nothing running is the baseline (the timer's own jitter on this machine).

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.ui_stall [--messages 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from nexus_ark.app import NexusApp
from nexus_ark.clock import iso
from ui.main.main_window import MainWindow
from ui.util import i18n
from ui.util.tasks import favour_the_ui_thread

MESSAGES = [
    "Hi Aria, I'm back from work.",
    "My sister Yui loved the bowl I made her.",
    "I think I'll cook pasta tonight. Any idea?",
    "Tell me something nice before I sleep.",
]
YESTERDAY = [
    "My sister Yui turns twenty on Friday and I made her a blue bowl in pottery class.",
    "We will celebrate at Trattoria Luna near the station.",
    "I am nervous about my pastry exam next week.",
]


class Probe:
    def __init__(self, qt: QApplication, interval_ms: int = 10) -> None:
        self.qt = qt
        self.gaps: list[float] = []
        self.last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self.last) * 1000)
        self.last = now

    def start(self) -> None:
        self.gaps.clear()
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> dict:
        self.timer.stop()
        gaps = sorted(self.gaps)
        late = [g - 10 for g in gaps]
        return {
            "ticks": len(gaps),
            "max_stall_ms": round(max(late), 1) if late else None,
            "p99_stall_ms": round(late[int(len(late) * 0.99) - 1], 1) if late else None,
            "late_over_16ms": sum(1 for g in late if g > 16),
        }


def _time_handlers(window: MainWindow) -> dict[str, list[float]]:
    """How long the window's own handlers run on the main thread (wrapped before they are connected)."""
    seen: dict[str, list[float]] = {}
    for owner, name in ((window.chat, "append_stream"), (window.chat, "end_stream"), (window.life, "apply")):
        original = getattr(owner, name)
        seen[name] = []

        def timed(*args, _original=original, _name=name):
            started = time.perf_counter()
            try:
                return _original(*args)
            finally:
                seen[_name].append(time.perf_counter() - started)

        setattr(owner, name, timed)
    return seen


def spin(qt: QApplication, until, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not until() and time.monotonic() < deadline:
        qt.processEvents()
        time.sleep(0.001)
    if not until():
        raise TimeoutError("the bench's wait timed out")


def run(messages: int) -> dict:
    favour_the_ui_thread()  # as ui/app/application.py does
    qt = QApplication.instance() or QApplication([])
    i18n.set_language("en")
    with tempfile.TemporaryDirectory() as tmp:
        app = NexusApp(Path(tmp) / "data").open()
        window = MainWindow(app)
        window.show()
        spin(qt, lambda: window.send_button.isEnabled(), 300)
        probe = Probe(qt)
        probe.start()
        end = time.monotonic() + 3
        while time.monotonic() < end:
            qt.processEvents()
            time.sleep(0.001)
        baseline = probe.stop()

        handlers = _time_handlers(window)
        runtime = app.personas.runtime("aria")
        yesterday = app.clock.now() - timedelta(days=1)
        for i, text in enumerate(YESTERDAY):
            runtime.queue.call(
                "seed",
                lambda t=text, i=i: runtime.memory.messages.add(
                    speaker="user", role="user", content=t, created_at=iso(yesterday + timedelta(minutes=i))
                ),
            )
        dream_done = threading.Event()
        dream_started = time.monotonic()
        item = runtime.dreams.start(day=yesterday.astimezone().date())
        threading.Thread(target=lambda: (item.wait(), dream_done.set()), daemon=True).start()
        probe.start()
        waits = []
        for text in MESSAGES[:messages]:
            window.input.setPlainText(text)
            sent = time.monotonic()
            window.turns.send_message()
            spin(qt, lambda: bool(window.chat.streaming_text) or not window.streaming, 300)
            first = time.monotonic() - sent
            spin(qt, lambda: not window.streaming, 300)
            waits.append(round(first, 2))
        spin(qt, dream_done.is_set, 600)
        dream_s = time.monotonic() - dream_started
        busy = probe.stop()
        # The turns' own stages (after their wait in the queue), read once the probe has stopped.
        timings = [m.meta.get("timings", {}) for m in runtime.history(20) if m.role == "assistant"]
        window.close()
        app.close()
    return {
        "messages": messages,
        "baseline": baseline,
        "dream_and_chat": busy,
        "first_token_wait_s": waits,
        "turn_timings_s": timings,
        "median_first_token_s": statistics.median([w for w in waits if w is not None]) if waits else None,
        "dream_s": round(dream_s, 1),
        "slowest_handlers_ms": {k: round(max(v) * 1000, 1) for k, v in handlers.items() if v},
        "cpus": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.messages)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
