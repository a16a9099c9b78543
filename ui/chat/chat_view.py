"""The conversation: one framed bubble per message, Markdown rendered (while it streams too), a page of
history at a time.

The view holds a window of the conversation (at most MAX_BUBBLES): scrolling to its top asks for the page
before (need_older), to its bottom for the page after when it shows an older stretch (need_newer); the far
end is dropped so years of history never sit in one document. Links under each bubble (copy, regenerate,
edit, delete, ‹ n/m ›) emit `action`; copy is handled here. A streaming reply re-renders only its own frame.
"""

from __future__ import annotations

import html
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QImage,
    QPalette,
    QPixmap,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFrame,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QApplication, QTextBrowser, QTextEdit, QToolButton

from nexus_ark.memory.conversation_pages import ShownMessage
from ui.util.avatars import avatar_image, placeholder_image
from ui.util.chat_markdown import to_document
from ui.util.i18n import N_, tr
from ui.util.tasks import run_in_background, while_open

MAX_BUBBLES = 240  # four pages: the far end is dropped as the person scrolls on
TRIM_AT_ONCE = 15  # bubbles dropped in one main-loop turn (60 at once held the loop 20-25 ms)
DRAW_BUDGET_S = 0.004  # drawing a page takes this much of a main-loop turn, then lets it run
RETIRE_AT_ONCE = 40  # bubbles of a replaced document taken apart in one main-loop turn (2-3 ms)
EDGE_PX = 48  # this close to the top or bottom, the next page is asked for
AVATAR_PX = 26
_STATUS_NOTES = {
    "stopped": N_("stopped"),
    "interrupted": N_("interrupted: the app closed while this reply was being written"),
    "error": N_("the model failed"),
    "cut": N_("cut at the token limit: Continue goes on"),
}
_LIGHT = {
    "user": "#e8f0fe",
    "assistant": "#f4f1ea",
    "user_name": "#1a56c4",
    "assistant_name": "#8a5a00",
    "muted": "#888888",
    "why": "#6a5acd",
    "note": "#aa3333",
    "link": "#5f6b7a",
    "hit": "#fff59d",
    "current": "#ffb74d",
}
_DARK = {
    "user": "#25344a",
    "assistant": "#3a3428",
    "user_name": "#8ab4f8",
    "assistant_name": "#e6b450",
    "muted": "#9a9a9a",
    "why": "#b39ddb",
    "note": "#f28b82",
    "link": "#a9b4c2",
    "hit": "#6d6220",
    "current": "#b86e00",
}


@dataclass(eq=False)  # a bubble is itself: two with the same words are still two
class Bubble:
    """One message as the view shows it. id is None for a message not saved yet (a reply streaming)."""

    id: int | None
    role: str
    who: str  # the persona's name; a message of the person's says "You" in the language of the moment
    text: str
    timestamp: str | None = None
    status: str = "complete"
    why: str = ""
    version_ids: list[int] = field(default_factory=list)
    frame: QTextFrame | None = field(default=None, repr=False)

    @classmethod
    def of(cls, shown: ShownMessage, persona_name: str, why: str = "") -> Bubble:
        m = shown.message
        cut = m.status == "complete" and m.meta.get("cut_by_limit")
        return cls(
            id=m.id,
            role=m.role,
            who=persona_name,
            text=m.content,
            timestamp=m.created_at,
            status="cut" if cut else m.status,
            why=why,
            version_ids=shown.version_ids,
        )


def time_label(iso_timestamp: str | None) -> str:
    """Today's messages show the time; older ones the date too."""
    try:
        when = (
            datetime.fromisoformat(iso_timestamp).astimezone()
            if iso_timestamp
            else datetime.now().astimezone()
        )
    except ValueError:
        return ""
    return when.strftime("%H:%M" if when.date() == datetime.now().date() else "%Y-%m-%d %H:%M")


