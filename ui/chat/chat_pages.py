"""The conversation view's pages: a page of history shown, older ones above, newer ones below, drawn a few
bubbles a main-loop turn, and the far end dropped beyond MAX_BUBBLES. Mixed into ChatView
(ui/chat/chat_view.py); needs its queue, its scroll bar and its document editing (ChatDocument)."""

from __future__ import annotations

import html
import time
from collections.abc import Callable

from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextCursor

from ui.chat.bubble import Bubble

MAX_BUBBLES = 240  # four pages: the far end is dropped as the person scrolls on
TRIM_AT_ONCE = 15  # bubbles dropped in one main-loop turn (60 at once held the loop 20-25 ms)
DRAW_BUDGET_S = 0.004  # drawing a page takes this much of a main-loop turn, then lets it run


class ChatPages:
    """Whole pages: shown, prepended, appended, drawn again after a language or theme switch."""

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
