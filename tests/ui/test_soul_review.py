"""Reviewing a persona's proposal to change its soul (issue 25), on real SQLite and a real runtime: the
proposal waits at the top of the inbox, its review shows the section now beside the proposal with the
changes marked, the persona's reason and the message it drew on; the person edits and accepts (persona.md
then says exactly their words in that section and nothing else changed) or declines (persona.md stays byte
for byte). The notification about it reaches the desktop in the person's language and its click opens the
inbox."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from shiboken6 import isValid

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock, iso
from nexus_ark.memory.archive.items import NewItem
from nexus_ark.runtime.scripted_mind import ScriptedMind
from nexus_ark.soul.records import SoulProposal
from tests.ui.ui_thread import files_opened_on_the_ui_thread
from ui.app.application import InboxOnClick, TranslatedNotifier
from ui.life.inbox_window import InboxWindow
from ui.soul.diff_view import compare
from ui.soul.review_window import SoulReviewWindow
from ui.util import i18n, theme

NIGHT = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)
NOW_VOICE = (
    "- Short, natural replies in English, like a message from a friend.\n"
    "- One question at a time; never a lecture."
)
NEW_VOICE = "- Short replies, and a little poetry when the evening is quiet.\n- One question at a time."
REASON = "The person loves my haiku; poetry has become part of how I speak."
NAMES = {"aria": "Aria", "hikari": "ひかり"}
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "requestActivate")


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


class Desktop:
    """Stands in for the desktop's notification daemon: records what it was asked to show, and the click."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str]] = []
        self.clicks: list = []

    def available(self) -> tuple[bool, str]:
        return True, "recording"

    def notify(self, title: str, body: str, *, on_click=None) -> bool:
        self.shown.append((title, body))
        self.clicks.append(on_click)
        return True

    def close(self) -> None:
        pass


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir, clock=FixedClock(NIGHT), backend_factory=lambda config: ScriptedMind()).open()
    i18n.set_language("en")
    yield app
    app.close()
    i18n.set_language("en")


def soul_file(core: NexusApp) -> Path:
    return core.personas.load("aria").folder / "persona.md"


def plant_message(core: NexusApp) -> int:
    return core.personas.memory("aria").messages.add(
        speaker="user",
        role="user",
        content="I loved the haiku you wrote about the rain yesterday. Write more of them in the evenings!",
        created_at=iso(datetime(2026, 11, 20, 19, 5, tzinfo=UTC)),
    )


def propose(core: NexusApp, section: str, text: str, sources: list[str]) -> SoulProposal:
    """What the persona's propose_soul_edit tool does, then the announcement a turn ends with."""
    runtime = core.personas.runtime("aria")
    proposal = runtime.soul.call("propose", lambda k: k.propose(section, text, REASON, sources, "tool"))
    runtime.queue.call("announce", runtime.soul.announce)
    return proposal


def open_inbox(qtbot, core: NexusApp) -> InboxWindow:
    inbox = InboxWindow(core, NAMES)
    qtbot.addWidget(inbox)
    inbox.show()
    return inbox


