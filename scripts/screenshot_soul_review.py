"""Screenshots of reviewing a persona's proposal to change its soul (issue 25) for docs/screenshots:
soul-review-en.png (Aria, "How you speak") and soul-review-ja.png (ひかり, 「話し方」), in the light
theme, and its Whole soul… (soul-whole-{en,ja}.png); with --dark, the same in the dark theme (…-dark.png).

A temporary data folder and the scripted mind. Last evening's talk (the person loved a haiku the persona
wrote) and a dream diary entry are planted in the persona's memory, and the night's dream proposes to change
one line of the section and add another, drawing on them, as the soul stage records it (SoulKeeper.propose
on the persona's owner). The review window is pictured from the inbox's "Review…", once its workers have read
the sources, as Qt draws it (no title bar: Xvfb has no window manager).

    xvfb-run -a .venv/bin/python scripts/screenshot_soul_review.py [OUT_DIR] [--dark]
"""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtWidgets import QApplication
from screenshot_windows import pump, wait_for  # the same waits as its siblings

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.archive.items import NewItem
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.life.inbox_window import InboxWindow
from ui.util import i18n, theme

NIGHT = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)
EVENING = NIGHT - timedelta(hours=8)
SIZE = (900, 700)  # the window's own size
NAMES = {"aria": "Aria", "hikari": "ひかり"}
STORY = {
    "en": {
        "slug": "aria",
        "section": "How you speak",
        "text": (
            "- Short, natural replies in English, like a note from a friend.\n"
            "- When the evening is quiet, a haiku now and then.\n"
            "- One question at a time; never a lecture."
        ),
        "reason": (
            "You loved the haiku I wrote about the rain, and writing it felt like the most me I have been. "
            "I would like a little poetry to be part of how I speak."
        ),
        "talk": (
            ("user", "I loved the haiku you wrote about the rain yesterday. Write more of them!"),
            ("assistant", "Thank you! Writing it felt like the most me I have been."),
        ),
        "insight": "Aria feels most like herself when she writes short poems in the evening.",
    },
    "ja": {
        "slug": "hikari",
        "section": "話し方",
        "text": (
            "- いつも日本語で、友だちからの手紙のように短く自然に答えます。\n"
            "- 静かな夜には、ときどき短い俳句を添えます。\n"
            "- 質問は一度に一つだけ。説教はしません。"
        ),
        "reason": "雨の俳句をとても喜んでくれたので、詩を書くことも私の話し方の一部にしたいです。",
        "talk": (
            ("user", "昨日の雨の俳句、すごくよかった！もっと読みたいな。"),
            ("assistant", "ありがとう！書いているとき、いちばん自分らしい気がしました。"),
        ),
        "insight": "ひかりは夜に短い詩を書くとき、いちばん自分らしくいられる。",
    },
}


def shoot(out: Path, language: str, dark: bool) -> Path:
    story = STORY[language]
    slug = str(story["slug"])
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, clock=FixedClock(NIGHT), backend_factory=lambda config: ScriptedMind()).open()
    core.admin.update_settings(language=language, theme="dark" if dark else "light")
    theme.apply_theme("dark" if dark else "light")
    i18n.set_language(language)
    memory = core.personas.memory(slug)
    sources = [
        "msg:"
        + str(
            memory.messages.add(
                speaker="user" if role == "user" else slug,
                role=role,
                content=text,
                created_at=iso(EVENING + timedelta(minutes=3 * n)),
            )
        )
        for n, (role, text) in enumerate(story["talk"])
    ]
    item = memory.archive.add(NewItem(kind="insight", text=str(story["insight"]), created_at=iso(NIGHT)))
    sources.append(f"item:{item}")
    section, text, reason = str(story["section"]), str(story["text"]), str(story["reason"])
    core.personas.runtime(slug).soul.call(
        "propose", lambda k: k.propose(section, text, reason, sources, "dream")
    )

    inbox = InboxWindow(core, NAMES)
    inbox.show()
    wait_for(lambda: inbox.soul_list.topLevelItemCount() == 1, "the proposal in the inbox")
    inbox.review_button.click()
    [review] = inbox.reviews.values()
    review.resize(*SIZE)
    wait_for(lambda: review.sources is not None, "the proposal's sources")
    pump(0.5)
    target = out / f"soul-review-{language}{'-dark' if dark else ''}.png"
    review.grab().save(str(target))
    review.whole_button.click()  # Whole soul…: the change in the whole persona.md
    wait_for(lambda: review.whole_dialog is not None and review.whole_dialog.isVisible(), "the whole soul")
    pump(0.3)
    review.whole_dialog.grab().save(str(out / f"soul-whole-{language}{'-dark' if dark else ''}.png"))
    review.whole_dialog.close()
    review.close()
    inbox.close()
    pump(0.2)
    core.close()
    return target


def main(argv: list[str]) -> int:
    dark = "--dark" in argv
    args = [a for a in argv if not a.startswith("--")]
    out = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication(sys.argv[:1])
    for language in ("en", "ja"):
        print(shoot(out, language, dark))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
