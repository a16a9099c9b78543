"""The window's main loop while the person imports: a 200-page PDF and a 5,000-entry lorebook. Does it stall?

The real MainWindow (offscreen) on a temporary data folder with the deterministic scripted mind (the bench
measures the window, not a model); the embeddings are the real bundled ones, since the import embeds (on
its own thread). A 10 ms QTimer probe records how late each tick came: the time the main loop could not
run. Scenarios, each with its own probe (the baseline first, with nothing running):

- pdf: the Memory window's Knowledge tab adds a PDF of --pages pages (made here, with real text objects, so
  pypdf extracts them) and indexes it to the end: read, chunked, stored and embedded, progress shown;
- card: File > Import a character card… with a SillyTavern V3 PNG card whose lorebook (character_book) has
  --entries entries, to the end: the persona exists, the message box says so, the window opens it;
- memory window: the Memory window opened on that persona (its People and things tab lists the lore).

Each reports the largest stall, the 99th percentile, how many ticks were late by more than 16 ms, and the
wall time of the scenario.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.import_stall [--pages 200] [--entries 5000] \
        [--no-freeze] [--json out.json]

--no-freeze leaves out what ui/app/application.py does once the window is built
(ui.util.tasks.freeze_long_lived), to show what the garbage collector's full walks cost the window without it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from bench.ui_stall import Probe
from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.paths import assets_dir
from nexus_ark.personas.cards import V3, embed_card, v2_copy
from nexus_ark.runtime.scripted_mind import ScriptedMind
from tests.pdf_maker import write_pdf
from ui.main.main_window import MainWindow
from ui.memory.memory_window import MemoryWindow
from ui.personas import card_actions
from ui.util import i18n
from ui.util.tasks import favour_the_ui_thread, freeze_long_lived

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
SENTENCE = (
    "the harbour tide tables of the northern coast list each morning and evening water level "
    "for the fishing boats and the ferry that leaves the old pier at dawn"
)
WORDS = SENTENCE.split(" ")


def make_pdf(path: Path, pages: int) -> Path:
    """A text PDF: 40 lines of about 70 characters a page (a dense book page is 2,500-3,000 characters)."""
    content = []
    for p in range(pages):
        lines = [f"Chapter {p // 10 + 1}, page {p + 1}."]
        for i in range(39):
            lines.append(" ".join(WORDS[(p * 7 + i * 3 + k) % len(WORDS)] for k in range(13)) + ".")
        content.append(lines)
    return write_pdf(path, content)


def make_card(path: Path, entries: int) -> Path:
    """A V3 PNG card (with its V2 copy) whose lorebook has `entries` entries, a few of them constant."""
    book = []
    for i in range(entries):
        book.append(
            {
                "keys": [f"place{i}", f"landmark {i}"],
                "secondary_keys": [],
                "content": f"Place {i} is a harbour town where "
                + " ".join(WORDS[(i + k) % len(WORDS)] for k in range(30))
                + ".",
                "extensions": {},
                "enabled": True,
                "constant": i % 1000 == 0,
                "insertion_order": i,
                "name": f"Place {i}",
                "comment": f"Place {i}",
                "use_regex": False,
            }
        )
    card = {
        "spec": V3,
        "spec_version": "3.0",
        "data": {
            "name": "Mira the Cartographer",
            "description": "{{char}} draws maps of every harbour on the northern coast.",
            "personality": "patient, curious, precise",
            "scenario": "{{user}} visits {{char}}'s workshop by the sea.",
            "first_mes": "Welcome in, {{user}}. Mind the ink, it is still wet.",
            "mes_example": "",
            "creator_notes": "",
            "system_prompt": "",
            "post_history_instructions": "",
            "alternate_greetings": ["Ah, {{user}}. Looking for a map?"],
            "group_only_greetings": [],
            "tags": ["maps"],
            "creator": "bench",
            "character_version": "1",
            "extensions": {},
            "character_book": {"name": "The coast", "extensions": {}, "entries": book},
        },
    }
    picture = (assets_dir() / "icons" / "app.png").read_bytes()
    path.write_bytes(embed_card(picture, card, v2_copy(card), "app.png"))
    return path


def wait(until, timeout: float) -> None:
    """Run the Qt event loop, as the app does, until `until()` (checked every 20 ms). The main thread then
    holds the interpreter lock only while a slot runs: a loop of processEvents() and sleep() would take it
    back every millisecond and queue behind the import's Python threads each time (the app never does)."""
    loop = QEventLoop()
    deadline = time.monotonic() + timeout
    check = QTimer()
    check.setInterval(20)
    check.timeout.connect(lambda: (until() or time.monotonic() > deadline) and loop.quit())
    check.start()
    if not until():
        loop.exec()
    check.stop()
    if not until():
        raise TimeoutError("the bench's wait timed out")


