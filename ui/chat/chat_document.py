"""The conversation view's document: a bubble is a frame, inserted, drawn again or removed in one edit; a
replaced document is taken apart over the next main-loop turns. Mixed into ChatView (ui/chat/chat_view.py)."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument, QTextFrame

from ui.chat.bubble import Bubble

RETIRE_AT_ONCE = 40  # bubbles of a replaced document taken apart in one main-loop turn (2-3 ms)


class ChatDocument:
    """Bubbles in and out of the shown QTextDocument, and fresh documents in place of full ones."""

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
