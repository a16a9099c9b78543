"""Screenshots of a room in the main window for docs/screenshots: room-en.png and room-ja-dark.png (with
--all, room-ja.png and room-en-dark.png too).

A temporary data folder; Aria and ひかり in a room ("Lighthouse club" / "灯台クラブ", in turn), each member
answering from a script of its own (the same words on every run), streamed three characters at a time. Two
of the person's messages are answered by both; the third is being answered: the picture is taken while
ひかり's reply streams in, "ひかり is writing…" under the conversation.

    xvfb-run -a .venv/bin/python scripts/screenshot_room.py [--all] [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication
from screenshot_windows import pump, wait_for  # the same waits as its sibling

from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from ui.main.main_window import MainWindow
from ui.util import i18n, theme

ROOM = {"en": "Lighthouse club", "ja": "灯台クラブ"}
SAID = {
    "en": [
        "I finally booked the ferry to the lighthouse island for Sunday!",
        "Hikari, what should we bring for the picnic?",
        "And the weather, any guesses?",
    ],
    "ja": [
        "日曜日の灯台の島へのフェリー、やっと予約できたよ！",
        "ひかりさん、ピクニックに何を持っていこうか？",
        "お天気はどうなると思う？",
    ],
}
ANSWERS = {  # each member's answers, in order
    "en": {
        "aria": [
            "That is **wonderful**! The old keeper's house is open on Sundays, I read.",
            "I can bake scones. Hikari, do you like them with jam?",
            "The forecast says *clear skies* until the evening.",
        ],
        "hikari": [
            "Yay! I have wanted to see that lighthouse since spring.",
            "Rice balls, tea in a flask, and a blanket:\n\n- umeboshi for me\n- salmon for you two",
            "I hope the wind stays calm, so the ferry does not rock too much, because last time",
        ],
    },
    "ja": {
        "aria": [
            "それは**すてき**！日曜日は灯台守の家も見学できるみたい。",
            "スコーンを焼いていくね。ひかりさんはジャム派？",
            "予報では夕方まで*快晴*だって。",
        ],
        "hikari": [
            "やった！春からずっとあの灯台を見たかったんです。",
            "おにぎりと水筒のお茶、それにレジャーシート:\n\n- わたしは梅干し\n- 二人には鮭",
            "風が穏やかだといいな。フェリーが揺れると、前のときみたいに酔ってしまうかもしれないから、"
            "酔い止めを持っていきますね。それから帽子も。",
        ],
    },
}


class _Members:
    """Each member's next answer from its script (the system prompt names whose turn it is)."""

    def __init__(self, language: str) -> None:
        self.language = language
        self.count = {"aria": 0, "hikari": 0}

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        slug = "hikari" if "ひかり" in messages[0].content else "aria"
        n = self.count[slug]
        self.count[slug] += 1
        return ANSWERS[self.language][slug][min(n, 2)]


def shoot(out: Path, language: str, dark: bool) -> Path:
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    backend = ScriptedBackend(_Members(language), delay_s=0.02, chunk_size=3)  # Japanese has no spaces
    core = NexusApp(data, backend_factory=lambda config: backend).open()
    core.state.last_persona = "aria" if language == "en" else "hikari"
    theme.apply_theme("dark" if dark else "light")
    i18n.set_language(language)
    slug = core.rooms.create(ROOM[language], ["aria", "hikari"], "list")
    window = MainWindow(core)
    window.show_language(language)
    window.resize(1000, 700)
    window.show()
    wait_for(lambda: window.ready and window.rooms.room_list.count() == 1, "the persona and the room list")
    window.rooms.room_list.chosen.emit(slug)
    wait_for(
        lambda: window.rooms.room_panel is not None and window.rooms.room_panel.settings is not None,
        "the room",
    )
    panel = window.rooms.room_panel
    for n, text in enumerate(SAID[language]):
        panel.input.setPlainText(text)
        panel.send()
        if n < 2:
            wait_for(lambda: panel.worker.idle and panel.view.answering is None, "the answers", 60)
    # The third message: Aria has answered, ひかり is writing (her reply is longer than the wait).
    wait_for(lambda: panel.view.answering == "hikari" and len(panel.view.shown[-1].text) > 20, "ひかり", 60)
    pump(0.1)
    target = out / f"room-{language}{'-dark' if dark else ''}.png"
    window.grab().save(str(target))
    window.close()
    core.close()
    return target


def main() -> None:
    args = sys.argv[1:]
    every = "--all" in args
    args = [a for a in args if a != "--all"]
    out = Path(args[0]) if args else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    shots = [("en", False), ("ja", True)] + ([("ja", False), ("en", True)] if every else [])
    for language, dark in shots:
        print(shoot(out, language, dark))


if __name__ == "__main__":
    main()
