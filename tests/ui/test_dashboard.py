"""The introspection dashboard shows what the persona's memory holds, and the person's changes persist.

Data is written through the real memory components into a real persona in a temporary data folder, at a
fixed time; expected drive levels come from nexus_ark.mind.drives on inputs written out by hand here."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.components import EmotionEntry, Episode, Goal, Insight, OpenQuestion
from nexus_ark.mind import drives
from nexus_ark.mind.narrative import drive_line
from nexus_ark.providers.scripted import ScriptedBackend
from ui.life.dashboard import DashboardWindow
from ui.util import i18n

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def _ago(**delta: float) -> datetime:
    return NOW - timedelta(**delta)


@pytest.fixture
def core(data_dir: Path):
    # The dashboard itself uses no model; a dream started from it gets this one (which answers nonsense).
    app = NexusApp(
        data_dir, clock=FixedClock(NOW), backend_factory=lambda config: ScriptedBackend(["Zzz… not JSON."])
    ).open()
    i18n.set_language("en")
    toml = app.personas.load("aria").folder / "persona.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[drives]\ncuriosity = 0.45\n", encoding="utf-8")
    store = app.personas.memory("aria")
    c = store.components
    said = store.messages.add(
        speaker="Mika", role="user", content="Work was rough today.", created_at=iso(_ago(hours=5))
    )
    c.log_emotion(
        EmotionEntry(
            timestamp=iso(_ago(hours=5)),
            emotion="sadness",
            value=-0.6,
            snippet="Work was rough today.",
            message_id=said,
        )
    )
    c.log_emotion(
        EmotionEntry(
            timestamp=iso(_ago(hours=2)),
            emotion="joy",
            value=1.0,
            snippet="The cat is back!",
            message_id=said + 1,
        )
    )
    c.add_question(
        OpenQuestion(
            question="Why does Mika love rainy days?",
            topic="Mika",
            priority=0.8,
            source_ids=[f"msg:{said}"],
            created_at=iso(_ago(days=2)),
        )
    )
    c.add_question(
        OpenQuestion(
            question="What is Luna's favourite toy?", topic="Luna", priority=0.4, created_at=iso(_ago(days=9))
        )
    )
    goal = c.put_goal(
        Goal(term="short", goal="Learn Mika's favourite songs", priority=1, source_ids=["msg:3"])
    )
    c.put_goal(Goal(term="long", goal="Be someone Mika can rely on", priority=2))
    c.write_entity("Luna", "Mika's cat, afraid of the vacuum cleaner.", source_ids=["msg:12", "msg:15"])
    c.put_episode(
        Episode(
            date="2026-03-09",
            summary="Mika talked about a rough week at work.",
            emotional_tone="tired",
            key_events=["A deadline moved"],
            source_ids=["msg:12", "msg:15"],
        )
    )
    c.add_insight(
        Insight(
            trigger_topic="work",
            insight="Mika unwinds by talking about the cat.",
            strategy="Ask about Luna when work is heavy.",
            log_entry="A quiet dream about rain.",
            source_ids=["msg:15"],
        )
    )
    app.test_goal_id = goal.id  # type: ignore[attr-defined]
    yield app
    app.close()


def _expected(core: NexusApp) -> drives.DriveReport:
    """The four levels from the inputs written above, computed by the drive formulas themselves."""
    store = core.personas.open_memory("aria", read_only=True)
    try:
        questions = {q.question: q.id for q in store.components.open_questions()}
    finally:
        store.close()
    inputs = drives.DriveInputs(
        now=NOW,
        last_interaction=_ago(hours=5),
        questions=[
            drives.QuestionInput(
                id=questions["Why does Mika love rainy days?"],
                question="Why does Mika love rainy days?",
                priority=0.8,
                created_at=_ago(days=2),
            ),
            drives.QuestionInput(
                id=questions["What is Luna's favourite toy?"],
                question="What is Luna's favourite toy?",
                priority=0.4,
                created_at=_ago(days=9),
            ),
        ],
        top_goal=drives.GoalInput(
            id=core.test_goal_id, goal="Learn Mika's favourite songs", priority=1, last_progress=NOW
        ),
        emotions=[
            drives.EmotionInput(time=_ago(hours=5), label="sadness", value=-0.6),
            drives.EmotionInput(time=_ago(hours=2), label="joy", value=1.0),
        ],
    )
    thresholds = {"boredom": 0.6, "curiosity": 0.45, "goal_achievement": 0.6, "devotion": 0.6}
    return drives.compute(inputs, thresholds)


@pytest.fixture
def window(qtbot, core: NexusApp):
    win = DashboardWindow(core, "aria")
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: win.complete, timeout=30_000)
    yield win
    win.done(0)
    win.worker.wait()


def test_drives_show_the_levels_the_database_gives(window: DashboardWindow, core: NexusApp) -> None:
    expected = _expected(core)
    assert 0 < expected.drives["boredom"].level < 1 and expected.dominant is not None
    for name in drives.DRIVES:
        bar = window.drives.bars[name]
        assert bar.level == pytest.approx(expected.drives[name].level, abs=1e-4), name
        assert bar.threshold == expected.drives[name].threshold
        assert window.drives.lines[name].text() == drive_line(expected, name, "en")
    assert window.drives.bars["curiosity"].threshold == 0.45
    dominant = expected.dominant
    assert window.drives.names[dominant].text().startswith("★")
    assert window.drives.bars[dominant].emphasised
    assert sum(label.text().startswith("★") for label in window.drives.names.values()) == 1
    assert "Top question: Why does Mika love rainy days?" in window.drives.lines["curiosity"].text()


def test_open_questions_resolve_and_delete_persist(qtbot, window: DashboardWindow, core: NexusApp) -> None:
    table = window.questions.table
    assert table.rowCount() == 2
    assert [table.item(r, 0).text() for r in range(2)] == [
        "Why does Mika love rainy days?",
        "What is Luna's favourite toy?",
    ]
    assert [table.item(r, 4).text() for r in range(2)] == ["open", "open"]
    assert table.item(0, 1).text() == "Mika" and table.item(0, 2).text() == "0.8"
    assert table.item(0, 5).text().startswith("from messages ")

    table.selectRow(0)
    window.questions.resolve_selected()
    qtbot.waitUntil(lambda: table.item(1, 4).text() == "resolved by you", timeout=30_000)
    assert table.item(0, 0).text() == "What is Luna's favourite toy?"  # open ones stay on top

    table.selectRow(0)
    window.questions.delete_selected(ask=False)
    qtbot.waitUntil(lambda: table.rowCount() == 1, timeout=30_000)

    check = core.personas.open_memory("aria", read_only=True)
    try:
        questions = check.components.open_questions(include_resolved=True)
    finally:
        check.close()
    assert [(q.question, q.resolved_by) for q in questions] == [("Why does Mika love rainy days?", "user")]
    # Curiosity followed: no open question is left.
    assert window.drives.bars["curiosity"].level == 0.0


def test_a_new_emotion_appears_after_a_turn(qtbot, window: DashboardWindow, core: NexusApp) -> None:
    plot = window.emotions
    assert plot.point_count == 2
    assert "sadness" in plot.describe(0) and "Work was rough today." in plot.describe(0)
    core.personas.memory("aria").components.log_emotion(
        EmotionEntry(
            timestamp=iso(_ago(minutes=1)),
            emotion="anxious",
            value=-0.5,
            snippet="The exam is tomorrow.",
            message_id=42,
        )
    )
    # The session worker publishes turn_done on its own thread.
    publisher = threading.Thread(target=lambda: core.events.publish("turn_done", persona="aria"))
    publisher.start()
    publisher.join()
    qtbot.waitUntil(lambda: plot.point_count == 3, timeout=30_000)
    spot = plot.points.points()[2]
    assert spot.pos().y() == pytest.approx(-0.5)
    plot._hovered(plot.points, [spot], None)  # what pyqtgraph's hover reports
    assert "anxious" in plot.detail.text() and "The exam is tomorrow." in plot.detail.text()
    assert "message 42" in plot.detail.text()


def test_another_personas_events_are_not_ours(qtbot, window: DashboardWindow, core: NexusApp) -> None:
    seen: list[str] = []
    window.core_events.happened.connect(lambda topic, payload: seen.append(topic))
    core.events.publish("turn_done", persona="hikari")
    core.events.publish("mind_changed", persona="aria", what="goals")
    qtbot.waitUntil(lambda: seen == ["mind_changed"], timeout=10_000)


def test_goals_edit_note_complete_and_empty_text_refused(
    qtbot, window: DashboardWindow, core: NexusApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window's changes go through the persona's runtime, the one writer (issue 22): it opened a
    # writable connection of its own.
    open_memory = core.personas.open_memory

    def read_only(slug: str, *, read_only: bool = False):
        assert read_only, "the Inner life window opened a writable connection of its own"
        return open_memory(slug, read_only=read_only)

    monkeypatch.setattr(core.personas, "open_memory", read_only)
    panel = window.goals
    goal_id = core.test_goal_id
    assert panel.table.rowCount() == 2
    panel.select(goal_id)
    assert panel.text.toPlainText() == "Learn Mika's favourite songs"
    assert "from messages 3" in panel.sources.text()

    panel.text.setPlainText("   ")
    panel.save_button.click()
    qtbot.waitUntil(lambda: "needs a text" in panel.message.text(), timeout=30_000)
    assert panel.message.text() == "A goal needs a text: an empty goal was not saved."
    assert core.personas.memory("aria").components.goal(goal_id).goal == "Learn Mika's favourite songs"

    panel.text.setPlainText("Learn Mika's three favourite songs")
    panel.save_button.click()
    qtbot.waitUntil(lambda: panel.message.text() == "Saved.", timeout=30_000)
    panel.note.setText("Heard the first one together")
    panel.note_button.click()
    qtbot.waitUntil(lambda: panel.notes.count() == 1, timeout=30_000)
    panel.note.setText("All three learnt")
    panel.complete_button.click()
    qtbot.waitUntil(lambda: panel.message.text() == "Goal completed.", timeout=30_000)
    goal = core.personas.memory("aria").components.goal(goal_id)
    assert goal.goal == "Learn Mika's three favourite songs"
    assert goal.status == "completed"
    assert goal.progress_notes == ["Heard the first one together", "All three learnt"]
    qtbot.waitUntil(lambda: panel.table.item(1, 2).text() == "completed", timeout=30_000)

    panel.new_goal()
    panel.text.setPlainText("Plan a rainy-day playlist")
    panel.save_button.click()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 3, timeout=30_000)
    assert [g.goal for g in core.personas.memory("aria").components.goals("short")] == [
        "Plan a rainy-day playlist"
    ]


def test_memory_panels_show_what_dreams_wrote_and_entities_are_edited(
    qtbot, window: DashboardWindow, core: NexusApp
) -> None:
    episodes = window.episodes.view.toPlainText()
    assert "2026-03-09" in episodes and "rough week at work" in episodes and "A deadline moved" in episodes
    assert "tone: tired" in episodes and "from messages 12, 15" in episodes
    diary = window.diary.view.toPlainText()
    assert "Ask about Luna when work is heavy." in diary and "A quiet dream about rain." in diary
    assert "from messages 15" in diary

    panel = window.entities
    assert [panel.list.item(i).text() for i in range(panel.list.count())] == ["Luna"]
    panel.list.setCurrentRow(0)
    assert panel.text.toPlainText() == "Mika's cat, afraid of the vacuum cleaner."
    assert "from messages 12, 15" in panel.sources.text()
    panel.text.setPlainText("Mika's cat. Loves the rain sound.")
    panel.save()
    qtbot.waitUntil(lambda: panel.saved.text() == "Saved.", timeout=30_000)
    assert core.personas.memory("aria").components.entity("Luna").text == "Mika's cat. Loves the rain sound."


def test_language_switch_retranslates(window: DashboardWindow) -> None:
    i18n.set_language("ja")
    try:
        window.retranslate()
        assert window.windowTitle() == "Aria の内面"
        assert [window.tabs.tabText(i) for i in range(2)] == ["動機", "未解決の問い"]
        names = {n: window.drives.names[n].text().removeprefix("★ ") for n in drives.DRIVES}
        assert names == {
            "boredom": "退屈",
            "curiosity": "好奇心",
            "goal_achievement": "目標達成欲",
            "devotion": "奉仕欲",
        }
        assert window.drives.lines["boredom"].text() == "最後の会話から5時間"
        assert window.questions.table.item(0, 4).text() == "未解決"
        assert "悲しみ" in window.emotions.describe(0)
    finally:
        i18n.set_language("en")
    window.retranslate()
    assert window.tabs.tabText(0) == "Drives"
    assert window.drives.lines["boredom"].text() == "5 hours since we last talked"


def test_closing_never_waits_and_the_worker_closes_its_connections(qtbot, core: NexusApp) -> None:
    win = DashboardWindow(core, "aria")
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: win.complete, timeout=30_000)
    reader = win._memory.store  # opened on the lane by the first read, and kept
    assert reader is not None
    win.refresh()  # a read still queued when the window closes
    win.done(0)
    win.worker.wait()
    assert win._memory.store is None
    with pytest.raises(Exception, match="closed"):
        reader.db.execute("select 1")
    core.events.publish("turn_done", persona="aria")  # nobody listens any more: nothing breaks


def test_an_empty_mind_says_so(qtbot, core: NexusApp) -> None:
    win = DashboardWindow(core, "hikari")  # a persona nothing has happened to yet
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: win.complete, timeout=30_000)
    try:
        assert win.drives.narrative.text().endswith("My mind is quiet.")
        assert all(bar.level == 0.0 for bar in win.drives.bars.values())
        assert win.questions.table.rowCount() == 0 and win.goals.table.rowCount() == 0
        assert win.emotions.point_count == 0 and "No emotions recorded yet" in win.emotions.detail.text()
        assert "No history yet" in win.drive_history.empty.text()
        assert "No episodes yet" in win.episodes.view.toPlainText()
        assert "No dreams yet" in win.diary.view.toPlainText()
    finally:
        win.done(0)
        win.worker.wait()


def test_dream_now_shows_each_stage_and_how_it_went(qtbot, window: DashboardWindow, core: NexusApp) -> None:
    """A real dream (app.personas.dream) on a model that answers nonsense: every stage runs and is refused."""
    statuses: list[tuple[str, str]] = []
    window.core_events.happened.connect(lambda topic, payload: statuses.append((topic, window.status.text())))
    window.dream_button.click()
    assert not window.dream_button.isEnabled() and window.stop_dream_button.isVisibleTo(window)
    qtbot.waitUntil(lambda: window.dream_button.isEnabled(), timeout=60_000)
    progress = [text for topic, text in statuses if topic == "dream_progress"]
    assert progress[0].startswith("Dreaming: insight (1 of ")
    assert len(progress) == int(progress[0].split(" of ")[1].split(")")[0])
    assert ("dream_finished", "Up to date; it follows each conversation turn and dream.") in statuses
    assert window.status.text() == "No dream: no stage produced anything valid"
    assert not window.stop_dream_button.isVisibleTo(window)


def test_a_model_too_small_to_reflect_says_so_in_the_diary(qtbot, data_dir: Path) -> None:
    """Issue 21: a real dream on a model that reports 135M parameters writes no insight, and the Inner
    life window says why (in the person's language) instead of an empty diary."""
    app = NexusApp(
        data_dir,
        clock=FixedClock(NOW),
        backend_factory=lambda config: ScriptedBackend(["unused"], parameters=135_000_000),
    ).open()
    i18n.set_language("en")
    try:
        app.personas.memory("aria").messages.add(
            speaker="Mika", role="user", content="My sister Yui made pasta.", created_at=iso(_ago(hours=3))
        )
        result = app.personas.dream("aria")
        assert result.reflection == "reflection needs a larger model"
        win = DashboardWindow(app, "aria")
        qtbot.addWidget(win)
        qtbot.waitUntil(lambda: win.complete, timeout=30_000)
        try:
            diary = win.diary.view.toPlainText()
            assert (
                "Reflection needs a larger model." in diary
                and "scripted keeps to the day's own words" in diary
            )
            # ... with the way out: the Get a model list, one click away.
            button = win.diary.get_model_button
            assert button.isVisibleTo(win.diary) and button.text() == "Get a model…"
            from tests.ui.dialogs import close_next_dialog
            from ui.models.get_model_dialog import GetModelDialog

            opened: list[str] = []
            close_next_dialog(GetModelDialog, opened)
            button.click()  # returns when the list is closed
            assert opened == ["Get a model"]
            i18n.set_language("ja")
            win.retranslate()
            assert "振り返りにはもっと大きなモデルが必要です。" in win.diary.view.toPlainText()
            assert win.diary.get_model_button.text() == "モデルを入手…"
        finally:
            i18n.set_language("en")
            win.done(0)
            win.worker.wait()
    finally:
        app.close()
