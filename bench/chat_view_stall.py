"""The conversation view's main loop under long history: does it ever stall?

The real MainWindow (offscreen) on a temporary data folder with the deterministic scripted mind (the bench
measures the window, not a model). A 10 ms QTimer probe records how late each tick came: the time the main
loop could not run. Scenarios, each with its own probe:

- scroll back: a conversation of N messages (default 50,000); the view is scrolled to its top again and
  again, each time a page of older messages arrives above (--pages of them), then "jump to latest";
- search: a word in the oldest message, found and brought into view from years back, then back to latest;
- stream: a long Markdown reply (--reply-words) streamed into the open conversation;
- switch: switching between two personas with long conversations, back and forth (--switches times).

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.chat_view_stall [--messages 50000] [--json out.json] \
        [--busy-python] [--default-interval]

--busy-python keeps a thread running pure Python through every scenario (standing for background work in
Python: parsing an import, a dream's bookkeeping), which holds the interpreter lock whenever it can;
--default-interval leaves Python's 5 ms switch interval instead of the app's
(ui.util.tasks.favour_the_ui_thread).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from bench.ui_stall import Probe, spin
from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.main.main_window import MainWindow
from ui.util import i18n
from ui.util.tasks import favour_the_ui_thread, freeze_long_lived

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
SENTENCE = "the sea was **calm** that morning and the *light* moved slowly over the water"
WORDS = SENTENCE.split()


def plant(app: NexusApp, slug: str, count: int) -> None:
    store = app.personas.memory(slug)
    start = NOW - timedelta(minutes=count)
    rows = []
    for i in range(count):
        text = f"message {i}: " + " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12 + i % 30))
        if i % 7 == 0:
            text += "\n\n- first point\n- second point"
        if i == 0:
            text += " lighthouse"
        user = i % 2 == 0
        rows.append(
            (
                "main",
                "user" if user else slug,
                "user" if user else "assistant",
                text,
                "complete",
                iso(start + timedelta(minutes=i)),
            )
        )
    with store.db.atomic():
        store.db.conn.executemany(
            "insert into messages (room, speaker, role, content, status, created_at) values (?,?,?,?,?,?)",
            rows,
        )


def long_reply(words: int) -> str:
    parts = ["## A long answer\n\n"]
    for i in range(words):
        parts.append(WORDS[i % len(WORDS)] + (".\n\n" if i % 40 == 39 else " "))
        if i % 200 == 199:
            parts.append("\n- a point\n- another point\n\n")
    return "".join(parts)


def settle(qt: QApplication, window: MainWindow, timeout: float = 60) -> None:
    spin(qt, lambda: not window.chat.drawing and not window.chat.loading_older, timeout)


def busy_python(stop: threading.Event) -> None:
    """Python that never waits: it gives the interpreter lock up only when the interval forces it."""
    total = 0
    while not stop.is_set():
        for i in range(1000):
            total += i * i


def run(
    messages: int,
    pages: int,
    reply_words: int,
    switches: int,
    busy: bool = False,
    default_interval: bool = False,
) -> dict:
    if not default_interval:
        favour_the_ui_thread()  # as ui/app/application.py does
    qt = QApplication.instance() or QApplication([])
    i18n.set_language("en")
    results: dict = {
        "messages": messages,
        "cpus": os.cpu_count(),
        "busy_python": busy,
        "switch_interval_ms": sys.getswitchinterval() * 1000,
    }
    stop_busy = threading.Event()
    if busy:
        threading.Thread(target=busy_python, args=(stop_busy,), name="busy-python", daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        reply = long_reply(reply_words)
        app = NexusApp(
            Path(tmp) / "data", clock=FixedClock(NOW), backend_factory=lambda c: ScriptedMind()
        ).open()
        planted = time.perf_counter()
        plant(app, "aria", messages)
        plant(app, "hikari", messages)
        results["plant_s"] = round(time.perf_counter() - planted, 1)
        app.state.last_persona = "aria"
        window = MainWindow(app)
        window.resize(1000, 700)
        window.show()
        spin(qt, lambda: window.ready and bool(window.chat.bubbles), 300)
        settle(qt, window)
        freeze_long_lived()  # as the app does once its window is built (ui/app/application.py)
        probe = Probe(qt)

        probe.start()
        end = time.monotonic() + 2
        while time.monotonic() < end:
            qt.processEvents()
            time.sleep(0.001)
        results["baseline"] = probe.stop()

        # Scroll back, a page at a time, then jump to the latest.
        chat = window.chat
        probe.start()
        for _ in range(pages):
            first = chat.bubbles[0].id
            chat.verticalScrollBar().setValue(0)
            spin(qt, lambda first=first: chat.bubbles[0].id < first and not chat.drawing, 60)
            for _ in range(5):  # the person reads a moment
                qt.processEvents()
                time.sleep(0.005)
        reached = chat.bubbles[0].id
        window.conversation.jump_to_latest()
        spin(qt, lambda: not chat.has_newer and not chat.drawing and chat.is_at_bottom(), 60)
        results["scroll_back"] = {
            **probe.stop(),
            "pages": pages,
            "oldest_shown_id": reached,
            "bubbles_held": len(chat.bubbles),
        }

        # Search for a word only the oldest message has: its page comes from years back.
        probe.start()
        window.conversation.open_search()
        window.search_bar.field.setText("lighthouse")
        spin(qt, lambda: chat.message(1) is not None and not chat.drawing, 60)
        window.search_bar.close_bar()
        window.conversation.jump_to_latest()
        spin(qt, lambda: not chat.has_newer and not chat.drawing, 60)
        results["search_far_back"] = probe.stop()

        # A long reply streamed in.
        runtime = app.personas.runtime("aria")
        runtime.use_backend(ScriptedBackend([reply], delay_s=0.002))
        probe.start()
        window.input.setPlainText("Tell me a long story.")
        started = time.monotonic()
        window.send_message()
        spin(qt, lambda: not window.streaming, 600)
        results["stream"] = {
            **probe.stop(),
            "reply_chars": len(reply),
            "reply_s": round(time.monotonic() - started, 1),
        }

        # Switching personas, both with long conversations: each switch ends when the persona's latest page
        # is drawn (the person sees the conversation), not when it was asked for.
        shown: list[str] = []
        window.conversation.page_shown.connect(shown.append)
        drawn = []

        def latest_shown(slug: str) -> bool:
            return window.current_slug == slug and window.ready and "latest" in shown

        probe.start()
        for i in range(switches):
            slug = "hikari" if i % 2 == 0 else "aria"
            shown.clear()
            window.select_persona(slug)
            spin(qt, lambda slug=slug: latest_shown(slug), 120)
            settle(qt, window)
            drawn.append(len(chat.bubbles))
        results["switch"] = {**probe.stop(), "switches": switches, "bubbles_shown": drawn}
        stop_busy.set()
        window.close()
        app.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--reply-words", type=int, default=2_000)
    parser.add_argument("--switches", type=int, default=6)
    parser.add_argument("--busy-python", action="store_true", help="a thread running Python throughout")
    parser.add_argument(
        "--default-interval", action="store_true", help="Python's switch interval, not the app's"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(
        args.messages,
        args.pages,
        args.reply_words,
        args.switches,
        busy=args.busy_python,
        default_interval=args.default_interval,
    )
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
