"""Rooms in the window (issue 24): a room of Aria and ひかり made from the New room dialog, opened in place of
the persona's conversation; both answer in list order, each streamed into its own bubble; the next speaker
chosen by hand; auto mode stopped by typing; the room renamed and deleted. Scripted model answering per
persona (its own words), and the issue's bar on the bundled model: ten turns of three (slow)."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QInputDialog, QMessageBox

from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.rooms.conversation import Speaking, Streamed, room_key
from tests.integration.test_room_cli import LINES  # the terminal's ten turns, here in the window
from tests.ui.ui_thread import files_opened_on_the_ui_thread
from ui.main.main_window import MainWindow
from ui.rooms.room_dialog import RoomDialog
from ui.rooms.room_panel import RoomPanel
from ui.rooms.room_settings import RoomSettingsDialog
from ui.rooms.room_view import RoomView
from ui.util import i18n

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")

ARIA_SAYS = (
    "I think a walk to the lighthouse on Sunday sounds lovely, and I will bring a flask of tea for us."
)
HIKARI_SAYS = "灯台 いいですね 私は おにぎりを 持って いきます 晴れると いいな"


def _by_persona(messages: Sequence[ChatMessage]) -> str:
    """Each persona answers in its own words (the system prompt carries its soul)."""
    return HIKARI_SAYS if "ひかり" in messages[0].content else ARIA_SAYS


@pytest.fixture
def opened(qtbot, data_dir: Path):
    """The window on a scripted model that streams a word every 15 ms (several coalesced pieces a reply)."""
    backend = ScriptedBackend(_by_persona, delay_s=0.015)
    core = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.ready, timeout=60_000)
    yield core, window
    window.close()
    core.close()


def _answer_modal(action: Callable) -> None:
    """Act on the modal dialog about to open (exec() runs its own loop), then let it close."""

    def act() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            QTimer.singleShot(10, act)
            return
        action(dialog)

    QTimer.singleShot(0, act)


def _create(qtbot, window: MainWindow, members: list[str], strategy: str, name: str = "") -> RoomPanel:
    def fill(dialog: RoomDialog) -> None:
        assert isinstance(dialog, RoomDialog)
        for slug in members:
            dialog.set_member(slug, True)
        dialog.strategy_box.setCurrentIndex(dialog.strategy_box.findData(strategy))
        dialog.name_field.setText(name)
        dialog.accept()

    _answer_modal(fill)
    qtbot.mouseClick(window.rooms.new_room_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.rooms.room_panel is not None and window.rooms.room_panel.settings is not None
    )
    return window.rooms.room_panel


def _send(qtbot, panel: RoomPanel, text: str) -> None:
    panel.input.setPlainText(text)
    qtbot.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)


def _idle(qtbot, panel: RoomPanel, timeout: int = 30_000) -> None:
    qtbot.waitUntil(lambda: panel.worker.idle and panel.view.answering is None, timeout=timeout)


def _room_after(qtbot, window: MainWindow, text: str) -> RoomPanel:
    """A room of Aria and ひかり in list order, once both have answered the person's text."""
    panel = _create(qtbot, window, ["aria", "hikari"], "list")
    _send(qtbot, panel, text)
    _idle(qtbot, panel)
    return panel


class _Heard:
    """What the room's lane reported to the panel, in order."""

    def __init__(self, panel: RoomPanel) -> None:
        self.events: list = []
        panel.worker.room_event.connect(self.events.append)

    def speakers(self) -> list[str]:
        return [e.slug for e in self.events if isinstance(e, Speaking)]

    def pieces(self, slug: str) -> list[str]:
        return [e.text for e in self.events if isinstance(e, Streamed) and e.slug == slug]