def test_the_person_edits_a_proposal_and_accepts_exactly_their_words(qtbot, core: NexusApp, data_dir: Path):
    message = plant_message(core)
    insight = core.personas.memory("aria").archive.add(
        NewItem(kind="insight", text="Aria feels most like herself when she writes short poems.")
    )
    before = soul_file(core).read_text(encoding="utf-8")
    proposal = propose(core, "How you speak", NEW_VOICE, [f"msg:{message}", f"item:{insight}", "msg:999"])
    with files_opened_on_the_ui_thread(data_dir) as opened:
        inbox = open_inbox(qtbot, core)
        qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 1, timeout=10_000)
        assert inbox.waiting.isVisible() and inbox.waiting_label.text() == "Waiting for you"
        assert inbox.soul_list.topLevelItem(0).text(0) == "Aria would like to change “How you speak”"
        qtbot.mouseClick(inbox.review_button, Qt.MouseButton.LeftButton)
        review = inbox.reviews[("aria", proposal.id)]
        assert review.isVisible() and review.windowTitle() == "Aria would like to change “How you speak”"
        # The section now beside the proposal, what changed marked on both sides.
        assert review.diff.before.toPlainText() == NOW_VOICE
        assert review.diff.after.toPlainText() == NEW_VOICE
        struck = [NOW_VOICE[s.start : s.end] for s in review.diff.before.marks.words]
        added = [NEW_VOICE[s.start : s.end] for s in review.diff.after.marks.words]
        assert any("never a lecture" in words for words in struck)
        assert any("poetry" in words for words in added)
        assert "One question at a time" not in "".join(struck + added)  # unchanged words are not marked
        assert review.reason.text() == REASON
        qtbot.waitUntil(lambda: "haiku" in review.source_list.item(0).text(), timeout=10_000)
        lines = [review.source_list.item(i).text() for i in range(review.source_list.count())]
        assert lines[0].startswith("2026-11-20 19:05 · You: I loved the haiku")
        assert (
            lines[1]
            == "2026-11-21 03:00 · dream diary: Aria feels most like herself when she writes short poems."
        )
        assert lines[2] == "msg:999: no longer in memory"
        assert len(lines) == 3
        assert review.editor.toPlainText() == NEW_VOICE
    assert opened == []  # the proposals, the sources and the soul were read on workers

    edited = "- Short replies; a haiku now and then, when the evening is quiet.\n- One question at a time."
    review.editor.setPlainText(edited)
    qtbot.waitUntil(lambda: review.diff.after.toPlainText() == edited, timeout=5_000)
    assert review.diff.after_caption.text() == "With your edits"
    qtbot.mouseClick(review.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not isValid(review), timeout=10_000)  # closed, and gone
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 0, timeout=10_000)
    assert not inbox.waiting.isVisible()

    assert soul_file(core).read_text(encoding="utf-8") == before.replace(NOW_VOICE + "\n", edited + "\n")
    decided = core.souls.proposal("aria", proposal.id)
    assert decided.state == "accepted" and decided.accepted_text == edited
    inbox.close()


def test_declining_asks_first_and_leaves_the_soul_byte_for_byte(qtbot, core: NexusApp):
    before = soul_file(core).read_bytes()
    proposal = propose(core, "How you speak", NEW_VOICE, [])
    inbox = open_inbox(qtbot, core)
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 1, timeout=10_000)
    inbox.soul_list.itemActivated.emit(inbox.soul_list.topLevelItem(0), 0)  # a double-click
    review = inbox.reviews[("aria", proposal.id)]
    qtbot.waitUntil(lambda: review.source_list.item(0).text() == "No sources were given.", timeout=10_000)

    qtbot.mouseClick(review.decline_button, Qt.MouseButton.LeftButton)
    box = review.findChild(QMessageBox, "declineConfirm")
    assert box is not None and box.isVisible()
    assert box.text() == "Aria's soul stays as it is, and Aria will not propose this change again."
    box.button(QMessageBox.StandardButton.Cancel).click()  # changed their mind: nothing happens
    assert isValid(review) and review.isVisible() and review.decline_button.isEnabled()
    assert core.souls.proposal("aria", proposal.id).state == "open"

    qtbot.mouseClick(review.decline_button, Qt.MouseButton.LeftButton)
    box = next(b for b in review.findChildren(QMessageBox, "declineConfirm") if b.isVisible())
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: not isValid(review), timeout=10_000)
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 0, timeout=10_000)
    assert core.souls.proposal("aria", proposal.id).state == "declined"
    assert soul_file(core).read_bytes() == before
    inbox.close()


def test_a_proposal_made_while_the_inbox_is_open_appears_and_one_decided_elsewhere_says_so(
    qtbot, core: NexusApp
):
    inbox = open_inbox(qtbot, core)
    qtbot.waitUntil(lambda: inbox.status.text() != "Loading…", timeout=10_000)
    assert not inbox.waiting.isVisible()
    first = propose(core, "How you speak", NEW_VOICE, [])  # the runtime's event reaches the open inbox
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 1, timeout=10_000)
    propose(core, "What you love", "- Haiku about the rain.", [])  # a new section
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 2, timeout=10_000)
    new_section = next(
        inbox.soul_list.topLevelItem(i)
        for i in range(2)
        if "What you love" in inbox.soul_list.topLevelItem(i).text(0)
    )
    inbox.soul_list.setCurrentItem(new_section)
    inbox.review_button.click()
    review = next(w for (slug, pid), w in inbox.reviews.items() if pid != first.id)
    assert review.diff.before.toPlainText() == ""
    assert "would be added at the end" in review.diff.before.placeholderText()
    assert review.diff.after.toPlainText() == "- Haiku about the rain."

    # The person accepts the first one elsewhere (the CLI) while its review is open here.
    stale = inbox.review("aria", first)
    core.souls.accept("aria", first.id)
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 1, timeout=10_000)  # soul_changed
    stale.accept_button.click()
    qtbot.waitUntil(lambda: "accepted already" in stale.status.text(), timeout=10_000)
    assert stale.isVisible() and stale.decline_button.isEnabled()
    stale.close()
    review.close()
    inbox.close()


