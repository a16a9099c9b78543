"""Single messages in the conversation view as they happen: one added at the end, settled with its id after a
turn, removed, and a reply streaming into its own bubble. Mixed into ChatView (ui/chat/chat_view.py)."""

from __future__ import annotations

from PySide6.QtGui import QTextDocumentFragment

from ui.chat.bubble import Bubble
from ui.util.chat_markdown import to_document


class ChatMessages:
    """Messages one at a time, and the reply being streamed."""

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