def test_a_room_made_in_the_dialog_answers_in_list_order_each_reply_streamed(qtbot, opened) -> None:
    core, window = opened
    panel = _create(qtbot, window, ["aria", "hikari"], "list")
    assert window.rooms.pages.currentWidget() is panel, "the room is shown in place of the conversation"
    assert [window.rooms.room_list.item(n).text() for n in range(window.rooms.room_list.count())] == [
        "Aria & ひかり"
    ]
    assert panel.next_box.count() == 2 and "Aria & ひかり" in window.windowTitle()
    heard = _Heard(panel)

    _send(qtbot, panel, "Shall we go to the lighthouse this weekend?")
    qtbot.waitUntil(lambda: panel.view.answering == "aria")
    assert panel.status.text() == "Aria is writing…"
    _idle(qtbot, panel)

    assert heard.speakers() == ["aria", "hikari"]
    for slug, said in (("aria", ARIA_SAYS), ("hikari", HIKARI_SAYS)):
        pieces = heard.pieces(slug)
        assert len(pieces) >= 2, f"{slug}'s reply must arrive in several coalesced pieces"
        assert len(pieces) < len(said.split()), "words are coalesced, not one report each"
        assert "".join(pieces).strip() == said
    assert panel.view.texts() == [
        ("", "Shall we go to the lighthouse this weekend?"),
        ("Aria", ARIA_SAYS),
        ("ひかり", HIKARI_SAYS),
    ]
    assert panel.status.text() == "Ready"
    # The room's journal holds the same lines, and each member heard the others once.
    room = core.rooms.open(panel.slug)
    try:
        assert [(line.name, line.text) for line in room.lines()] == panel.view.texts()
    finally:
        room.close()
    heard_by_hikari = core.personas.change_memory(
        "hikari", "read", lambda store: [m.content for m in store.messages.recent(room_key(panel.slug), 10)]
    )
    assert heard_by_hikari.count(ARIA_SAYS) == 1


def test_manual_order_waits_for_the_person_to_pick_the_next_speaker(qtbot, opened) -> None:
    _core, window = opened
    panel = _create(qtbot, window, ["aria", "hikari"], "manual", name="Tea time")
    assert not panel.auto_button.isEnabled(), "auto mode has nobody to ask in manual order"
    heard = _Heard(panel)
    _send(qtbot, panel, "Good evening, everyone.")
    qtbot.waitUntil(lambda: len(panel.view.texts()) == 1 and panel.worker.idle)
    assert heard.speakers() == [], "nobody was named: nobody answers until picked"

    panel.next_box.setCurrentIndex(panel.next_box.findData("hikari"))
    qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
    _idle(qtbot, panel)
    assert heard.speakers() == ["hikari"]
    assert panel.view.texts()[-1] == ("ひかり", HIKARI_SAYS)


def test_sending_while_a_member_answers_stops_that_answer_and_sends(qtbot, opened) -> None:
    _core, window = opened
    panel = _create(qtbot, window, ["aria", "hikari"], "list")
    _send(qtbot, panel, "Tell me about the sea.")
    qtbot.waitUntil(lambda: panel.view.answering == "aria" and panel.view.shown[-1].text != "")
    _send(qtbot, panel, "Actually, ひかりさん first please.")
    _idle(qtbot, panel)
    shown = panel.view.shown
    assert [(line.name, line.status) for line in shown[:3]] == [
        ("", "complete"),
        ("Aria", "stopped"),
        ("", "complete"),
    ]
    assert ARIA_SAYS.startswith(shown[1].text.strip()) and shown[1].text.strip() != ARIA_SAYS
    assert [line.name for line in shown[3:]] == ["ひかり", "Aria"], "the one named answers first"


def test_auto_mode_lets_them_talk_on_and_typing_stops_it(qtbot, opened) -> None:
    _core, window = opened
    panel = _create(qtbot, window, ["aria", "hikari"], "list")
    panel.worker.update({"pause_s": 0.1, "cap": 6})
    qtbot.waitUntil(lambda: panel.settings.pause_s == 0.1)
    heard = _Heard(panel)
    _send(qtbot, panel, "Hello, you two.")
    _idle(qtbot, panel)
    assert heard.speakers() == ["aria", "hikari"]

    qtbot.mouseClick(panel.auto_button, Qt.MouseButton.LeftButton)
    assert panel.auto.on
    qtbot.waitUntil(
        lambda: len(heard.speakers()) == 4, timeout=20_000
    )  # aria, then hikari again, on their own
    assert heard.speakers()[2:] == ["aria", "hikari"]
    panel.input.setFocus()
    qtbot.keyClicks(panel.input, "w")  # the person takes the floor
    assert not panel.auto.on and not panel.auto_button.isChecked()
    assert panel.status.text() == "Auto mode stopped: you have the floor."
    spoken = len(heard.speakers())
    _idle(qtbot, panel)
    assert panel.view.shown[-1].status == "complete", "the answer being written may finish"
    qtbot.wait(600)  # six pauses: no new step starts
    assert len(heard.speakers()) == spoken and panel.worker.idle


