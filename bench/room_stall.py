"""A room in the window: the main loop's largest stall while two members stream their answers (issue 24).

The real MainWindow (offscreen) on a temporary data folder; Aria and ひかり in a room in list order, each
answering on a scripted model of its own words (the bench measures the window, not a model): a long Markdown
reply streamed a word every --delay-ms, so every answer arrives in many coalesced pieces. A 10 ms QTimer
probe (bench.ui_stall.Probe) records how late each tick came: the time the main loop could not run.
Scenarios, each with its own probe:

- baseline: the room open, nothing running;
- stream: the person sends --messages lines, one after the other; each is answered by both members, one
  after the other, each reply streamed into its own bubble (the room's lane coalesces, the view sets only
  the answering bubble's words again);
- interrupt: the person sends while Aria is answering (her answer stops, the new line goes in);
- reopen: the room opened again with --history lines more in its journal (long Markdown lines, heard by
  the members before the probe starts): the view draws the latest 200 from the newest up.

Also the longest single call of the view's streaming handlers (append_answer, end_answer) on the main
thread, and, for every tick late by more than 16 ms, how much CPU the main thread itself used in that gap
(`main_cpu_in_late_gaps_ms`): a late tick with next to none was the main thread waiting, for a core (a
loaded machine) or for the interpreter lock, not drawing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.room_stall [--messages 3] [--reply-words 400] \
        [--delay-ms 2] [--history 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from bench.chat_view_stall import long_reply
from bench.ui_stall import Probe, spin
from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.rooms.journal import RoomJournal
from ui.main.main_window import MainWindow
from ui.rooms.room_panel import RoomPanel
from ui.util import i18n
from ui.util.tasks import favour_the_ui_thread, freeze_long_lived

SAID = [
    "Shall we plan the lighthouse trip together?",
    "What should we bring, and who carries the tea?",
    "And if it rains, what then?",
    "Tell me everything you know about lighthouses.",
]


def _answers(reply: str):
    hikari = reply.replace("the sea", "海").replace("light", "光")  # her own words, Japanese mixed in

    def answer(messages: Sequence[ChatMessage]) -> str:
        return hikari if "ひかり" in messages[0].content else reply

    return answer


class _Probe(Probe):
    """The ticks' lateness, and the main thread's own CPU time in each gap late by more than 16 ms."""

    def start(self) -> None:
        self.busy: list[float] = []
        self._cpu = time.thread_time()
        super().start()

    def _tick(self) -> None:
        cpu, gap = time.thread_time(), (time.perf_counter() - self.last) * 1000
        if gap - 10 > 16:
            self.busy.append(round((cpu - self._cpu) * 1000, 1))
        self._cpu = cpu
        super()._tick()

    def stop(self) -> dict:
        return {**super().stop(), "main_cpu_in_late_gaps_ms": sorted(self.busy, reverse=True)[:8]}


class _Clocked:
    """The longest single run of some of the view's methods on the main thread, and how many ran."""

    def __init__(self, view, names: tuple[str, ...]) -> None:
        self.longest_ms = dict.fromkeys(names, 0.0)
        self.calls = dict.fromkeys(names, 0)
        for name in names:
            setattr(view, name, self._clocked(name, getattr(view, name)))

    def _clocked(self, name: str, call):
        def clocked(*args):
            started = time.perf_counter()
            call(*args)
            self.longest_ms[name] = max(self.longest_ms[name], (time.perf_counter() - started) * 1000)
            self.calls[name] += 1

        return clocked


def _idle(qt: QApplication, panel: RoomPanel, timeout: float = 600) -> None:
    spin(qt, lambda: panel.worker.idle and panel.view.answering is None, timeout)


def _open(qt: QApplication, window: MainWindow, slug: str) -> RoomPanel:
    window.rooms.room_list.chosen.emit(slug)
    spin(
        qt, lambda: window.rooms.room_panel is not None and window.rooms.room_panel.settings is not None, 120
    )
    return window.rooms.room_panel