def idle(seconds: float) -> None:
    end = time.monotonic() + seconds
    wait(lambda: time.monotonic() >= end, seconds + 5)


def run(pages: int, entries: int, freeze: bool = True) -> dict:
    favour_the_ui_thread()  # as ui/app/application.py does
    qt = QApplication.instance() or QApplication([])
    i18n.set_language("en")
    results: dict = {"pages": pages, "entries": entries, "frozen": freeze, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        made = time.perf_counter()
        pdf = make_pdf(folder / "harbour-almanac.pdf", pages)
        card = make_card(folder / "mira.png", entries)
        results["pdf_bytes"] = pdf.stat().st_size
        results["card_bytes"] = card.stat().st_size
        results["make_s"] = round(time.perf_counter() - made, 1)
        app = NexusApp(
            folder / "data", clock=FixedClock(NOW), backend_factory=lambda c: ScriptedMind()
        ).open()
        app.state.last_persona = "aria"
        app.models.embedder().embed_passages(["the model loads once, before the probes"])
        window = MainWindow(app)
        window.resize(1000, 700)
        window.show()
        if freeze:
            freeze_long_lived()  # as ui/app/application.py does once the window is built
        wait(lambda: window.ready, 300)
        idle(1)
        probe = Probe(qt)

        probe.start()
        idle(2)
        results["baseline"] = probe.stop()

        # A 200-page PDF into the knowledge base, from the Memory window's Knowledge tab.
        window.openers.show_memory()
        wait(lambda: bool(window.findChildren(MemoryWindow)), 60)
        memory = window.findChildren(MemoryWindow)[0]
        memory.tabs.setCurrentIndex(3)
        idle(0.5)
        probe.start()
        started = time.monotonic()
        memory.add_documents([pdf])
        wait(lambda: memory.progress.isHidden() and memory.worker.idle, 900)
        results["pdf"] = {
            **probe.stop(),
            "wall_s": round(time.monotonic() - started, 1),
            "status": memory.status.text(),
            "chunks": memory.documents.item(0, 2).text() if memory.documents.rowCount() else None,
        }
        memory.close()
        idle(0.5)

        # A character card with a 5,000-entry lorebook, through File > Import a character card….
        before = {p.slug for p in app.personas.all()}
        probe.start()
        started = time.monotonic()
        card_actions.import_card_file(window, app, card, window.on_card_imported)

        def imported() -> bool:
            return window.current_slug not in before and window.ready

        wait(imported, 900)
        results["card"] = {**probe.stop(), "wall_s": round(time.monotonic() - started, 1)}
        boxes = [b for b in window.findChildren(QMessageBox) if b.objectName() == "card-result"]
        results["card"]["message"] = boxes[-1].text() if boxes else None
        for box in boxes:
            box.close()
        idle(0.5)

        # The Memory window on the persona the card made: its 5,000 lore entries are people and things.
        probe.start()
        started = time.monotonic()
        window.openers.show_memory()
        wait(lambda: any(m.slug == window.current_slug for m in window.findChildren(MemoryWindow)), 60)
        memory = next(m for m in window.findChildren(MemoryWindow) if m.slug == window.current_slug)
        memory.tabs.setCurrentIndex(2)
        wait(lambda: memory.entity_list.count() > 0 and memory.worker.idle, 120)
        memory.entity_list.setCurrentRow(memory.entity_list.count() // 2)  # read one entry
        wait(lambda: bool(memory.entity_text.toPlainText()) and memory.worker.idle, 60)
        idle(0.3)
        results["memory_window"] = {
            **probe.stop(),
            "wall_s": round(time.monotonic() - started, 1),
            "entities_listed": memory.entity_list.count(),
        }
        memory.close()
        idle(0.3)
        window.close()
        app.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--entries", type=int, default=5_000)
    parser.add_argument("--no-freeze", action="store_true", help="as before ui.util.tasks.freeze_long_lived")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.pages, args.entries, freeze=not args.no_freeze)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
