"""The conversation view's scrolling (a part ChatView owns): following the end while a reply grows, jumping
to a message, asking for the next page at an edge, and the jump-to-latest button."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QTextBrowser, QToolButton

from ui.chat.bubble import ShownBubbles

EDGE_PX = 48  # this close to the top or bottom, the next page is asked for


class Scroller(QObject):
    """Where the view sits: at the end (following), on a message, or near an edge with more beyond."""

    need_older = Signal(int)  # the first shown message's id
    need_newer = Signal(int)  # the last shown message's id
    at_bottom_changed = Signal(bool)

    def __init__(self, view: QTextBrowser, shown: ShownBubbles, drawing: Callable[[], bool]) -> None:
        """drawing: whether bubbles still wait to be drawn (a page being drawn places the view itself)."""
        super().__init__(view)
        self.view = view
        self.shown = shown
        self.drawing = drawing
        self._was_at_bottom = True
        # The person reads the end (the reply as it streams): a taller document keeps them there. Set by
        # where the person scrolls, never by the layout: a replaced bubble shrinks the document for a
        # moment, and the clamped scrollbar once left the view at the top after Stop.
        self.following = True
        self.latest_button = QToolButton(view)
        self.latest_button.setObjectName("jumpToLatest")
        self.latest_button.setText("↓")
        self.latest_button.setAutoRaise(False)
        self.latest_button.setVisible(False)
        bar = view.verticalScrollBar()
        bar.valueChanged.connect(self._on_value)
        bar.rangeChanged.connect(self._on_range)

    def scroll_to_message(self, message_id: int) -> bool:
        bubble = self.shown.message(message_id)
        if bubble is None or bubble.frame is None:
            return False
        rect = self.view.document().documentLayout().frameBoundingRect(bubble.frame)
        self.view.verticalScrollBar().setValue(max(0, int(rect.top()) - 24))
        self.following = self.is_at_bottom()
        return True

    def scroll_to_end(self) -> None:
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.maximum())
        self.following = True
        self.update_latest_button()

    def is_at_bottom(self) -> bool:
        bar = self.view.verticalScrollBar()
        return bar.value() >= bar.maximum() - 8

    def _on_range(self, *_args: object) -> None:
        """The document's height changed (a reply growing, a bubble drawn again, a late layout pass): one
        following the end stays on its last line. Pages being drawn place the view themselves (the pager),
        and an older stretch shown (has_newer) is never pulled down page after page."""
        if (
            self.following
            and not self.shown.has_newer
            and not self.drawing()
            and not self.shown.placeholder_shown
        ):
            self.scroll_to_end()
        else:
            self.following = self.is_at_bottom()
        self.check_edges()

    def _on_value(self, _value: int) -> None:
        self.following = self.is_at_bottom()  # where the person (or a jump) put the view
        self.check_edges()

    def check_edges(self) -> None:
        """Ask for the next page if the view sits at an edge with more beyond it."""
        bar = self.view.verticalScrollBar()
        shown = self.shown
        if shown.bubbles and not self.drawing():  # a page too short to scroll asks for the one before
            first, last = shown.bubbles[0].id, shown.bubbles[-1].id
            if bar.value() <= EDGE_PX and shown.has_older and not shown.loading_older and first is not None:
                shown.loading_older = True
                self.need_older.emit(first)
            elif (
                bar.value() >= bar.maximum() - EDGE_PX
                and shown.has_newer
                and not shown.loading_newer
                and last is not None
            ):
                shown.loading_newer = True
                self.need_newer.emit(last)
        self.update_latest_button()

    def update_latest_button(self) -> None:
        at_bottom = self.is_at_bottom() and not self.shown.has_newer
        self.latest_button.setVisible(not at_bottom and not self.shown.placeholder_shown)
        if not at_bottom:
            self.place_latest_button()
        if at_bottom != self._was_at_bottom:
            self._was_at_bottom = at_bottom
            self.at_bottom_changed.emit(at_bottom)

    def place_latest_button(self) -> None:
        size = self.latest_button.sizeHint()
        viewport = self.view.viewport().geometry()
        self.latest_button.move(viewport.right() - size.width() - 16, viewport.bottom() - size.height() - 12)