def test_rename_and_delete_from_the_rooms_menu_members_keep_their_memories(
    qtbot, opened, monkeypatch
) -> None:
    core, window = opened
    panel = _room_after(qtbot, window, "A short hello.")
    slug, conversation = panel.slug, panel.worker._room.room

    monkeypatch.setattr(QInputDialog, "getText", lambda *args, **kwargs: ("Lighthouse club", True))
    panel.room_menu.rename_action.trigger()
    qtbot.waitUntil(
        lambda: (
            window.rooms.room_list.count() == 1 and window.rooms.room_list.item(0).text() == "Lighthouse club"
        )
    )
    assert core.rooms.load(slug).name == "Lighthouse club" and "Lighthouse club" in window.windowTitle()
    assert panel.title.text() == "Lighthouse club" and panel.view.texts()[0] == ("", "A short hello.")
    assert panel.worker._room.room is conversation, "renamed while open, not closed and opened again"

    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Yes)
    panel.room_menu.delete_action.trigger()
    qtbot.waitUntil(lambda: window.rooms.room_panel is None and window.rooms.room_list.count() == 0)
    assert not core.rooms.folder(slug).exists()
    assert window.rooms.pages.currentIndex() == 0, "the persona's conversation is back"
    kept = core.personas.change_memory(
        "aria", "read", lambda store: [m.content for m in store.messages.recent(room_key(slug), 10)]
    )
    assert "A short hello." in kept and HIKARI_SAYS in kept


def test_room_settings_mute_talkativeness_and_cap_are_saved_and_the_open_room_follows_them(
    qtbot, opened, data_dir: Path
) -> None:
    """Room > Room settings…: ひかり muted, Aria more talkative, one reply a message. room.toml holds them,
    the next turn leaves ひかり out even when she is named, and the room was never closed: its lines stay,
    and the UI thread opened no file of the data folder (the save runs on the room's lane)."""
    core, window = opened
    panel = _room_after(qtbot, window, "Hello, you two.")
    conversation, before = panel.worker._room.room, panel.view.texts()
    heard = _Heard(panel)

    def fill(dialog: RoomSettingsDialog) -> None:
        assert isinstance(dialog, RoomSettingsDialog) and dialog is panel.room_menu.settings_dialog
        assert dialog.windowTitle() == "Room settings: Aria & ひかり"
        assert dialog.strategy_box.currentText() == "In turn: everyone, in the list's order"
        qtbot.mouseClick(dialog.row("hikari").muted, Qt.MouseButton.LeftButton)
        assert not dialog.row("hikari").slider.isEnabled()
        for _ in range(3):
            qtbot.keyClick(dialog.row("aria").slider, Qt.Key.Key_PageUp)  # 50% -> 80%
        assert dialog.row("aria").value.text() == "80%"
        qtbot.keyClick(dialog.cap_box, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(dialog.cap_box, "1")
        qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)

    with files_opened_on_the_ui_thread(data_dir) as on_ui_thread:
        _answer_modal(fill)
        panel.room_menu.settings_action.trigger()
        qtbot.waitUntil(lambda: panel.settings.cap == 1 and panel.worker.idle)
        assert panel.status.text() == "The room's settings are saved."
        assert "ひかり (muted)</span>" in panel.members_label.text()
        _send(qtbot, panel, "ひかりさん、灯台はどう? And you, Aria?")
        _idle(qtbot, panel)
    assert on_ui_thread == [], f"opened on the UI thread: {on_ui_thread}"

    saved = tomllib.loads((core.rooms.folder(panel.slug) / "room.toml").read_text(encoding="utf-8"))
    assert saved["cap"] == 1 and saved["strategy"] == "list" and saved["pause_s"] == 2.0
    assert [(m["persona"], m["talkativeness"], m["muted"]) for m in saved["members"]] == [
        ("aria", 0.8, False),
        ("hikari", 0.5, True),
    ]
    assert heard.speakers() == ["aria"], "named, but muted: only Aria answers"
    assert panel.view.texts() == [
        *before,
        ("", "ひかりさん、灯台はどう? And you, Aria?"),
        ("Aria", ARIA_SAYS),
    ]
    assert panel.worker._room.room is conversation, "the room went on: never closed and opened again"


