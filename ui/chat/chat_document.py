"""The conversation view's document (a part ChatView owns): a bubble is a frame, inserted, drawn again or
removed in one edit; a replaced document is taken apart over the next main-loop turns."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QTextCursor, QTextDocument, QTextFrame
from PySide6.QtWidgets import QTextBrowser

from ui.chat.bubble import Bubble, BubblePainter, ShownBubbles

RETIRE_AT_ONCE = 40  # bubbles of a replaced document taken apart in one main-loop turn (2-3 ms)


class BubbleDocument(QObject):
    """Bubbles in and out of the view's QTextDocument, and fresh documents in place of full ones."""

    def __init__(
        self,
        view: QTextBrowser,
        shown: ShownBubbles,
        painter: BubblePainter,
        install_avatars: Callable[[QTextDocument], None],
    ) -> None:
        """install_avatars: the avatars as the document's image resources (a fresh one has none)."""
        super().__init__(view)
        self.view = view
        self.shown = shown
        self.painter = painter
        self.install_avatars = install_avatars
        # Documents replaced by an empty one, taken apart a few bubbles a turn: destroying 240 bubbles at
        # once held the main loop 5-13 ms (15 under load, perf), 40 of them take 2-3 ms.
        self._retired: deque[QTextDocument] = deque()
        self._retire_timer = QTimer(self, interval=0)
        self._retire_timer.timeout.connect(self._take_apart)

    def insert(self, bubble: Bubble, *, at_start: bool) -> None:
        if self.shown.placeholder_shown:
            self.view.clear()
            self.shown.placeholder_shown = False
            self.install_avatars(self.view.document())
        cursor = QTextCursor(self.view.document())
        if at_start:
            cursor.setPosition(0)
        else:
            cursor.movePosition(QTextCursor.MoveOperation.End)
        self.painter.draw(cursor, bubble)
        if at_start:
            self.shown.bubbles.insert(0, bubble)
        else:
            self.shown.bubbles.append(bubble)

    def swap(self, index: int, bubble: Bubble) -> None:
        """One bubble drawn again in one edit (laid out once: never a shorter document in between)."""
        old = self.shown.bubbles[index]
        position = old.frame.firstPosition() - 1 if old.frame is not None else 0
        batch = QTextCursor(self.view.document())
        batch.beginEditBlock()
        try:
            self.remove_frame(old.frame)
            cursor = QTextCursor(self.view.document())
            cursor.setPosition(position)
            self.painter.draw(cursor, bubble)
        finally:
            batch.endEditBlock()
        self.shown.bubbles[index] = bubble

    def body_cursor(self, frame: QTextFrame) -> QTextCursor:
        """The words of a bubble still streaming: from the block after its header to the frame's end."""
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(frame.firstCursorPosition().block().next().position())
        cursor.setPosition(frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def remove_frame(self, frame: QTextFrame | None) -> None:
        if frame is not None:
            self.remove_frames(frame, frame)

    def remove_frames(self, first: QTextFrame | None, last: QTextFrame | None) -> None:
        """Bubbles side by side, from first to last: one contiguous stretch, removed in one edit."""
        if first is None or last is None:
            return
        document = self.view.document()
        cursor = QTextCursor(document)
        cursor.setPosition(first.firstPosition() - 1)
        end = min(last.lastPosition() + 1, document.characterCount() - 1)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def fresh(self) -> None:
        """An empty document in place of the shown one: clear() of 240 bubbles held the main loop 8-11 ms;
        the old one is taken apart over the next turns (_take_apart)."""
        view = self.view
        view.setExtraSelections([])  # they point into the old document
        old = view.document()
        ours = old.parent() is view  # the first document belongs to the editor, which deletes it itself
        document = QTextDocument(view)
        document.setDocumentMargin(12)
        document.setUndoRedoEnabled(False)  # read-only: an undo history would only grow
        document.setDefaultFont(view.font())
        view.setDocument(document)
        if ours:
            self._retired.append(old)
            self._retire_timer.start()
        self.install_avatars(document)

    def blank(self) -> bool:
        """The document shown is one of ours, empty, in today's font: a fresh one would change nothing."""
        document = self.view.document()
        return (
            document.parent() is self.view
            and document.isEmpty()
            and document.defaultFont() == self.view.font()
        )

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