def plant(app: NexusApp, slug: str, count: int, text: str) -> None:
    """count lines in the room's journal, the person and the members in turn, and every member told of
    them (the catch-up a room does at its next open, done here before the probe)."""
    journal = RoomJournal(app.rooms.folder(slug))
    try:
        for n in range(count):
            author = (None, "aria", "hikari")[n % 3]
            journal.add(author, {None: "", "aria": "Aria", "hikari": "ひかり"}[author], f"{n}: {text}", "")
    finally:
        journal.close()
    app.rooms.open(slug).close()


def run(messages: int, reply_words: int, delay_ms: float, history: int) -> dict:
    favour_the_ui_thread()  # as ui/app/application.py does
    qt = QApplication.instance() or QApplication([])
    i18n.set_language("en")
    reply = long_reply(reply_words)
    results: dict = {
        "cpus": os.cpu_count(),
        "switch_interval_ms": sys.getswitchinterval() * 1000,
        "reply_chars": len(reply),
        "delay_ms": delay_ms,
    }
    with tempfile.TemporaryDirectory() as tmp:
        backend = ScriptedBackend(_answers(reply), delay_s=delay_ms / 1000)
        app = NexusApp(Path(tmp) / "data", backend_factory=lambda config: backend).open()
        slug = app.rooms.create("Lighthouse", ["aria", "hikari"], "list")
        window = MainWindow(app)
        window.resize(1000, 700)
        window.show()
        spin(qt, lambda: window.ready and window.rooms.room_list.count() == 1, 300)
        panel = _open(qt, window, slug)
        freeze_long_lived()  # as the app does once its window is built (ui/app/application.py)
        probe = _Probe(qt)

        probe.start()
        quiet_until = time.monotonic() + 2
        spin(qt, lambda: time.monotonic() > quiet_until, 5)
        results["baseline"] = probe.stop()

        handlers = _Clocked(panel.view, ("append_answer", "end_answer"))
        probe.start()
        started = time.monotonic()
        for n in range(messages):
            panel.input.setPlainText(SAID[n % len(SAID)])
            panel.send()
            _idle(qt, panel)
        results["stream"] = {
            **probe.stop(),
            "messages": messages,
            "answers": sum(1 for line in panel.view.shown if line.author is not None),
            "longest_answer_chars": max(len(line.text) for line in panel.view.shown),  # a reply's token cap
            "streamed_pieces": handlers.calls["append_answer"],
            "seconds": round(time.monotonic() - started, 1),
            "append_answer_max_ms": round(handlers.longest_ms["append_answer"], 1),
            "end_answer_max_ms": round(handlers.longest_ms["end_answer"], 1),
        }

        probe.start()
        panel.input.setPlainText(SAID[0])
        panel.send()
        spin(qt, lambda: panel.view.answering == "aria" and len(panel.view.shown[-1].text) > 200, 120)
        panel.input.setPlainText("ひかりさん、先にどうぞ。")
        panel.send()
        _idle(qt, panel)
        results["interrupt"] = {**probe.stop(), "stopped": [line.status for line in panel.view.shown[-5:]]}

        window.rooms.show_persona_page()
        spin(qt, lambda: window.rooms.room_lane.idle, 60)  # the room closed on its lane: its journal too
        plant(app, slug, history, long_reply(60))
        probe.start()
        panel = _open(qt, window, slug)
        spin(qt, lambda: not panel.view.drawing, 60)
        painted_until = time.monotonic() + 0.2  # the last of the history is laid out and painted
        spin(qt, lambda: time.monotonic() > painted_until, 5)
        results["reopen"] = {**probe.stop(), "lines_shown": len(panel.view.shown)}
        window.close()
        app.close()
    return results


OPTIONS = {  # flag: (type, default, help)
    "--messages": (int, 3, "the person's lines, each answered by both members"),
    "--reply-words": (int, 400, "the length of each member's Markdown answer"),
    "--delay-ms": (float, 2.0, "between two streamed words"),
    "--history": (int, 200, "lines added to the journal before the room opens again"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, (kind, default, meaning) in OPTIONS.items():
        parser.add_argument(flag, type=kind, default=default, help=meaning)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = json.dumps(run(args.messages, args.reply_words, args.delay_ms, args.history), indent=2)
    print(report)
    if args.json:
        args.json.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