def test_clicking_a_persona_brings_its_conversation_back_and_the_room_reopens_with_its_lines(
    qtbot, opened
) -> None:
    _core, window = opened
    panel = _room_after(qtbot, window, "Hi!")
    slug, lines = panel.slug, panel.view.texts()
    window.persona_list.chosen.emit("aria")  # a click on the persona open underneath
    assert window.rooms.room_panel is None and window.rooms.pages.currentIndex() == 0
    window.rooms.room_list.chosen.emit(slug)
    qtbot.waitUntil(
        lambda: window.rooms.room_panel is not None and window.rooms.room_panel.settings is not None
    )
    assert window.rooms.room_panel.view.texts() == lines


def test_while_a_room_is_shown_the_persona_actions_are_off_and_come_back_with_a_persona(
    qtbot, opened
) -> None:
    """The persona open underneath a room is not what the person sees: Edit persona…, Memory…, Find in
    conversation… and the rest would act on it, so they are off (saying why) until a persona is chosen."""
    _core, window = opened
    persona_actions = window.menus.persona_actions()
    assert all(action.isEnabled() for action in persona_actions)
    _create(qtbot, window, ["aria", "hikari"], "list")
    off = [action for action in persona_actions if not action.isEnabled()]
    assert off == persona_actions
    assert (
        window.menus.edit_persona_action.statusTip() == "Choose a persona on the left first: a room is shown."
    )
    assert not window.edit_persona_button.isEnabled() and not window.memory_button.isEnabled()
    assert not window.model_button.isEnabled()
    window.menus.find_action.trigger()  # Ctrl+F: the hidden conversation's search stays shut
    assert not window.search_bar.isVisible()
    window.persona_list.chosen.emit("hikari")
    assert window.rooms.room_panel is None
    assert all(action.isEnabled() for action in persona_actions)
    assert window.edit_persona_button.isEnabled() and window.model_button.isEnabled()
    assert window.menus.edit_persona_action.statusTip() == ""


def _view(qtbot) -> RoomView:
    view = RoomView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    face = QImage(8, 8, QImage.Format.Format_ARGB32)
    view.set_members([("aria", face), ("hikari", face)], face)
    return view


def _blocks(view: RoomView) -> list[tuple[str, bool]]:
    """Each paragraph of the document with whether it is a list's item."""
    found, block = [], view.document().begin()
    while block.isValid():
        found.append((block.text(), block.textList() is not None))
        block = block.next()
    return found


def test_a_long_history_is_drawn_a_few_lines_a_turn_newest_first_and_in_order(qtbot) -> None:
    view = _view(qtbot)
    lines = [
        HeardLine(key=str(n), author=(None, "aria", "hikari")[n % 3], name=("", "Aria", "ひかり")[n % 3],
                  text=f"line {n}: the sea was calm that morning", created_at="")
        for n in range(200)
    ]  # fmt: skip
    view.show_lines(lines)
    drawn = len(view.document().rootFrame().childFrames())
    assert view.drawing and 0 < drawn < 200, "not all at once: the window would stall"
    assert "line 199: the sea" in view.toPlainText(), "the newest first"
    qtbot.waitUntil(lambda: not view.drawing)
    text = view.toPlainText()
    positions = [text.index(f"line {n}: ") for n in range(200)]
    assert positions == sorted(positions) and view.at_end()


