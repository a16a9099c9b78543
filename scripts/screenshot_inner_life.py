"""Screenshots of the dark theme where it once stayed light or faint, for docs/screenshots:
dashboard-{en,ja}-dark.png (View > Inner life…: its drives, feelings, episodes and dream diary tabs, two by
two), model-dialog-en-dark.png (the model dialog saying Ollama is not running) and tray-menu-dark.png (the
tray's menu, its check boxes unchecked).

A temporary data folder and the scripted mind; the persona's memory is planted through the real memory
components (emotions, an open question, a goal, an episode, a dream's insight) and three days of drive
history; the windows are drawn as they would be, in the dark theme (Qt's own grab, without a title bar:
Xvfb has no window manager).

    xvfb-run -a .venv/bin/python scripts/screenshot_inner_life.py [OUT_DIR]
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QWidget
from screenshot_windows import mosaic, pump, wait_for  # the same waits and layout as its sibling

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.components import EmotionEntry, Episode, Goal, Insight, OpenQuestion
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.life.dashboard import DashboardWindow
from ui.life.tray import Tray
from ui.models.model_dialog import ModelSettingsDialog
from ui.util import i18n, theme

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
GAP = 16
SLUGS = {"en": "aria", "ja": "hikari"}
MIND = {
    "en": {
        "said": [
            ("Work was rough today, the deadline moved again.", "sadness", -0.6),
            ("Luna knocked my coffee over, I had to laugh.", "joy", 0.7),
            ("I'm a bit nervous about Friday's presentation.", "fear", -0.4),
            ("The presentation went well!", "joy", 0.9),
        ],
        "question": ("Why does Mika love rainy days?", "Mika"),
        "goal": "Learn Mika's favourite songs",
        "episode": (
            "Mika talked about a rough week at work and laughed about Luna.",
            "tired",
            "A deadline moved",
        ),
        "insight": (
            "work",
            "Mika unwinds by talking about the cat.",
            "Ask about Luna when work is heavy.",
            "A quiet dream about rain on the window.",
        ),
    },
    "ja": {
        "said": [
            ("今日は仕事が大変だった。締め切りがまた延びた。", "sadness", -0.6),
            ("ルナがコーヒーをこぼして、思わず笑っちゃった。", "joy", 0.7),
            ("金曜日の発表が少し不安。", "fear", -0.4),
            ("発表、うまくいったよ!", "joy", 0.9),
        ],
        "question": ("ミカはどうして雨の日が好きなんだろう?", "ミカ"),
        "goal": "ミカの好きな歌を覚える",
        "episode": (
            "ミカは仕事の大変な一週間のことと、ルナの話をして笑っていた。",
            "tired",
            "締め切りが延びた",
        ),
        "insight": (
            "仕事",
            "ミカは猫の話をすると気持ちがほぐれる。",
            "仕事が重いときはルナのことを聞いてみる。",
            "窓をたたく雨の、静かな夢。",
        ),
    },
}


def _open(language: str) -> NexusApp:
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, clock=FixedClock(NOW), backend_factory=lambda config: ScriptedMind()).open()
    core.admin.update_settings(language=language, theme="dark")
    theme.apply_theme("dark")
    i18n.set_language(language)
    return core


def _plant(core: NexusApp, language: str) -> None:
    slug, mind = SLUGS[language], MIND[language]
    store = core.personas.memory(slug)
    c = store.components
    first = None
    for n, (text, emotion, value) in enumerate(mind["said"]):
        when = iso(NOW - timedelta(hours=60 - n * 16))
        said = store.messages.add(speaker="user", role="user", content=text, created_at=when)
        first = first or said
        c.log_emotion(
            EmotionEntry(timestamp=when, emotion=emotion, value=value, snippet=text, message_id=said)
        )
    question, topic = mind["question"]
    c.add_question(
        OpenQuestion(
            question=question,
            topic=topic,
            priority=0.8,
            source_ids=[f"msg:{first}"],
            created_at=iso(NOW - timedelta(days=2)),
        )
    )
    c.put_goal(Goal(term="short", goal=mind["goal"], priority=1, source_ids=[f"msg:{first}"]))
    summary, tone, event = mind["episode"]
    c.put_episode(
        Episode(
            date=(NOW - timedelta(days=1)).date().isoformat(),
            summary=summary,
            emotional_tone=tone,
            key_events=[event],
            source_ids=[f"msg:{first}", f"msg:{first + 1}"],
        )
    )
    topic, insight, strategy, diary = mind["insight"]
    c.add_insight(
        Insight(
            trigger_topic=topic,
            insight=insight,
            strategy=strategy,
            log_entry=diary,
            source_ids=[f"msg:{first + 1}"],
        )
    )
    rows = []
    for hour in range(0, 72, 3):  # three days of the drives rising between talks and falling after them
        t = hour / 72
        levels = (
            0.2 + 0.25 * (hour % 24) / 24,
            0.35 + 0.1 * math.sin(t * 6),
            0.3 + 0.25 * t,
            0.25 + 0.1 * math.cos(t * 5),
        )
        rows.append((iso(NOW - timedelta(hours=72 - hour)), "turn", *levels, "curiosity", "", json.dumps({})))
    with store.db.atomic():
        store.db.conn.executemany(
            "insert into drive_history (time, trigger, boredom, curiosity, goal_achievement, devotion, "
            "dominant, narrative, inputs) values (?,?,?,?,?,?,?,?,?)",
            rows,
        )


def shoot_dashboard(out: Path, language: str) -> Path:
    core = _open(language)
    _plant(core, language)
    window = DashboardWindow(core, SLUGS[language])
    window.resize(1000, 720)
    window.show()
    wait_for(lambda: window.complete, "the Inner life window's first read")
    target = out / f"dashboard-{language}-dark.png"
    mosaic(window, window.tabs, [0, 2, 3, 6], dark=True).save(str(target))
    window.done(0)
    window.worker.wait()
    core.close()
    return target


def shoot_model_dialog(out: Path) -> Path:
    core = _open("en")
    dialog = ModelSettingsDialog(core, "aria")
    dialog.show()
    wait_for(lambda: dialog.loaded, "the model dialog's choices")
    box = dialog.chat.backend_box
    box.setCurrentIndex(box.findData("ollama"))
    dialog.chat.ollama_host.setText("http://127.0.0.1:9")  # nothing listens there
    dialog.chat.refresh_button.click()
    wait_for(lambda: "not running" in dialog.chat.ollama_status.text(), "Ollama's refusal")
    pump(0.3)
    target = out / "model-dialog-en-dark.png"
    dialog.grab().save(str(target))
    dialog.close()
    core.close()
    return target


def shoot_tray_menu(out: Path) -> Path:
    core = _open("en")
    owner = QWidget()
    tray = Tray(owner)
    tray.menu.popup(QPoint(0, 0))
    wait_for(tray.menu.isVisible, "the tray menu")
    pump(0.3)
    shot = tray.menu.grab()
    scaled = shot.scaled(shot.width() * 2, shot.height() * 2, mode=Qt.TransformationMode.SmoothTransformation)
    target = out / "tray-menu-dark.png"
    scaled.save(str(target))
    tray.menu.close()
    core.close()
    return target


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    print(shoot_dashboard(out, "en"))
    print(shoot_dashboard(out, "ja"))
    print(shoot_model_dialog(out))
    print(shoot_tray_menu(out))


if __name__ == "__main__":
    main()