class ChatView(QTextBrowser):
    action = Signal(str, int)  # "regenerate" | "edit" | "delete" | "version", message id
    need_older = Signal(int)  # the first shown message's id
    need_newer = Signal(int)  # the last shown message's id
    at_bottom_changed = Signal(bool)
    page_ready = Signal()  # a page (or a redraw) has been drawn completely

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_link)
        self.setObjectName("chatView")
        self.bubbles: list[Bubble] = []
        self.has_older = False
        self.has_newer = False
        self.loading_older = False
        self.loading_newer = False
        self._stream: Bubble | None = None
        # What to draw: (bubble, above the others); (None, from the top) drops bubbles beyond MAX_BUBBLES.
        self._queue: deque[tuple[Bubble | None, bool]] = deque()
        self._after: list[Callable[[], None]] = []  # what follows once the queue is drawn
        self._stick_to_end = False
        self._drain_timer = QTimer(self, singleShot=True, interval=0)
        self._drain_timer.timeout.connect(self._drain)
        self._redraw_waiting = False
        # Documents replaced by an empty one, taken apart a few bubbles a turn: destroying 240 bubbles at
        # once held the main loop 5-13 ms (15 under load, perf), 40 of them take 2-3 ms.
        self._retired: deque[QTextDocument] = deque()
        self._retire_timer = QTimer(self, interval=0)
        self._retire_timer.timeout.connect(self._take_apart)
        self._placeholder_shown = False
        self._search = ""
        self._current_hit: int | None = None
        self._avatar_name = ""
        self._avatar_picture: Path | None = None
        self._avatars: dict[str, QPixmap] = {}
        self._avatars_for: tuple[str, Path | None] | None = None
        self._avatar_job = 0
        self._you = ""
        self._fresh_document()
        self._was_at_bottom = True
        # The person reads the end (the reply as it streams): a taller document keeps them there. Set by
        # where the person scrolls, never by the layout: a replaced bubble shrinks the document for a
        # moment, and the clamped scrollbar once left the view at the top after Stop.
        self._following = True
        self.verticalScrollBar().valueChanged.connect(self._on_value)
        self.verticalScrollBar().rangeChanged.connect(self._on_range)
        self.latest_button = QToolButton(self)
        self.latest_button.setObjectName("jumpToLatest")
        self.latest_button.setText("↓")
        self.latest_button.setAutoRaise(False)
        self.latest_button.setVisible(False)
        self.retranslate()

    # -- appearance -------------------------------------------------------------------------------
    @property
    def colors(self) -> dict[str, str]:
        return _DARK if self.palette().color(QPalette.ColorRole.Base).lightness() < 128 else _LIGHT

    def set_persona(self, name: str, picture: Path | None) -> None:
        """Whose bubbles the assistant's are: the picture from the persona folder, else an initial."""
        self._avatar_name = name
        self._avatar_picture = picture
        self._make_avatars()

    def _make_avatars(self) -> None:
        """Drawn off the UI thread once per persona, picture or language (a file read, a decode, maybe a
        font loaded); blank until then, never the previous persona's face. Redraws only hand them over."""
        self._avatar_job += 1
        self._you = tr("You")
        job, name, picture, you = self._avatar_job, self._avatar_name or "?", self._avatar_picture, self._you
        if self._avatars_for != (name, picture):
            blank = QPixmap(AVATAR_PX * 2, AVATAR_PX * 2)
            blank.fill(Qt.GlobalColor.transparent)
            self._avatars["avatar:persona"] = blank
            self._avatars.setdefault("avatar:user", blank)
            self._install_avatars()

        def draw() -> tuple[QImage, QImage]:
            size = AVATAR_PX * 2
            return avatar_image(name, picture, size), placeholder_image(you, size)

        def drawn(images: tuple[QImage, QImage]) -> None:
            if job != self._avatar_job:
                return  # another persona or language since
            self._avatars_for = (name, picture)
            persona, user = (QPixmap.fromImage(image) for image in images)
            self._avatars = {"avatar:persona": persona, "avatar:user": user}
            self._install_avatars()
            self.viewport().update()

        run_in_background(draw, while_open(self, drawn), lambda _message: None)

    def _install_avatars(self) -> None:
        for url, picture in self._avatars.items():  # a fresh document has no resources
            self.document().addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), picture)

    def retranslate(self) -> None:
        """The person's bubbles say "You" and the links speak the language chosen now: drawn again."""
        self.latest_button.setToolTip(tr("Jump to the latest message"))
        if tr("You") != self._you:  # another first letter in another language
            self._make_avatars()
        if self.bubbles:
            self._redraw_all()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.bubbles:  # light <-> dark
            self._redraw_all()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_latest_button()

    def _place_latest_button(self) -> None:
        size = self.latest_button.sizeHint()
        viewport = self.viewport().geometry()
        self.latest_button.move(viewport.right() - size.width() - 16, viewport.bottom() - size.height() - 12)

    # -- whole pages ------------------------------------------------------------------------------
    def clear_messages(self) -> None:
        self._queue.clear()
        self._after = []
        self._stick_to_end = False
        if not self._blank():  # a switch clears, then its page clears again: 3-6 ms saved
            self._fresh_document()
        self.bubbles = []
        self.has_older = self.has_newer = False
        self.loading_older = self.loading_newer = False
        self._placeholder_shown = False
        self._stream = None
        self._install_avatars()

    def show_placeholder(self, text: str) -> None:
        """A hint in an empty conversation; the first message replaces it."""
        self.clear_messages()
        muted = self.colors["muted"]
        self.setHtml(f"<p style='color:{muted}; margin-top:40px' align='center'>{html.escape(text)}</p>")
        self._placeholder_shown = True
        self._update_latest_button()

    def show_page(
        self, bubbles: list[Bubble], has_older: bool, has_newer: bool, *, focus_id: int | None = None
    ) -> None:
        """Replace what is shown; scroll to focus_id's bubble, else to the end. Drawn from the newest
        up, a few bubbles a main-loop turn: the latest words show at once and the window never stalls."""
        self.clear_messages()
        self.has_older, self.has_newer = has_older, has_newer
        self.loading_older = self.loading_newer = True  # no page is asked for until this one is drawn
        self._stick_to_end = focus_id is None

        def done() -> None:
            self._stick_to_end = False
            self.loading_older = self.loading_newer = False
            self._apply_search()
            if focus_id is None or not self.scroll_to_message(focus_id):
                self.scroll_to_end()
            self._on_scroll()  # a page shorter than the window asks for the one before at once

        self._enqueue([(b, True) for b in reversed(bubbles)], done)

    def prepend_page(self, bubbles: list[Bubble], has_older: bool) -> None:
        """Older messages above, the view staying where the person is reading."""
        known = self._known_ids()
        bubbles = [b for b in bubbles if b.id not in known]

        def done() -> None:
            self.has_older = has_older
            self.loading_older = False
            self._apply_search()
            self._update_latest_button()

        # The newest leave the view (below: what is read stays put).
        self._enqueue([(b, True) for b in reversed(bubbles)] + [(None, False)], done)

    def append_page(self, bubbles: list[Bubble], has_newer: bool) -> None:
        """Newer messages below (after a jump back in time, scrolling down again)."""
        known = self._known_ids()

        def done() -> None:
            self.has_newer = has_newer
            self.loading_newer = False
            self._apply_search()
            self._update_latest_button()

        self._enqueue([(b, False) for b in bubbles if b.id not in known] + [(None, True)], done)

    def _known_ids(self) -> set[int | None]:
        return {b.id for b in self.bubbles} | {b.id for b, _ in self._queue if b is not None}

    @property
    def drawing(self) -> bool:
        """Bubbles are still waiting to be drawn (a page arriving a few at a time)."""
        return bool(self._queue or self._after)

    def _enqueue(self, ops: list[tuple[Bubble | None, bool]], after: Callable[[], None]) -> None:
        self._queue.extend(ops)
        self._after.append(after)
        self._drain_timer.start()

    def _drain(self) -> None:
        """Draw queued bubbles (or drop those beyond MAX_BUBBLES) for at most DRAW_BUDGET_S, in one edit
        block (laid out once), then let the main loop run; a change above keeps the words being read
        where they are."""
        bar = self.verticalScrollBar()
        before_max, before_value = bar.maximum(), bar.value()
        above: bool | None = None  # a turn changes one side only: the other's height would move the view
        started = time.perf_counter()
        batch = QTextCursor(self.document())
        batch.beginEditBlock()
        try:
            while self._queue and time.perf_counter() - started < DRAW_BUDGET_S:
                bubble, at_start = self._queue[0]
                if above is not None and at_start != above:
                    break
                above = at_start
                if bubble is not None:
                    self._queue.popleft()
                    self._insert(bubble, at_start=at_start)
                elif not self._trim(from_start=at_start):
                    self._queue.popleft()  # nothing (more) beyond MAX_BUBBLES
        finally:
            batch.endEditBlock()
        if self._stick_to_end:
            self.scroll_to_end()
        elif above:
            bar.setValue(before_value + (bar.maximum() - before_max))
        if self._queue:
            self._drain_timer.start()
            return
        after, self._after = self._after, []
        for step in after:
            step()
        self.page_ready.emit()
        if self._redraw_waiting:
            self._redraw_all()

    # -- single messages --------------------------------------------------------------------------
    def add_message(
        self,
        who: str,
        role: str,
        text: str,
        *,
        timestamp: str | None = None,
        status: str = "complete",
        why: str = "",
        message_id: int | None = None,
        version_ids: list[int] | None = None,
    ) -> None:
        """A message that just happened, at the end (why: the reason a persona wrote first)."""
        bubble = Bubble(message_id, role, who, text, timestamp, status, why, version_ids or [])
        if self.has_newer:  # the view shows an older stretch: the new message waits below, the button says so
            self._update_latest_button()
            return
        follow = self.is_at_bottom()
        self._insert(bubble, at_start=False)
        if follow or role == "user":
            self.scroll_to_end()

    def settle(self, user_bubble: Bubble | None, reply: Bubble | None) -> None:
        """After a turn: the person's message and the reply get their ids, so their links work."""
        for bubble in (user_bubble, reply):
            if bubble is None:
                continue
            index = next(
                (i for i, b in enumerate(self.bubbles) if b.id is None and b.role == bubble.role), None
            )
            if index is not None:
                self._replace(index, bubble)

    def remove_message(self, message_id: int) -> None:
        for i, bubble in enumerate(self.bubbles):
            if bubble.id == message_id:
                self._remove_frame(bubble.frame)
                del self.bubbles[i]
                return

    def remove_from(self, message_id: int) -> None:
        """Take this message and everything after it off the view (a regenerate or an edit starts there)."""
        index = next((i for i, b in enumerate(self.bubbles) if b.id == message_id), None)
        if index is None:
            return
        self._remove_frames(self.bubbles[index].frame, self.bubbles[-1].frame)
        del self.bubbles[index:]

    def message(self, message_id: int) -> Bubble | None:
        return next((b for b in self.bubbles if b.id == message_id), None)

    # -- a streaming reply ------------------------------------------------------------------------
    def begin_stream(self, who: str) -> None:
        follow = self.is_at_bottom() or not self.bubbles
        self._stream = Bubble(None, "assistant", who, "", status="streaming")
        self._insert(self._stream, at_start=False)
        if follow:
            self.scroll_to_end()

    def append_stream(self, text: str) -> None:
        """The reply so far, rendered as Markdown: only this frame is laid out again."""
        if self._stream is None or self._stream.frame is None:
            return
        follow = self.is_at_bottom()
        self._stream.text += text
        cursor = self._body_cursor(self._stream.frame)
        cursor.insertFragment(QTextDocumentFragment(to_document(self._stream.text)))
        if follow:
            self.scroll_to_end()

    def end_stream(self, final_text: str, status: str) -> None:
        if self._stream is None:
            return
        bubble = self._stream
        self._stream = None
        index = next(i for i, b in enumerate(self.bubbles) if b is bubble)
        follow = self.is_at_bottom()
        self._replace(index, Bubble(None, "assistant", bubble.who, final_text, bubble.timestamp, status))
        if follow:
            self.scroll_to_end()
        if self._redraw_waiting:
            self._redraw_all()

    @property
    def streaming_text(self) -> str:
        return self._stream.text if self._stream is not None else ""

    # -- search -----------------------------------------------------------------------------------
    def set_search(self, text: str, current_id: int | None = None) -> None:
        """Highlight every occurrence in what is shown; the current hit's bubble is scrolled to."""
        self._search = text
        self._current_hit = current_id
        self._apply_search()
        if current_id is not None:
            self.scroll_to_message(current_id)

    def _apply_search(self) -> None:
        selections: list[QTextEdit.ExtraSelection] = []
        if self._search:
            doc = self.document()
            colors = self.colors
            current = self.message(self._current_hit) if self._current_hit is not None else None
            cursor = doc.find(self._search, 0)
            while not cursor.isNull():
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursor
                fmt = QTextCharFormat()
                inside = (
                    current is not None
                    and current.frame is not None
                    and current.frame.firstPosition() <= cursor.position() <= current.frame.lastPosition()
                )
                fmt.setBackground(QColor(colors["current" if inside else "hit"]))
                selection.format = fmt
                selections.append(selection)
                cursor = doc.find(self._search, cursor)
        self.setExtraSelections(selections)

    # -- scrolling --------------------------------------------------------------------------------
    def scroll_to_message(self, message_id: int) -> bool:
        bubble = self.message(message_id)
        if bubble is None or bubble.frame is None:
            return False
        rect = self.document().documentLayout().frameBoundingRect(bubble.frame)
        bar = self.verticalScrollBar()
        bar.setValue(max(0, int(rect.top()) - 24))
        self._following = self.is_at_bottom()
        return True

    def scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._following = True
        self._update_latest_button()

    def is_at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 8

    def check_edges(self) -> None:
        """Ask for the next page if the view sits at an edge with more beyond it."""
        self._on_scroll()

    def _on_range(self, *_args) -> None:
        """The document's height changed (a reply growing, a bubble drawn again, a late layout pass): one
        following the end stays on its last line. Pages being drawn place the view themselves (_drain), and
        an older stretch shown (has_newer) is never pulled down page after page."""
        if self._following and not self.has_newer and not self.drawing and not self._placeholder_shown:
            self.scroll_to_end()
        else:
            self._following = self.is_at_bottom()
        self._on_scroll()

    def _on_value(self, _value: int) -> None:
        self._following = self.is_at_bottom()  # where the person (or a jump) put the view
        self._on_scroll()

    def _on_scroll(self, *_args) -> None:
        bar = self.verticalScrollBar()
        if self.bubbles and not self.drawing:  # a page too short to scroll asks for the one before
            first, last = self.bubbles[0].id, self.bubbles[-1].id
            if bar.value() <= EDGE_PX and self.has_older and not self.loading_older and first is not None:
                self.loading_older = True
                self.need_older.emit(first)
            elif (
                bar.value() >= bar.maximum() - EDGE_PX
                and self.has_newer
                and not self.loading_newer
                and last is not None
            ):
                self.loading_newer = True
                self.need_newer.emit(last)
        self._update_latest_button()

    def _update_latest_button(self) -> None:
        at_bottom = self.is_at_bottom() and not self.has_newer
        self.latest_button.setVisible(not at_bottom and not self._placeholder_shown)
        if not at_bottom:
            self._place_latest_button()
        if at_bottom != self._was_at_bottom:
            self._was_at_bottom = at_bottom
            self.at_bottom_changed.emit(at_bottom)

    # -- links ------------------------------------------------------------------------------------
    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == "nexus":
            kind, _, number = url.path().partition("/")
            try:
                message_id = int(number)
            except ValueError:
                return
            if kind == "copy":
                bubble = self.message(message_id)
                if bubble is not None:
                    QApplication.clipboard().setText(bubble.text)
            else:
                self.action.emit(kind, message_id)
        elif url.scheme() in ("http", "https", "mailto"):  # never a file: or another app's scheme
            QDesktopServices.openUrl(url)

    # -- drawing ----------------------------------------------------------------------------------
    def _insert(self, bubble: Bubble, *, at_start: bool) -> None:
        if self._placeholder_shown:
            self.clear()
            self._placeholder_shown = False
            self._install_avatars()
        cursor = QTextCursor(self.document())
        if at_start:
            cursor.setPosition(0)
        else:
            cursor.movePosition(QTextCursor.MoveOperation.End)
        self._draw(cursor, bubble)
        if at_start:
            self.bubbles.insert(0, bubble)
        else:
            self.bubbles.append(bubble)

    def _replace(self, index: int, bubble: Bubble) -> None:
        """One bubble drawn again in one edit (laid out once: never a shorter document in between). The
        person following the end stays there; one reading further down than it stays on their words."""
        old = self.bubbles[index]
        bar = self.verticalScrollBar()
        layout = self.document().documentLayout()
        old_rect = layout.frameBoundingRect(old.frame) if old.frame is not None else None
        value = bar.value()
        position = old.frame.firstPosition() - 1 if old.frame is not None else 0
        batch = QTextCursor(self.document())
        batch.beginEditBlock()
        try:
            self._remove_frame(old.frame)
            cursor = QTextCursor(self.document())
            cursor.setPosition(position)
            self._draw(cursor, bubble)
        finally:
            batch.endEditBlock()
        self.bubbles[index] = bubble
        if self._following and not self.has_newer:
            self.scroll_to_end()
        elif old_rect is not None and bubble.frame is not None and old_rect.bottom() <= value:
            bar.setValue(value + round(layout.frameBoundingRect(bubble.frame).height() - old_rect.height()))
        self._apply_search()

    def _redraw_all(self) -> None:
        """Everything again (a language or theme switch), a page at a time like any page; the bubble
        at the top of the window stays there. A reply streaming finishes first."""
        if self._stream is not None or self.drawing:
            self._redraw_waiting = True
            return
        self._redraw_waiting = False
        bubbles = list(self.bubbles)
        focus = None if self.is_at_bottom() else self._bubble_at_top()
        self.show_page(bubbles, self.has_older, self.has_newer, focus_id=focus)

    def _bubble_at_top(self) -> int | None:
        position = self.cursorForPosition(QPoint(20, 20)).position()
        for bubble in self.bubbles:
            if (
                bubble.frame is not None
                and bubble.frame.firstPosition() - 1 <= position <= bubble.frame.lastPosition()
            ):
                return bubble.id
        return None

    def _body_cursor(self, frame: QTextFrame) -> QTextCursor:
        """The words of a bubble still streaming: from the block after its header to the frame's end."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(frame.firstCursorPosition().block().next().position())
        cursor.setPosition(frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _remove_frame(self, frame: QTextFrame | None) -> None:
        if frame is not None:
            self._remove_frames(frame, frame)

    def _remove_frames(self, first: QTextFrame, last: QTextFrame) -> None:
        """Bubbles side by side, from first to last: one contiguous stretch, removed in one edit."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(first.firstPosition() - 1)
        end = min(last.lastPosition() + 1, self.document().characterCount() - 1)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _trim(self, *, from_start: bool) -> int:
        """Drop up to TRIM_AT_ONCE bubbles beyond MAX_BUBBLES from one end: the view has more that way."""
        extra = min(len(self.bubbles) - MAX_BUBBLES, TRIM_AT_ONCE)
        if extra <= 0:
            return 0
        doomed = self.bubbles[:extra] if from_start else self.bubbles[-extra:]
        doomed = [b for b in doomed if b is not self._stream and b.frame is not None]
        if not doomed:
            return 0
        self._remove_frames(doomed[0].frame, doomed[-1].frame)
        self.bubbles = [b for b in self.bubbles if all(b is not d for d in doomed)]
        if from_start:
            self.has_older = True
        else:
            self.has_newer = True
        return len(doomed)

    def _fresh_document(self) -> None:
        """An empty document in place of the shown one: clear() of 240 bubbles held the main loop 8-11 ms;
        the old one is taken apart over the next turns (_take_apart)."""
        self.setExtraSelections([])  # they point into the old document
        old = self.document()
        ours = old.parent() is self  # the first document belongs to the editor, which deletes it itself
        document = QTextDocument(self)
        document.setDocumentMargin(12)
        document.setUndoRedoEnabled(False)  # read-only: an undo history would only grow
        document.setDefaultFont(self.font())
        self.setDocument(document)
        if ours:
            self._retired.append(old)
            self._retire_timer.start()
        self._install_avatars()

    def _blank(self) -> bool:
        """The document shown is one of ours, empty, in today's font: a fresh one would change nothing."""
        document = self.document()
        return document.parent() is self and document.isEmpty() and document.defaultFont() == self.font()

    def _take_apart(self) -> None:
        """One step of dropping a replaced document: RETIRE_AT_ONCE bubbles, or, once it is empty, itself."""
        old = self._retired[0]
        frames = old.rootFrame().childFrames()
        if frames:
            chunk = frames[:RETIRE_AT_ONCE]
            cursor = QTextCursor(old)
            cursor.setPosition(chunk[0].firstPosition() - 1)
            cursor.setPosition(
                min(chunk[-1].lastPosition() + 1, old.characterCount() - 1), QTextCursor.MoveMode.KeepAnchor
            )
            cursor.removeSelectedText()
            if len(old.rootFrame().childFrames()) < len(frames):
                return
        self._retired.popleft()  # empty, or (never seen) a stretch that would not go: dropped whole
        old.deleteLater()
        if not self._retired:
            self._retire_timer.stop()

    def _draw(self, cursor: QTextCursor, bubble: Bubble) -> None:
        colors = self.colors
        user = bubble.role == "user"
        fmt = QTextFrameFormat()
        fmt.setBackground(QColor(colors["user" if user else "assistant"]))
        fmt.setPadding(8)
        fmt.setMargin(4)
        fmt.setBorder(0)
        if user:
            fmt.setLeftMargin(60)
        else:
            fmt.setRightMargin(60)
        frame = cursor.insertFrame(fmt)
        bubble.frame = frame
        who = tr("You") if user else bubble.who
        avatar = "avatar:user" if user else "avatar:persona"
        header = (
            f"<img src='{avatar}' width='{AVATAR_PX}' height='{AVATAR_PX}' style='vertical-align:middle'>"
            f"&nbsp;<span style='color:{colors['user_name' if user else 'assistant_name']}; font-weight:600'>"
            f"{html.escape(who)}</span>&nbsp;&nbsp;<span style='color:{colors['muted']}; font-size:small'>"
            f"{html.escape(time_label(bubble.timestamp))}</span>"
        )
        if bubble.why:  # the persona wrote first: why, in its own words and numbers
            header += (
                f"&nbsp;&nbsp;<span style='color:{colors['why']}; font-size:small'>"
                f"✦ {html.escape(tr('wrote first'))}: {html.escape(bubble.why)}</span>"
            )
        cursor.insertHtml(header)
        cursor.insertBlock()
        if bubble.status == "streaming" and not bubble.text:
            # A typing indicator until the first words arrive; the first piece replaces it.
            cursor.insertHtml(f"<span style='color:{colors['muted']}'>…</span>")
        elif bubble.text:
            cursor.insertFragment(QTextDocumentFragment(to_document(bubble.text)))
        if bubble.status == "streaming":
            return
        note = _STATUS_NOTES.get(bubble.status)
        if note:
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())  # a plain block, never a list's item
            cursor.insertHtml(
                f"<span style='color:{colors['note']}; font-style:italic'>({html.escape(tr(note))})</span>"
            )
        if bubble.id is not None:
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertHtml(self._links(bubble))

    def _links(self, bubble: Bubble) -> str:
        color = self.colors["link"]

        def link(kind: str, label: str, message_id: int | None = None) -> str:
            target = bubble.id if message_id is None else message_id
            return (
                f"<a href='nexus:{kind}/{target}' style='color:{color}; text-decoration:none'>"
                f"{html.escape(label)}</a>"
            )

        parts = [link("copy", tr("Copy"))]
        if bubble.role == "assistant":
            parts.append(link("regenerate", tr("Regenerate")))
        elif bubble.role == "user":
            parts.append(link("edit", tr("Edit")))
        parts.append(link("delete", tr("Delete")))
        links = " · ".join(parts)
        ids = bubble.version_ids
        if len(ids) > 1 and bubble.id in ids:
            i = ids.index(bubble.id)
            back = link("version", "‹", ids[i - 1]) if i > 0 else "‹"
            forward = link("version", "›", ids[i + 1]) if i + 1 < len(ids) else "›"
            links += f"&nbsp;&nbsp;&nbsp;{back} {i + 1}/{len(ids)} {forward}"
        return f"<span style='font-size:small; color:{color}'>{links}</span>"