def test_an_answer_streamed_through_a_list_keeps_its_first_paragraph_plain(qtbot) -> None:
    view = _view(qtbot)
    said = "Rice balls, tea in a flask, and a blanket:\n\n- umeboshi for me\n- salmon for you two"
    view.begin_answer("hikari", "ひかり")
    for at in range(0, len(said), 3):
        view.append_answer(said[at : at + 3])
    expected = [
        ("Rice balls, tea in a flask, and a blanket:", False),
        ("umeboshi for me", True),
        ("salmon for you two", True),
    ]
    assert [b for b in _blocks(view) if b[0] in dict(expected)] == expected
    view.end_answer(said, "complete")
    assert [b for b in _blocks(view) if b[0] in dict(expected)] == expected


@pytest.mark.slow
@pytest.mark.integration
def test_ten_turns_of_three_on_the_bundled_model_through_the_window(qtbot, data_dir: Path) -> None:
    """The issue's bar: the person, Aria and ひかり for ten turns on the bundled model, replies streamed."""
    core = NexusApp(data_dir).open()
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: window.ready, timeout=120_000)
        panel = _create(qtbot, window, ["aria", "hikari"], "list")
        heard = _Heard(panel)
        for line in LINES:
            _send(qtbot, panel, line)
            _idle(qtbot, panel, timeout=300_000)
        shown = panel.view.texts()
        assert [text for who, text in shown if who == ""] == LINES
        replies = [(who, text) for who, text in shown if who]
        assert len(replies) >= 10 and {who for who, _ in replies} == {"Aria", "ひかり"}
        assert all(text.strip() for _, text in replies)
        assert len(heard.speakers()) == 20  # both answer every line, in list order
        streamed = sum(len(heard.pieces(slug)) for slug in ("aria", "hikari"))
        assert streamed > len(replies), "replies arrive streamed, in pieces"
        room = core.rooms.open(panel.slug)
        try:
            journal = [(line.name, line.text) for line in room.lines(limit=1000)]
        finally:
            room.close()
        assert journal == shown
    finally:
        window.close()
        core.close()


def test_a_member_whose_model_does_not_speak_its_language_is_named_in_the_room_as_in_a_chat(
    qtbot, opened
) -> None:
    """ひかり on the English-only bundled model: the room says so above its lines, in the chat's words, and
    the model's name sits in the sentence's brackets without brackets of its own (issue 32). The room keeps a
    margin on its right, off the window's edge."""
    _core, window = opened
    panel = _create(qtbot, window, ["aria", "hikari"], "list")
    qtbot.waitUntil(lambda: panel.language_notice.isVisible())
    text = panel.language_notice.text()
    assert text == (
        "ひかり speaks Japanese, but its model (SmolLM2-135M-Instruct Q4_1) does not: its replies may be "
        "broken."
    )
    assert "Aria" not in text, "Aria's model speaks her language"
    i18n.set_language("ja")
    try:
        window.retranslate()
        assert "ひかりは日本語を話しますが" in panel.language_notice.text()
        assert "((" not in panel.language_notice.text() and "))" not in panel.language_notice.text()
    finally:
        i18n.set_language("en")
        window.retranslate()
    edge = panel.mapTo(window, panel.rect().topRight()).x()
    view_edge = panel.view.mapTo(window, panel.view.rect().topRight()).x()
    assert edge - view_edge >= 6, "the view keeps a right margin"


def test_a_members_reply_that_repeats_anothers_is_not_shown_and_the_status_says_so(
    qtbot, data_dir: Path
) -> None:
    said = "I think a walk to the lighthouse on Sunday sounds lovely, and I will bring a flask of tea."
    backend = ScriptedBackend(lambda messages: said, delay_s=0.005)  # both say it: ひかり repeats Aria
    core = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    i18n.set_language("en")
    window = MainWindow(core)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: window.ready, timeout=60_000)
        panel = _room_after(qtbot, window, "Shall we go to the lighthouse?")
        assert panel.view.texts() == [("", "Shall we go to the lighthouse?"), ("Aria", said)]
        assert panel.status.text() == "ひかり only repeated Aria: left out."
    finally:
        window.close()
        core.close()
