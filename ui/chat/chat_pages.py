"""The conversation view's pages (a part ChatView owns): a page of history shown, older ones above, newer
ones below, drawn a few bubbles a main-loop turn, and the far end dropped beyond MAX_BUBBLES."""

from __future__ import annotations

import html
import time
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QPoint, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTextBrowser

from ui.chat.bubble import Bubble, BubblePainter, ShownBubbles
from ui.chat.chat_document import BubbleDocument
from ui.chat.chat_scrolling import Scroller

MAX_BUBBLES = 240  # four pages: the far end is dropped as the person scrolls on
TRIM_AT_ONCE = 15  # bubbles dropped in one main-loop turn (60 at once held the loop 20-25 ms)
DRAW_BUDGET_S = 0.004  # drawing a page takes this much of a main-loop turn, then lets it run


class Pager(QObject):
    """Whole pages: shown, prepended, appended, drawn again after a language or theme switch."""

    page_ready = Signal()  # a page (or a redraw) has been drawn completely

    def __init__(
        self,
        view: QTextBrowser,
        shown: ShownBubbles,
        document: BubbleDocument,
        painter: BubblePainter,
        apply_search: Callable[[], None],
    ) -> None:
        """apply_search: the view's search highlights laid over what is drawn."""
        super().__init__(view)
        self.view = view
        self.shown = shown
        self.document = document
        self.painter = painter
        self.apply_search = apply_search
        # What to draw: (bubble, above the others); (None, from the top) drops bubbles beyond MAX_BUBBLES.
        self._queue: deque[tuple[Bubble | None, bool]] = deque()
        self._after: list[Callable[[], None]] = []  # what follows once the queue is drawn
        self._stick_to_end = False
        self._drain_timer = QTimer(self, singleShot=True, interval=0)
        self._drain_timer.timeout.connect(self._drain)
        self.redraw_waiting = False  # a redraw asked for while a reply streamed or a page was drawn
        # Where the view sits; it asks for no page while one is being drawn here.
        self.scroller = Scroller(view, shown, lambda: self.drawing)

    def clear_messages(self) -> None:
        self._queue.clear()
        self._after = []
        self._stick_to_end = False
        if not self.document.blank():  # a switch clears, then its page clears again: 3-6 ms saved
            self.document.fresh()
        shown = self.shown
        shown.bubbles = []
        shown.has_older = shown.has_newer = False
        shown.loading_older = shown.loading_newer = False
        shown.placeholder_shown = False
        shown.stream = None
        self.document.install_avatars(self.view.document())

    def show_placeholder(self, text: str) -> None:
        """A hint in an empty conversation; the first message replaces it."""
        self.clear_messages()
        muted = self.painter.colors["muted"]
        self.view.setHtml(f"<p style='color:{muted}; margin-top:40px' align='center'>{html.escape(text)}</p>")
        self.shown.placeholder_shown = True
        self.scroller.update_latest_button()

    def show_page(
        self, bubbles: list[Bubble], has_older: bool, has_newer: bool, *, focus_id: int | None = None
    ) -> None:
        """Replace what is shown; scroll to focus_id's bubble, else to the end. Drawn from the newest
        up, a few bubbles a main-loop turn: the latest words show at once and the window never stalls."""
        self.clear_messages()
        shown = self.shown
        shown.has_older, shown.has_newer = has_older, has_newer
        shown.loading_older = shown.loading_newer = True  # no page is asked for until this one is drawn
        self._stick_to_end = focus_id is None

        def done() -> None:
            self._stick_to_end = False
            shown.loading_older = shown.loading_newer = False
            self.apply_search()
            if focus_id is None or not self.scroller.scroll_to_message(focus_id):
                self.scroller.scroll_to_end()
            self.scroller.check_edges()  # a page shorter than the window asks for the one before at once

        self._enqueue([(b, True) for b in reversed(bubbles)], done)

    def prepend_page(self, bubbles: list[Bubble], has_older: bool) -> None:
        """Older messages above, the view staying where the person is reading."""
        known = self._known_ids()
        bubbles = [b for b in bubbles if b.id not in known]

        def done() -> None:
            self.shown.has_older = has_older
            self.shown.loading_older = False
            self.apply_search()
            self.scroller.update_latest_button()

        # The newest leave the view (below: what is read stays put).
        self._enqueue([(b, True) for b in reversed(bubbles)] + [(None, False)], done)

    def append_page(self, bubbles: list[Bubble], has_newer: bool) -> None:
        """Newer messages below (after a jump back in time, scrolling down again)."""
        known = self._known_ids()

        def done() -> None:
            self.shown.has_newer = has_newer
            self.shown.loading_newer = False
            self.apply_search()
            self.scroller.update_latest_button()

        self._enqueue([(b, False) for b in bubbles if b.id not in known] + [(None, True)], done)

    def _known_ids(self) -> set[int | None]:
        return {b.id for b in self.shown.bubbles} | {b.id for b, _ in self._queue if b is not None}

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
        bar = self.view.verticalScrollBar()
        before_max, before_value = bar.maximum(), bar.value()
        above: bool | None = None  # a turn changes one side only: the other's height would move the view
        started = time.perf_counter()
        batch = QTextCursor(self.view.document())
        batch.beginEditBlock()
        try:
            while self._queue and time.perf_counter() - started < DRAW_BUDGET_S:
                bubble, at_start = self._queue[0]
                if above is not None and at_start != above:
                    break
                above = at_start
                if bubble is not None:
                    self._queue.popleft()
                    self.document.insert(bubble, at_start=at_start)
                elif not self._trim(from_start=at_start):
                    self._queue.popleft()  # nothing (more) beyond MAX_BUBBLES
        finally:
            batch.endEditBlock()
        if self._stick_to_end:
            self.scroller.scroll_to_end()
        elif above:
            bar.setValue(before_value + (bar.maximum() - before_max))
        if self._queue:
            self._drain_timer.start()
            return
        after, self._after = self._after, []
        for step in after:
            step()
        self.page_ready.emit()
        if self.redraw_waiting:
            self.redraw_all()

    def redraw_all(self) -> None:
        """Everything again (a language or theme switch), a page at a time like any page; the bubble
        at the top of the window stays there. A reply streaming finishes first."""
        if self.shown.stream is not None or self.drawing:
            self.redraw_waiting = True
            return
        self.redraw_waiting = False
        bubbles = list(self.shown.bubbles)
        focus = None if self.scroller.is_at_bottom() else self._bubble_at_top()
        self.show_page(bubbles, self.shown.has_older, self.shown.has_newer, focus_id=focus)

    def _bubble_at_top(self) -> int | None:
        position = self.view.cursorForPosition(QPoint(20, 20)).position()
        for bubble in self.shown.bubbles:
            if (
                bubble.frame is not None
                and bubble.frame.firstPosition() - 1 <= position <= bubble.frame.lastPosition()
            ):
                return bubble.id
        return None

    def _trim(self, *, from_start: bool) -> int:
        """Drop up to TRIM_AT_ONCE bubbles beyond MAX_BUBBLES from one end: the view has more that way."""
        shown = self.shown
        extra = min(len(shown.bubbles) - MAX_BUBBLES, TRIM_AT_ONCE)
        if extra <= 0:
            return 0
        doomed = shown.bubbles[:extra] if from_start else shown.bubbles[-extra:]
        doomed = [b for b in doomed if b is not shown.stream and b.frame is not None]
        if not doomed:
            return 0
        self.document.remove_frames(doomed[0].frame, doomed[-1].frame)
        shown.bubbles = [b for b in shown.bubbles if all(b is not d for d in doomed)]
        if from_start:
            shown.has_older = True
        else:
            shown.has_newer = True
        return len(doomed)