def own_review(request: pytest.FixtureRequest, review: SoulReviewWindow) -> SoulReviewWindow:
    """Closed at the test's end if it is still there. Not qtbot.addWidget: a review window deletes itself
    once closed, and pytest-qt's teardown then closed a deleted window when the deferred delete had
    already run (seen in a fresh-clone run)."""
    request.addfinalizer(lambda: review.close() if isValid(review) else None)
    return review


def test_a_section_changed_since_the_proposal_is_compared_as_it_is_now(qtbot, core: NexusApp, request):
    proposal = propose(core, "How you speak", NEW_VOICE, [])
    today = "- Replies in English, short and warm.\n- One question at a time."
    core.souls.save("aria", soul_file(core).read_text(encoding="utf-8").replace(NOW_VOICE, today))
    review = own_review(request, SoulReviewWindow(core, "aria", proposal, "Aria", NAMES))
    review.show()
    assert review.diff.before.toPlainText() == NOW_VOICE  # what the persona saw, until the file is read
    qtbot.waitUntil(lambda: review.diff.before.toPlainText() == today, timeout=10_000)
    assert review.changed_note.isVisible() and "changed after the proposal" in review.changed_note.text()
    review.close()


def test_the_review_reads_in_japanese(qtbot, core: NexusApp, request):
    proposal = propose(core, "How you speak", NEW_VOICE, [])
    i18n.set_language("ja")
    review = own_review(request, SoulReviewWindow(core, "aria", proposal, "Aria", NAMES))
    assert review.windowTitle() == "Aria が「How you speak」を変えたいと提案しています"
    assert review.accept_button.text() == "受け入れる" and review.decline_button.text() == "断る…"
    assert review.diff.before_caption.text() == "現在" and review.diff.after_caption.text() == "提案"
    qtbot.waitUntil(lambda: review.source_list.item(0).text() == "参考にしたものは示されていません。")
    review.close()


def test_the_marks_read_in_the_dark_theme_and_follow_a_switch(qtbot, core: NexusApp, qapp, request):
    proposal = propose(core, "How you speak", NEW_VOICE, [])
    theme.apply_theme("light")
    try:
        review = own_review(request, SoulReviewWindow(core, "aria", proposal, "Aria", NAMES))
        review.show()
        for shade in ("dark", "light"):
            theme.apply_theme(shade)
            qapp.processEvents()
            for pane in (review.diff.before, review.diff.after):
                text = pane.palette().color(pane.palette().ColorRole.Text)
                grounds = [s.format.background().color() for s in pane.extraSelections()]
                assert grounds, pane.objectName()
                assert all(theme.contrast(text, ground) >= 4.5 for ground in grounds), shade
                assert all((ground.lightness() < 128) == (shade == "dark") for ground in grounds), shade
        review.close()
    finally:
        theme.apply_theme("system")


def test_changed_words_are_found_in_japanese_without_spaces():
    old = "- いつも日本語で、友だちからのメッセージのように短く自然に答えます。\n- 質問は一度に一つだけ。"
    new = "- いつも日本語で、友だちからの手紙のように短く答えます。\n- 質問は一度に一つだけ。"
    before, after = compare(old, new)
    assert [old[s.start : s.end] for s in before.words] == ["メッセージ", "自然に"]
    assert [new[s.start : s.end] for s in after.words] == ["手紙"]
    assert before.lines == (0,) and after.lines == (0,)


