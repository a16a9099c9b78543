"""The conversation: one framed block per message, Markdown rendered, the streaming reply updated in place."""

from __future__ import annotations

import html
from datetime import datetime

from PySide6.QtGui import (
    QColor,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFrame,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QTextBrowser

from ui.i18n import N_, tr

_BACKGROUND = {"user": QColor("#e8f0fe"), "assistant": QColor("#f4f1ea")}
_NAME_COLOR = {"user": "#1a56c4", "assistant": "#8a5a00"}
_STATUS_NOTES = {
    "stopped": N_("stopped"),
    "interrupted": N_("interrupted: the app closed while this reply was being written"),
    "error": N_("the model failed"),
    "cut": N_("cut at the token limit: Continue goes on"),
}


def _time_label(iso_timestamp: str | None) -> str:
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
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(True)
        self.setObjectName("chatView")
        self.document().setDocumentMargin(12)
        self._stream_start: int | None = None
        self._stream_frame: QTextFrame | None = None
        self._stream_text = ""
        self._placeholder_shown = False

    # -- whole messages ---------------------------------------------------------------------------
    def clear_messages(self) -> None:
        self.clear()
        self._placeholder_shown = False
        self._stream_start = None
        self._stream_frame = None
        self._stream_text = ""

    def show_placeholder(self, text: str) -> None:
        """A hint in an empty conversation; the first message replaces it."""
        self.clear_messages()
        self.setHtml(f"<p style='color:#888; margin-top:40px' align='center'>{html.escape(text)}</p>")
        self._placeholder_shown = True

    def add_message(
        self,
        who: str,
        role: str,
        text: str,
        *,
        timestamp: str | None = None,
        status: str = "complete",
        why: str = "",
    ) -> None:
        """why: for a message the persona wrote on its own, the reason, shown beside it."""
        frame = self._begin_frame(who, role, timestamp, why)
        cursor = frame.lastCursorPosition()
        self._insert_markdown(cursor, text)
        self._add_status_note(frame, status)
        self._scroll_to_end()

    # -- a streaming reply ------------------------------------------------------------------------
    def begin_stream(self, who: str) -> None:
        self._stream_frame = self._begin_frame(who, "assistant", None)
        self._stream_start = self._stream_frame.lastPosition()
        self._stream_text = ""
        # A typing indicator until the first words arrive; the first append replaces it.
        self._stream_cursor().insertHtml("<span style='color:#999'>…</span>")

    def append_stream(self, text: str) -> None:
        if self._stream_start is None:
            return
        self._stream_text += text
        cursor = self._stream_cursor()
        cursor.insertText(self._stream_text)
        self._scroll_to_end()

    def end_stream(self, final_text: str, status: str) -> None:
        if self._stream_start is None or self._stream_frame is None:
            return
        cursor = self._stream_cursor()
        if final_text:
            self._insert_markdown(cursor, final_text)
        else:
            cursor.removeSelectedText()
        self._add_status_note(self._stream_frame, status)
        self._stream_start = None
        self._stream_frame = None
        self._scroll_to_end()

    @property
    def streaming_text(self) -> str:
        return self._stream_text

    # -- helpers ----------------------------------------------------------------------------------
    def _stream_cursor(self) -> QTextCursor:
        # Select the reply's text inside its frame only: a selection past the frame would delete the frame.
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._stream_start)
        cursor.setPosition(self._stream_frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _begin_frame(self, who: str, role: str, timestamp: str | None, why: str = "") -> QTextFrame:
        if self._placeholder_shown:
            self.clear_messages()
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        fmt = QTextFrameFormat()
        fmt.setBackground(_BACKGROUND.get(role, _BACKGROUND["assistant"]))
        fmt.setPadding(8)
        fmt.setMargin(4)
        fmt.setBorder(0)
        if role == "user":
            fmt.setLeftMargin(60)
        else:
            fmt.setRightMargin(60)
        frame = cursor.insertFrame(fmt)
        color = _NAME_COLOR.get(role, _NAME_COLOR["assistant"])
        when = _time_label(timestamp)
        cursor.insertHtml(
            f"<span style='color:{color}; font-weight:600'>{html.escape(who)}</span>"
            f"&nbsp;&nbsp;<span style='color:#999; font-size:small'>{html.escape(when)}</span>"
        )
        if why:  # the persona wrote first: why, in its own words and numbers
            cursor.insertHtml(
                "&nbsp;&nbsp;<span style='color:#6a5acd; font-size:small'>"
                f"✦ {html.escape(tr('wrote first'))}: {html.escape(why)}</span>"
            )
        cursor.insertBlock()
        return frame

    @staticmethod
    def _insert_markdown(cursor: QTextCursor, text: str) -> None:
        doc = QTextDocument()
        doc.setMarkdown(text)
        cursor.insertFragment(QTextDocumentFragment(doc))

    @staticmethod
    def _add_status_note(frame: QTextFrame, status: str) -> None:
        note = _STATUS_NOTES.get(status)
        if not note:
            return
        cursor = frame.lastCursorPosition()
        cursor.insertHtml(f"<br><span style='color:#a33; font-style:italic'>({html.escape(tr(note))})</span>")

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
