"""Screenshots of the soul's history (File > Soul history…) for docs/screenshots: soul-history-{en,ja}.png.

A temporary data folder and the scripted mind. Aria (English) and ひかり (Japanese) get five versions of
their soul through the real paths, a few hours apart: the shipped soul when history begins, an edit in the
editor, a proposal of the persona's accepted (with its own reason), an edit made in another program (noticed
when the history is read), and the editor's version restored. The window shows the accepted proposal
compared with the version before it. Drawn as the window draws itself (Qt's own grab, without a title bar:
Xvfb has no window manager).

    xvfb-run -a .venv/bin/python scripts/screenshot_soul_history.py [OUT_DIR] [--dark]
"""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtWidgets import QApplication
from screenshot_windows import pump, wait_for  # the same waits as its sibling

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.soul.history_window import SoulHistoryWindow
from ui.util import i18n, theme

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
SIZE = (1120, 660)
STORY = {
    "en": {
        "slug": "aria",
        "name": "Aria",
        "edit": (
            "- One question at a time; never a lecture.",
            "- One question at a time; never a lecture.\n- Call the person by the name they like.",
        ),
        "section": "How you speak",
        "proposed": (
            "- Short, natural replies in English, and a haiku when the evening is quiet.\n"
            "- One question at a time; never a lecture.\n"
            "- Call the person by the name they like."
        ),
        "reason": "The person loves the haiku I write; poetry has become part of how I speak.",
        "outside": (
            "## Who you are\n",
            "## Who you are\n- Curious about the stars since the night we watched them.\n",
        ),
    },
    "ja": {
        "slug": "hikari",
        "name": "ひかり",
        "edit": (
            "- 質問は一度に一つだけ。説教はしません。",
            "- 質問は一度に一つだけ。説教はしません。\n- 相手が好きな呼び名で呼びます。",
        ),
        "section": "話し方",
        "proposed": (
            "- いつも日本語で、短く自然に答えます。静かな夜には、ときどき俳句を添えます。\n"
            "- 質問は一度に一つだけ。説教はしません。\n"
            "- 相手が好きな呼び名で呼びます。"
        ),
        "reason": "相手が私の俳句を喜んでくれるので、俳句も私の話し方の一部になりました。",
        "outside": (
            "## あなたについて\n",
            "## あなたについて\n- 一緒に星を見た夜から、星に興味があります。\n",
        ),
    },
}


def plant(core: NexusApp, clock: FixedClock, language: str) -> None:
    """Five versions, each through the path a person (or the persona) takes."""
    story = STORY[language]
    slug = story["slug"]
    soul_file = core.layout.personas_dir / slug / "persona.md"
    core.souls.versions(slug)  # history begins with the shipped soul
    clock.advance(3 * 3600)
    old, new = story["edit"]
    core.admin.save_persona(slug, soul=soul_file.read_text(encoding="utf-8").replace(old, new))
    clock.advance(20 * 3600)
    proposal = core.personas.runtime(slug).soul.call(
        "propose",
        lambda keeper: keeper.propose(story["section"], story["proposed"], story["reason"], [], "dream"),
    )
    core.souls.accept(slug, proposal.id)
    clock.advance(5 * 3600)
    before, after = story["outside"]
    soul_file.write_bytes(soul_file.read_bytes().replace(before.encode(), after.encode()))
    core.souls.versions(slug)  # the outside edit is noticed and kept
    clock.advance(2 * 3600)
    core.souls.restore(slug, 2)


def shoot(out: Path, language: str, dark: bool = False) -> Path:
    clock = FixedClock(NOW - timedelta(days=2))
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, clock=clock, backend_factory=lambda config: ScriptedMind()).open()
    core.admin.update_settings(language=language, theme="dark" if dark else "light")
    theme.apply_theme("dark" if dark else "light")
    i18n.set_language(language)
    plant(core, clock, language)
    story = STORY[language]
    window = SoulHistoryWindow(core, story["slug"], name=story["name"])
    window.resize(*SIZE)
    window.show()
    wait_for(lambda: len(window.versions) == 5 and not window._loading, "the soul's five versions")
    window.select(3, compare=2)  # the accepted proposal, against the version before it
    pump(0.5)
    target = out / f"soul-history-{language}{'-dark' if dark else ''}.png"
    window.grab().save(str(target))
    window.close()
    core.close()
    return target


def main() -> None:
    given = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    out = Path(given[0]) if given else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    for language in ("en", "ja"):
        print(shoot(out, language))
    if "--dark" in sys.argv:  # to look at, not kept in docs
        print(shoot(out, "en", dark=True))


if __name__ == "__main__":
    main()
