"""The activity window: the persona's timeline as the database holds it, filtered by kind, time and words,
fetched a page at a time, kept up to date after turns, and closed at once even while it reads."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.dreaming.dream import Dreamer
from nexus_ark.memory.activity import KINDS, ActivityEntry, ActivityLog
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.runtime.life import heartbeat
from ui.life.activity_model import KIND_LABELS, PAGE, kind_label
from ui.life.activity_window import ActivityWindow
from ui.util import i18n, theme

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def core(data_dir: Path, clock: FixedClock):
    app = NexusApp(data_dir, clock=clock).open()
    i18n.set_language("en")
    yield app
    app.close()


def _log(core: NexusApp) -> ActivityLog:
    """The timeline as the app writes it: the owner's connection, the app's clock."""
    return core.personas.memory("aria").activity


def _in_database(core: NexusApp, **filters) -> list[ActivityEntry]:
    """What the database holds, read apart from the window (its own connection, the CLI's query), newest
    first as the window lists it."""
    reader = core.personas.open_memory("aria", read_only=True)
    try:
        return list(reversed(reader.activity.query(**filters)))
    finally:
        reader.close()


def _rows(window: ActivityWindow) -> list[tuple[str, str, str]]:
    """What the person sees in the table, cell by cell."""
    model = window.table.model()
    return [
        tuple(model.index(row, col).data() for col in range(3))  # type: ignore[misc]
        for row in range(model.rowCount())
    ]


def _expected(entries: list[ActivityEntry]) -> list[tuple[str, str, str]]:
    labels = {"message": "Message", "emotion": "Emotion", "tool_call": "Tool call", "error": "Error"}
    labels |= {"memory_write": "Memory write", "import": "Import", "compression": "Compression"}
    return [
        (
            datetime.fromisoformat(e.time).astimezone().strftime("%Y-%m-%d %H:%M:%S"),
            labels.get(e.kind, e.kind),
            e.summary,
        )
        for e in entries
    ]


def _settled(qtbot, window: ActivityWindow) -> None:
    """Every query asked for has answered and been shown."""
    qtbot.waitUntil(lambda: window.worker.idle and window.status.text() != "Loading…", timeout=30_000)


def _open(qtbot, core: NexusApp) -> ActivityWindow:
    window = ActivityWindow(core, "aria")
    qtbot.addWidget(window)
    _settled(qtbot, window)
    return window


def _a_day(core: NexusApp, clock: FixedClock) -> None:
    memory = core.personas.memory("aria")
    log = memory.activity
    said = memory.messages.add(speaker="Mika", role="user", content="I got the job!")
    log.message(said, "Mika", "I got the job!", role="user")
    log.emotion("joy", 1.0, 0.91, message_id=said, snippet="I got the job!")
    clock.advance(60)
    log.tool_call(
        "search_memory", {"query": "job interview"}, "[item 3] interview on Monday", message_id=said
    )
    memory.components.set_notepad("Congratulate Mika again tomorrow.")
    clock.advance(3600)
    log.error("the model stopped answering", message_id=said, model="smollm2")
    log.append("future_kind", "a kind this version has no label for", data={"level": 1})
    clock.advance(60)


def test_the_window_shows_what_the_database_holds(qtbot, core: NexusApp, clock: FixedClock) -> None:
    _a_day(core, clock)
    window = _open(qtbot, core)
    held = _in_database(core)
    assert len(held) == 6
    assert _rows(window) == _expected(held)
    assert _rows(window)[0][1:] == ("future_kind", "a kind this version has no label for")
    assert window.status.text() == "Showing 6 of 6 entries."
    kinds = [window.kind_combo.itemText(i) for i in range(window.kind_combo.count())]
    assert kinds == ["All kinds", "Message", "Emotion", "Tool call", "Memory write", "Error", "future_kind"]

    tool_row = next(r for r, e in enumerate(held) if e.kind == "tool_call")
    window.table.selectRow(tool_row)
    details = window.details.toPlainText()
    assert "search_memory" in details and "job interview" in details
    assert f"\nMessage id\n{held[tool_row].message_id}\n" in details
    assert f"\nEntry id\n{held[tool_row].id}\n" in details
    error_row = next(r for r, e in enumerate(held) if e.kind == "error")
    window.table.selectRow(error_row)
    assert "\nmodel\nsmollm2\n" in window.details.toPlainText()


def test_every_kind_the_core_writes_has_a_label_in_each_language() -> None:
    """KINDS lists what the core writes (a core test reads the writers to keep it so): each has its label, in
    the order the kind filter lists them, and the label has its Japanese; an unknown kind shows as stored."""
    assert list(KIND_LABELS) == list(KINDS)
    english = {kind: kind_label(kind) for kind in KINDS}
    assert all(label and label != kind for kind, label in english.items())
    i18n.set_language("ja")
    try:
        japanese = {kind: kind_label(kind) for kind in KINDS}
        assert kind_label("future_kind") == "future_kind"
    finally:
        i18n.set_language("en")
    assert [k for k in KINDS if japanese[k] == english[k] or japanese[k].isascii()] == []
    assert japanese["dream"] == "夢"
    assert kind_label("future_kind") == "future_kind"


def test_the_timeline_reads_in_the_persons_language_and_follows_a_switch(
    qtbot, core: NexusApp, clock: FixedClock
) -> None:
    """The core writes its summaries in English (the CLI's and the database's words); a person using the
    app in Japanese reads a heartbeat, a dream and a memory write in Japanese, in the table and the
    details, and after switching to English reads the English the database holds."""
    core.life.set_paused(True)  # the heartbeat's reason, whatever the hour it runs
    runtime = core.personas.runtime("aria")
    runtime.queue.call(
        "heartbeat", lambda: heartbeat(runtime, threading.Event())
    )  # on its queue, as the scheduler runs it
    memory = core.personas.memory("aria")
    day = START - timedelta(hours=21)  # noon the day before: the same date in any time zone near UTC
    memory.messages.add(speaker="Mika", role="user", content="Yui turns twenty.", created_at=iso(day))
    # A model that cannot answer: the dream begins, skips its stages and says so.
    Dreamer(core.personas.load("aria"), memory, ScriptedBackend(["not json"]), clock).run(
        level=1, day=day.date()
    )
    memory.components.set_notepad("Ask Mika about Yui.")

    i18n.set_language("ja")
    try:
        window = _open(qtbot, core)
        summaries = [row[2] for row in _rows(window)]
        assert "見回り: することはありません（自律行動は一時停止中です）" in summaries
        assert f"{day.date().isoformat()} の夢（レベル 1）を見始めました" in summaries
        assert (
            "段階「記憶の整理」を飛ばしました: scripted はツールを使わないため、何もしまいませんでした"
            in summaries
        )
        assert "メモ帳: Ask Mika about Yui." in summaries  # our word translated, the persona's as written
        held = _in_database(core)
        row = next(r for r, e in enumerate(held) if e.kind == "heartbeat")
        window.table.selectRow(row)
        assert "\n見回り: することはありません（自律行動は一時停止中です）\n" in window.details.toPlainText()
        assert "summary_notice" not in window.details.toPlainText()

        i18n.set_language("en")
        window.retranslate()  # as MainWindow.show_language does for every open window
        assert [r[2] for r in _rows(window)] == [e.summary for e in held]
        assert "heartbeat: nothing to do (autonomy is paused)" in [e.summary for e in held]
        assert "\nheartbeat: nothing to do (autonomy is paused)\n" in window.details.toPlainText()
    finally:
        i18n.set_language("en")


def test_errors_stay_readable_in_the_dark_theme(qtbot, core: NexusApp, clock: FixedClock) -> None:
    """The error rows' red reads on the theme drawn (the light theme's deep red was lost on the dark one)."""
    _a_day(core, clock)
    window = _open(qtbot, core)
    row = next(r for r, e in enumerate(window.model.entries) if e.kind == "error")
    try:
        for look in ("light", "dark"):
            theme.apply_theme(look)
            red = window.model.index(row, 2).data(Qt.ItemDataRole.ForegroundRole).color()
            base = QApplication.palette().color(QPalette.ColorRole.Base)
            assert abs(red.lightness() - base.lightness()) > 90, look
    finally:
        theme.apply_appearance("system", 0)


def test_an_empty_timeline_says_so(qtbot, core: NexusApp) -> None:
    window = _open(qtbot, core)
    assert _rows(window) == [] and window.status.text() == "Nothing happened yet."
    assert not window.model.canFetchMore(QModelIndex())


def test_kind_since_and_text_filters_show_what_the_database_says(
    qtbot, core: NexusApp, clock: FixedClock
) -> None:
    log = _log(core)
    for day in range(40):  # forty days, an error every fifth
        log.append("message", f"Mika: good morning, day {day}")
        if day % 5 == 0:
            log.error(f"the model stopped on day {day}")
        clock.advance(86_400)
    clock.advance(-86_400 + 3_000)  # the last day's entries are 50 minutes old
    log.append("import", "notes.jsonl: 3 messages")
    clock.advance(600)
    now = clock.now()
    window = _open(qtbot, core)
    assert len(_rows(window)) == 49

    window.set_kind("error")
    _settled(qtbot, window)
    errors = _in_database(core, kinds=["error"])
    assert len(errors) == 8 and _rows(window) == _expected(errors)
    assert window.status.text() == "Showing 8 of 8 entries."

    window.set_since("week")
    _settled(qtbot, window)
    recent_errors = _in_database(core, kinds=["error"], since=now - timedelta(days=7))
    assert len(recent_errors) == 1 and _rows(window) == _expected(recent_errors)

    window.set_kind(None)
    _settled(qtbot, window)
    week = _in_database(core, since=now - timedelta(days=7))
    assert _rows(window) == _expected(week) and len(week) == 9

    window.set_since("hour")
    _settled(qtbot, window)
    hour = _in_database(core, since=now - timedelta(hours=1))
    assert [r[2] for r in _rows(window)] == ["notes.jsonl: 3 messages", "Mika: good morning, day 39"]
    assert _rows(window) == _expected(hour)

    window.set_since("today")
    _settled(qtbot, window)
    midnight = now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    assert _rows(window) == _expected(_in_database(core, since=midnight))

    window.set_since("all")
    window.text_filter.setText("DAY 3")
    qtbot.keyClick(window.text_filter, Qt.Key.Key_Return)
    _settled(qtbot, window)
    matching = [e for e in _in_database(core) if "day 3" in e.summary.lower()]  # any case
    assert len(matching) == 13 and _rows(window) == _expected(matching)  # days 3, 30-39 and two errors
    window.set_kind("import")
    _settled(qtbot, window)
    assert _rows(window) == [] and window.status.text() == "No entries match these filters."


def test_the_filter_finds_entries_by_the_words_the_person_reads(qtbot, core: NexusApp) -> None:
    """In Japanese, the summaries are read in Japanese though kept in English: words typed in the filter
    find the entries whose sentence says them (and the person's own words still match as written)."""
    core.life.set_paused(True)
    runtime = core.personas.runtime("aria")
    runtime.queue.call(
        "heartbeat", lambda: heartbeat(runtime, threading.Event())
    )  # on its queue, as the scheduler runs it
    memory = core.personas.memory("aria")
    memory.components.set_notepad("Ask Mika about 陶芸.")
    memory.activity.append("message", "Mika: a plain line with nothing of ours in it")
    i18n.set_language("ja")
    try:
        window = _open(qtbot, core)
        for typed, expected in (
            ("一時停止", ["見回り: することはありません（自律行動は一時停止中です）"]),
            ("メモ帳", ["メモ帳: Ask Mika about 陶芸."]),
            ("陶芸", ["メモ帳: Ask Mika about 陶芸."]),
            ("plain line", ["Mika: a plain line with nothing of ours in it"]),
        ):
            window.text_filter.setText(typed)
            qtbot.keyClick(window.text_filter, Qt.Key.Key_Return)
            _settled(qtbot, window)
            assert [r[2] for r in _rows(window)] == expected, typed
    finally:
        i18n.set_language("en")


@pytest.mark.qt_log_ignore("propagateSizeHints")  # offscreen platform, shown window
def test_pages_are_fetched_as_the_person_scrolls(qtbot, core: NexusApp, clock: FixedClock) -> None:
    log = _log(core)
    total = 3 * PAGE + 17
    with core.personas.memory("aria").db.conn:  # one transaction: six hundred entries in a blink
        for i in range(total):
            log.append("message", f"Mika: line {i}")
            clock.advance(1)
    window = _open(qtbot, core)
    model = window.model
    assert model.rowCount() == PAGE and model.canFetchMore(QModelIndex())
    assert window.status.text() == f"Showing {PAGE} of {total} entries."

    model.fetchMore(QModelIndex())
    _settled(qtbot, window)
    assert model.rowCount() == 2 * PAGE

    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    for pages in (3, 4):  # the view asks for the next page when its last row comes into sight
        window.table.scrollToBottom()
        qtbot.waitUntil(lambda pages=pages: model.rowCount() == min(total, pages * PAGE), timeout=30_000)
        _settled(qtbot, window)
    assert not model.canFetchMore(QModelIndex())
    assert window.status.text() == f"Showing {total} of {total} entries."
    assert [e.id for e in model.entries] == [e.id for e in _in_database(core)]  # none twice, none missed
    assert _rows(window) == _expected(_in_database(core))


class _MainWindowStandIn(QObject):
    turn_finished = Signal(object)  # as MainWindow's: emitted once a turn is shown


def test_a_finished_turn_adds_its_entries_on_top_and_keeps_the_selection(
    qtbot, core: NexusApp, clock: FixedClock
) -> None:
    _a_day(core, clock)
    window = _open(qtbot, core)
    main = _MainWindowStandIn()
    main.turn_finished.connect(window.load_newer)  # as MainWindow.show_activity connects it
    window.table.selectRow(2)
    chosen = window.selected_entry()

    memory = core.personas.memory("aria")
    said = memory.messages.add(speaker="Mika", role="user", content="Thanks!")
    _log(core).message(said, "Mika", "Thanks!", role="user")
    _log(core).message(said + 1, "Aria", "You're welcome.", role="assistant")
    main.turn_finished.emit(TurnResult(user_message_id=said, reply_id=said + 1, text="", status="complete"))
    qtbot.waitUntil(lambda: window.model.rowCount() == 8, timeout=30_000)
    _settled(qtbot, window)
    assert _rows(window) == _expected(_in_database(core))
    assert _rows(window)[0][2] == "Aria: You're welcome."
    assert window.selected_entry() == chosen  # the row the person was reading stayed chosen
    assert window.status.text() == "Showing 8 of 8 entries."

    with memory.db.conn:  # more than a page at once (an import): read again from the top
        for i in range(PAGE + 5):
            _log(core).append("import", f"conversations.json: message {i}")
    main.turn_finished.emit(None)
    qtbot.waitUntil(lambda: window.model.rowCount() == PAGE, timeout=30_000)
    _settled(qtbot, window)
    assert _rows(window) == _expected(_in_database(core))[:PAGE]
    assert window.status.text() == f"Showing {PAGE} of {PAGE + 13} entries."


@pytest.mark.qt_log_ignore("propagateSizeHints")  # offscreen platform, shown window
def test_closing_while_a_query_runs_returns_at_once(
    qtbot, core: NexusApp, clock: FixedClock, monkeypatch
) -> None:
    _a_day(core, clock)
    entered, release = threading.Event(), threading.Event()
    real_page = ActivityLog.page

    def slow_page(self, *args, **kwargs):
        entered.set()
        release.wait(20)  # a query on a slow disk: runs until the test lets it go
        return real_page(self, *args, **kwargs)

    monkeypatch.setattr(ActivityLog, "page", slow_page)
    window = ActivityWindow(core, "aria")
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # as the main window opens it
    window.show()
    assert entered.wait(20)
    started = time.monotonic()
    window.close()
    assert time.monotonic() - started < 5, "closing waited for the query"
    assert not release.is_set() and not window.worker.idle

    release.set()
    qtbot.waitUntil(lambda: window.worker.idle, timeout=30_000)  # the answer arrived and was dropped
    qtbot.waitUntil(lambda: not shiboken6.isValid(window), timeout=30_000)  # the window is gone
    window.worker.wait()
    assert window._reader.store is None  # the worker closed its own connection


@pytest.mark.integration  # the main window opens the persona on the bundled model
@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")
def test_view_menu_opens_the_timeline_of_the_persona_and_turns_update_it(
    qtbot, core: NexusApp, clock: FixedClock
) -> None:
    from ui.main.main_window import MainWindow

    _a_day(core, clock)
    main = MainWindow(core)
    qtbot.addWidget(main)
    qtbot.waitUntil(main.send_button.isEnabled, timeout=60_000)
    assert main.menus.activity_action in main.menus.view_menu.actions()
    assert main.menus.activity_action.text() == "Activity timeline…"
    main.menus.activity_action.trigger()
    (window,) = main.findChildren(ActivityWindow)
    assert window.slug == main.current_slug == "aria" and window.isVisible()
    _settled(qtbot, window)
    assert _rows(window) == _expected(_in_database(core))
    main.menus.activity_action.trigger()  # the open one comes to the front, no second window
    assert len(main.findChildren(ActivityWindow)) == 1

    said = core.personas.memory("aria").messages.add(speaker="Mika", role="user", content="One more thing.")
    _log(core).message(said, "Mika", "One more thing.", role="user")
    main.turn_finished.emit(TurnResult(user_message_id=said, reply_id=None, text="", status="complete"))
    qtbot.waitUntil(lambda: window.model.rowCount() == 7, timeout=30_000)
    assert _rows(window)[0][2] == "Mika: One more thing."
    window.close()
    qtbot.waitUntil(lambda: not main.findChildren(ActivityWindow), timeout=30_000)
    main.turn_finished.emit(None)  # the closed window is disconnected: nothing to crash on
    main.close()
