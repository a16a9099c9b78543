"""Opening the app's windows from the main window: how long does the main loop stop each time?

The real MainWindow (offscreen) on a temporary data folder with the deterministic scripted mind, after a
few turns (so the timeline, the memory and the dashboard have something to show). Each window is opened the
way its menu opens it, twice (the first open pays for what is built once), and closed again. A 10 ms QTimer
probe records how late each tick came from the moment of the click until the window has shown what it
read; `open_ms` is how long the menu's handler itself ran on the UI thread (building the window's widgets).
As ui/app/application.py does, the windows' modules are imported on a thread of their own once the window
shows.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.window_open [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QWidget

from bench.import_stall import NOW, idle, wait
from bench.ui_stall import Probe
from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.app.application import WINDOW_MODULES, import_in_background
from ui.main.main_window import MainWindow
from ui.util import i18n
from ui.util.tasks import favour_the_ui_thread, freeze_long_lived

TURNS = (
    "My sister Yui turns twenty on Friday and I made her a blue bowl in pottery class.",
    "We will celebrate at Trattoria Luna near the station.",
    "I am nervous about my pastry exam next week.",
)


def _one(window: MainWindow, kind: str) -> QWidget | None:
    found = [w for w in window.findChildren(QWidget) if type(w).__name__ == kind and w.isVisible()]
    return found[0] if found else None


# What each menu item opens: (label, the class it makes, how the menu opens it, when it has shown its data)
WINDOWS: list[tuple[str, str, Callable[[MainWindow], None], Callable[[QWidget], bool]]] = [
    ("memory", "MemoryWindow", MainWindow.show_memory, lambda w: not w.core_edit.isReadOnly()),
    ("activity", "ActivityWindow", MainWindow.show_activity, lambda w: w._loaded_once),
    ("dashboard", "DashboardWindow", MainWindow.show_dashboard, lambda w: w.complete),
    ("settings", "SettingsDialog", MainWindow.show_settings, lambda w: w.chat_picker is not None),
    ("persona editor", "PersonaEditor", MainWindow.edit_persona, lambda w: w.persona is not None),
    ("about", "AboutDialog", MainWindow.show_about, lambda w: w.info is not None),
]


def run() -> dict:
    favour_the_ui_thread()  # as ui/app/application.py does
    qt = QApplication.instance() or QApplication([])
    i18n.set_language("en")
    i18n.read_every_catalogue()
    results: dict = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        app = NexusApp(
            Path(tmp) / "data", clock=FixedClock(NOW), backend_factory=lambda c: ScriptedMind()
        ).open()
        app.state.last_persona = "aria"
        app.models.embedder().embed_passages(["the model loads once, before the probes"])
        window = MainWindow(app)
        window.resize(1000, 700)
        window.show()
        import_in_background(*WINDOW_MODULES)
        freeze_long_lived()
        wait(lambda: window.ready, 300)
        finished: list[bool] = []
        window.turn_finished.connect(lambda *_args: finished.append(True))
        for count, text in enumerate(TURNS, start=1):
            window.input.setPlainText(text)
            window.turns.send_message()
            wait(lambda count=count: len(finished) == count, 120)
        idle(1)
        probe = Probe(qt)
        probe.start()
        idle(2)
        results["baseline"] = probe.stop()
        for label, kind, opener, loaded in WINDOWS:
            for attempt in ("first", "second"):
                probe.start()
                started = time.perf_counter()
                opener(window)
                open_ms = (time.perf_counter() - started) * 1000
                wait(lambda kind=kind: _one(window, kind) is not None, 30)
                shown = _one(window, kind)
                assert shown is not None
                wait(lambda shown=shown, loaded=loaded: loaded(shown), 60)
                idle(0.3)
                results[f"{label} ({attempt})"] = {**probe.stop(), "open_ms": round(open_ms, 1)}
                shown.close()
                idle(0.5)
        window.close()
        app.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run()
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