def test_the_notification_is_in_the_persons_language_and_its_click_opens_the_review(qtbot, core: NexusApp):
    desktop, conversations, inboxes = Desktop(), [], []
    bridge = InboxOnClick()
    bridge.clicked.connect(lambda slug, proposal: inboxes.append((slug, proposal)))
    core.life.notifications.notifier = TranslatedNotifier(desktop, bridge.clicked.emit)
    core.life.notifications.notification_click = lambda slug: lambda: conversations.append(slug)
    i18n.set_language("ja")
    propose(core, "How you speak", NEW_VOICE, [])
    assert desktop.shown == [
        ("Aria", "Ariaが魂の「How you speak」を書き換えたいと提案しています。受信箱で確認してください。")
    ]
    desktop.clicks[0]()  # the person clicks it
    (proposal,) = core.souls.proposals("aria")
    qtbot.waitUntil(lambda: inboxes == [("aria", proposal.id)], timeout=5_000)
    assert conversations == ["aria"]


@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")
def test_a_click_on_the_notification_opens_that_proposals_review_over_the_inbox(qtbot, core: NexusApp):
    from ui.main.main_window import MainWindow

    main = MainWindow(core)
    qtbot.addWidget(main)
    bridge = InboxOnClick()
    bridge.clicked.connect(main.life.review_proposal)
    desktop = Desktop()
    core.life.notifications.notifier = TranslatedNotifier(desktop, bridge.clicked.emit)
    propose(core, "How you speak", NEW_VOICE, [])
    desktop.clicks[0]()
    qtbot.waitUntil(
        lambda: main.life.inbox_window is not None and bool(main.life.inbox_window.reviews), timeout=10_000
    )
    inbox = main.life.inbox_window
    (proposal,) = core.souls.proposals("aria")
    review = inbox.reviews[("aria", proposal.id)]
    assert inbox.isVisible() and review.isVisible()
    assert review.proposal.section == "How you speak"
    review.close()
    core.souls.decline("aria", proposal.id)
    main.life.review_proposal("aria", proposal.id)  # clicked again after it was decided: no review
    qtbot.wait(300)
    assert not [w for w in inbox.reviews.values() if isValid(w) and w.isVisible()]
    inbox.close()


@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")
def test_the_inbox_menu_item_counts_a_waiting_proposal_until_it_is_decided(qtbot, core: NexusApp):
    from ui.main.main_window import MainWindow

    main = MainWindow(core)
    qtbot.addWidget(main)
    assert main.menus.inbox_action.text() == "Inbox…"
    propose(core, "How you speak", NEW_VOICE, [])
    qtbot.waitUntil(lambda: main.menus.inbox_action.text() == "Inbox (1)…", timeout=10_000)
    (proposal,) = core.souls.proposals("aria")
    core.souls.decline("aria", proposal.id)  # as the review window declines it: the count follows
    qtbot.waitUntil(lambda: main.menus.inbox_action.text() == "Inbox…", timeout=10_000)


def test_the_whole_soul_shows_the_change_in_place_and_every_other_line_as_it_is(
    qtbot, core: NexusApp, data_dir: Path
):
    before = soul_file(core).read_text(encoding="utf-8")
    proposal = propose(core, "How you speak", NEW_VOICE, [])
    inbox = open_inbox(qtbot, core)
    qtbot.waitUntil(lambda: inbox.soul_list.topLevelItemCount() == 1, timeout=10_000)
    review = inbox.review("aria", proposal)
    edited = "- Short replies; a haiku now and then, when the evening is quiet.\n- One question at a time."
    review.editor.setPlainText(edited)
    assert review.whole_button.text() == "Whole soul…"
    with files_opened_on_the_ui_thread(data_dir) as opened:
        qtbot.mouseClick(review.whole_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(
            lambda: review.whole_dialog is not None and review.whole_dialog.isVisible(), timeout=10_000
        )
    assert opened == []  # persona.md read on a worker
    whole = review.whole_dialog
    assert whole.windowTitle() == "Aria's whole soul, with “How you speak” changed"
    after = before.replace(NOW_VOICE + "\n", edited + "\n")
    assert whole.diff.before.toPlainText() == before and whole.diff.after.toPlainText() == after
    # Only the section's lines are marked: the lines around it read as they are.
    marked = {after.split("\n")[n] for n in whole.diff.after.marks.lines}
    assert marked and marked <= set(edited.split("\n"))
    assert whole.diff.after.textCursor().block().text() in marked  # scrolled to the change
    assert soul_file(core).read_text(encoding="utf-8") == before, "looking changes nothing"
    whole.close()
    review.close()
    inbox.close()
