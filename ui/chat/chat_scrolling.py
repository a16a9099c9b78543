"""The conversation view's scrolling: following the end while a reply grows, jumping to a message, asking
for the next page at an edge, and the jump-to-latest button. Mixed into ChatView (ui/chat/chat_view.py)."""

from __future__ import annotations

EDGE_PX = 48  # this close to the top or bottom, the next page is asked for


class ChatScrolling:
    """Where the view sits: at the end (following), on a message, or near an edge with more beyond."""

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

    def _place_latest_button(self) -> None:
        size = self.latest_button.sizeHint()
        viewport = self.viewport().geometry()
        self.latest_button.move(viewport.right() - size.width() - 16, viewport.bottom() - size.height() - 12)
