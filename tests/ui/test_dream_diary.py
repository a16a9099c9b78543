"""The dream diary shows a dream the moment Dream now finishes, also on a model too small to reflect (it
writes the day's episode and people and things, no insight: the diary said "No dreams yet").

A real dream (app.personas.dream through the dashboard's Dream now) on a scripted model that reports 135M
parameters, the size of the bundled one: the extractive dream runs on the day's real messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.providers.scripted import ScriptedBackend
from ui.life.dashboard import DashboardWindow
from ui.util import i18n

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def test_dream_now_on_a_small_model_shows_its_dream_in_the_diary(qtbot, data_dir: Path) -> None:
    app = NexusApp(
        data_dir,
        clock=FixedClock(NOW),
        backend_factory=lambda config: ScriptedBackend(["unused"], parameters=135_000_000),
    ).open()
    i18n.set_language("en")
    win = None
    try:
        messages = app.personas.memory("aria").messages
        messages.add(
            speaker="Mika",
            role="user",
            content="My sister Yui made pasta with basil from her garden in Osaka.",
            created_at=iso(NOW - timedelta(hours=3)),
        )
        win = DashboardWindow(app, "aria")
        qtbot.addWidget(win)
        qtbot.waitUntil(lambda: win.complete, timeout=30_000)
        assert "No dreams yet" in win.diary.view.toPlainText()

        win.dream_button.click()
        qtbot.waitUntil(lambda: win.dream_button.isEnabled(), timeout=60_000)
        assert win.status.text().startswith("Dreamt"), win.status.text()
        # The read after the dream arrives on the window's lane: the diary shows the dream then.
        qtbot.waitUntil(lambda: "No dreams yet" not in win.diary.view.toPlainText(), timeout=10_000)
        diary = win.diary.view.toPlainText()
        assert f"a dream of {(NOW - timedelta(hours=3)).date().isoformat()}" in diary
        assert "Episode:" in diary and "Yui" in diary  # the episode quotes the day
        assert "Reflection needs a larger model." in diary  # and why there is no insight

        i18n.set_language("ja")
        win.retranslate()
        diary = win.diary.view.toPlainText()
        assert "の夢" in diary and "エピソード:" in diary and "まだ夢を見ていません" not in diary
    finally:
        i18n.set_language("en")
        if win is not None:
            win.done(0)
            win.worker.wait()
        app.close()
