"""Screenshots of the conversation view for docs/screenshots: chat-{en,ja}[-dark].png and chat-search-en.png.

A temporary data folder, the scripted mind (so the words are the same on every run), a conversation with a
regenerated reply (‹ 2/2 ›), Markdown, and ひかり's language notice on the English-only bundled model.

    xvfb-run -a .venv/bin/python scripts/screenshot_chat.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtWidgets import QApplication

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.main.main_window import MainWindow
from ui.util import i18n, theme

NOW = datetime.now(UTC).replace(microsecond=0)
TALK = {
    "en": [
        ("user", "I finally finished the blue bowl for my sister Yui!"),
        (
            "assistant",
            "That is wonderful! How did the glaze come out?\n\n"
            "- the **colour** you hoped for?\n- any cracks?",
        ),
        ("user", "Deep blue, no cracks. Her birthday is on Friday."),
        (
            "assistant",
            "## A plan for Friday\n\nWrap it in cloth, and tell her *you* made it. She will love it.",
        ),
    ],
    "ja": [
        ("user", "妹のユイにあげる青いお皿、やっと完成したよ！"),
        ("assistant", "すごい！釉薬の色はどうだった？\n\n- 思った通りの**色**？\n- ひびは入らなかった？"),
        ("user", "深い青で、ひびもなし。誕生日は金曜日なんだ。"),
        ("assistant", "## 金曜日の計画\n\n布で包んで、*自分で*作ったって伝えてね。きっと喜ぶよ。"),
    ],
}


def _plant(core: NexusApp, slug: str, language: str) -> None:
    store = core.personas.memory(slug)
    start = NOW - timedelta(minutes=30)
    last = 0
    for i, (role, text) in enumerate(TALK[language]):
        last = store.messages.add(
            speaker="user" if role == "user" else slug,
            role=role,
            content=text,
            created_at=iso(start + timedelta(minutes=3 * i)),
        )
    # An earlier version of the last reply: the bubble shows ‹ 2/2 ›.
    store.messages.hide_from(last)
    newer = store.messages.add(
        speaker=slug,
        role="assistant",
        content=TALK[language][-1][1],
        version_of=last,
        created_at=iso(start + timedelta(minutes=12)),
    )
    assert newer


def shoot(out: Path, language: str, dark: bool, search: str = "") -> Path:
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, clock=FixedClock(NOW), backend_factory=lambda config: ScriptedMind()).open()
    slug = "aria" if language == "en" else "hikari"
    _plant(core, slug, language)
    core.state.last_persona = slug
    theme.apply_theme("dark" if dark else "light")
    i18n.set_language(language)
    window = MainWindow(core)
    window.show_language(language)
    window.resize(1000, 700)
    window.show()
    app = QApplication.instance()
    for _ in range(400):  # the page, the avatar and the language check arrive from worker threads
        app.processEvents()
        if window.chat.bubbles and not window.chat.drawing and window.ready:
            break
        time.sleep(0.02)
    if search:
        window.conversation.open_search()
        window.search_bar.field.setText(search)
        for _ in range(100):
            app.processEvents()
            time.sleep(0.02)
    for _ in range(50):
        app.processEvents()
        time.sleep(0.02)
    name = f"chat-{'search-' if search else ''}{language}{'-dark' if dark else ''}.png"
    target = out / name
    window.grab().save(str(target))
    window.close()
    core.close()
    return target


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    for language, dark, search in (
        ("en", False, ""),
        ("ja", False, ""),
        ("en", True, ""),
        ("ja", True, ""),
        ("en", False, "blue"),
    ):
        print(shoot(out, language, dark, search))


if __name__ == "__main__":
    main()
