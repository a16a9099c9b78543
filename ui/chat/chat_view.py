"""The conversation: one framed bubble per message, Markdown rendered (while it streams too), a page of
history at a time.

The view holds a window of the conversation (at most MAX_BUBBLES): scrolling to its top asks for the page
before (need_older), to its bottom for the page after when it shows an older stretch (need_newer); the far
end is dropped so years of history never sit in one document. Links under each bubble (copy, regenerate,
edit, delete, ‹ n/m ›) emit `action`; copy is handled here. A streaming reply re-renders only its own frame.

The view owns its parts, each an object with its own state, given what it shows (ShownBubbles, bubble.py)
and the view: the bubble painter (bubble.py), the document (chat_document.py: bubbles as frames), the pager
(chat_pages.py: pages drawn a few bubbles a turn, the far end dropped) and the scroller
(chat_scrolling.py: following the end, edges, the jump-to-latest button). Here: single messages and the
streaming reply, avatars, search highlights and links.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QImage,
    QPixmap,
    QResizeEvent,
    QTextCharFormat,
    QTextDocument,
    QTextDocumentFragment,
)
from PySide6.QtWidgets import QApplication, QTextBrowser, QTextEdit, QWidget

from ui.chat.bubble import AVATAR_PX, Bubble, BubblePainter, ShownBubbles
from ui.chat.chat_document import BubbleDocument
from ui.chat.chat_pages import Pager
from ui.util.avatars import avatar_image, placeholder_image
from ui.util.chat_markdown import to_document
from ui.util.i18n import tr
from ui.util.tasks import run_in_background, while_open


def _shown(field: str) -> Any:
    """The view's face for a field of what it shows, kept in the ShownBubbles its parts read."""
    return property(
        lambda self: getattr(self.shown, field), lambda self, value: setattr(self.shown, field, value)
    )


class ChatView(QTextBrowser):
    action = Signal(str, int)  # "regenerate" | "edit" | "delete" | "version", message id
    need_older = Signal(int)  # the first shown message's id
    need_newer = Signal(int)  # the last shown message's id
    at_bottom_changed = Signal(bool)
    page_ready = Signal()  # a page (or a redraw) has been drawn completely
    replay_requested = Signal(int)  # a reply's ▶: spoken again (the main window's voice controller)
    bubbles = _shown("bubbles")
    has_older = _shown("has_older")
    has_newer = _shown("has_newer")
    loading_older = _shown("loading_older")
    loading_newer = _shown("loading_newer")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_link)
        self.setObjectName("chatView")
        self.shown = ShownBubbles()
        self._search = ""
        self._current_hit: int | None = None
        self._avatar_name = ""
        self._avatar_picture: Path | None = None
        self._avatars: dict[str, QPixmap] = {}
        self._avatars_for: tuple[str, Path | None] | None = None
        self._avatar_job = 0
        self._you = ""
        self.painter = BubblePainter(self)
        self.document_part = BubbleDocument(self, self.shown, self.painter, self._install_avatars)
        self.pager = Pager(self, self.shown, self.document_part, self.painter, self._apply_search)
        self.pager.page_ready.connect(self.page_ready)
        self.scroller = self.pager.scroller
        self.scroller.need_older.connect(self.need_older)
        self.scroller.need_newer.connect(self.need_newer)
        self.scroller.at_bottom_changed.connect(self.at_bottom_changed)
        self.latest_button = self.scroller.latest_button
        self.document_part.fresh()
        self.retranslate()

    # -- what the parts do, as the view's own face -------------------------------------------------
    @property
    def colors(self) -> dict[str, str]:
        return self.painter.colors

    @property
    def drawing(self) -> bool:
        """Bubbles are still waiting to be drawn (a page arriving a few at a time)."""
        return self.pager.drawing

    def clear_messages(self) -> None:
        self.pager.clear_messages()

    def show_placeholder(self, text: str) -> None:
        """A hint in an empty conversation; the first message replaces it."""
        self.pager.show_placeholder(text)

    def show_page(
        self, bubbles: list[Bubble], has_older: bool, has_newer: bool, *, focus_id: int | None = None
    ) -> None:
        """Replace what is shown; scroll to focus_id's bubble, else to the end."""
        self.pager.show_page(bubbles, has_older, has_newer, focus_id=focus_id)

    def prepend_page(self, bubbles: list[Bubble], has_older: bool) -> None:
        self.pager.prepend_page(bubbles, has_older)

    def append_page(self, bubbles: list[Bubble], has_newer: bool) -> None:
        self.pager.append_page(bubbles, has_newer)

    def scroll_to_message(self, message_id: int) -> bool:
        return self.scroller.scroll_to_message(message_id)

    def scroll_to_end(self) -> None:
        self.scroller.scroll_to_end()

    def is_at_bottom(self) -> bool:
        return self.scroller.is_at_bottom()

    def check_edges(self) -> None:
        """Ask for the next page if the view sits at an edge with more beyond it."""
        self.scroller.check_edges()

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
        if self.shown.has_newer:  # an older stretch is shown: the new message waits below, the button says so
            self.scroller.update_latest_button()
            return
        follow = self.is_at_bottom()
        self.document_part.insert(bubble, at_start=False)
        if follow or role == "user":
            self.scroll_to_end()

    def settle(self, user_bubble: Bubble | None, reply: Bubble | None) -> None:
        """After a turn: the person's message and the reply get their ids, so their links work."""
        for bubble in (user_bubble, reply):
            if bubble is None:
                continue
            index = next(
                (i for i, b in enumerate(self.shown.bubbles) if b.id is None and b.role == bubble.role), None
            )
            if index is not None:
                self._replace(index, bubble)

    def remove_message(self, message_id: int) -> None:
        for i, bubble in enumerate(self.shown.bubbles):
            if bubble.id == message_id:
                self.document_part.remove_frame(bubble.frame)
                del self.shown.bubbles[i]
                return

    def remove_from(self, message_id: int) -> None:
        """Take this message and everything after it off the view (a regenerate or an edit starts there)."""
        bubbles = self.shown.bubbles
        index = next((i for i, b in enumerate(bubbles) if b.id == message_id), None)
        if index is None:
            return
        self.document_part.remove_frames(bubbles[index].frame, bubbles[-1].frame)
        del bubbles[index:]

    def message(self, message_id: int) -> Bubble | None:
        return self.shown.message(message_id)

    def toggle_tools(self, message_id: int) -> None:
        index = next((i for i, b in enumerate(self.shown.bubbles) if b.id == message_id), None)
        if index is not None:
            bubble = self.shown.bubbles[index]
            bubble.tools_open = not bubble.tools_open
            self._replace(index, bubble)

    def _replace(self, index: int, bubble: Bubble) -> None:
        """One bubble drawn again in one edit. The person following the end stays there; one reading
        further down than it stays on their words."""
        old = self.shown.bubbles[index]
        bar = self.verticalScrollBar()
        layout = self.document().documentLayout()
        old_rect = layout.frameBoundingRect(old.frame) if old.frame is not None else None
        value = bar.value()
        self.document_part.swap(index, bubble)
        if self.scroller.following and not self.shown.has_newer:
            self.scroll_to_end()
        elif old_rect is not None and bubble.frame is not None and old_rect.bottom() <= value:
            bar.setValue(value + round(layout.frameBoundingRect(bubble.frame).height() - old_rect.height()))
        self._apply_search()

    # -- a streaming reply ------------------------------------------------------------------------
    def begin_stream(self, who: str) -> None:
        follow = self.is_at_bottom() or not self.shown.bubbles
        self.shown.stream = Bubble(None, "assistant", who, "", status="streaming")
        self.document_part.insert(self.shown.stream, at_start=False)
        if follow:
            self.scroll_to_end()

    def append_stream(self, text: str) -> None:
        """The reply so far, rendered as Markdown: only this frame is laid out again."""
        stream = self.shown.stream
        if stream is None or stream.frame is None:
            return
        follow = self.is_at_bottom()
        stream.text += text
        cursor = self.document_part.body_cursor(stream.frame)
        cursor.insertFragment(QTextDocumentFragment(to_document(stream.text)))
        if follow:
            self.scroll_to_end()

    def end_stream(self, final_text: str, status: str) -> None:
        bubble = self.shown.stream
        if bubble is None:
            return
        self.shown.stream = None
        index = next(i for i, b in enumerate(self.shown.bubbles) if b is bubble)
        follow = self.is_at_bottom()
        self._replace(index, Bubble(None, "assistant", bubble.who, final_text, bubble.timestamp, status))
        if follow:
            self.scroll_to_end()
        if self.pager.redraw_waiting:
            self.pager.redraw_all()

    @property
    def streaming_text(self) -> str:
        return self.shown.stream.text if self.shown.stream is not None else ""

    # -- appearance -------------------------------------------------------------------------------
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
            self._install_avatars(self.document())

        def draw() -> tuple[QImage, QImage]:
            size = AVATAR_PX * 2
            return avatar_image(name, picture, size), placeholder_image(you, size)

        def drawn(images: tuple[QImage, QImage]) -> None:
            if job != self._avatar_job:
                return  # another persona or language since
            self._avatars_for = (name, picture)
            persona, user = (QPixmap.fromImage(image) for image in images)
            self._avatars = {"avatar:persona": persona, "avatar:user": user}
            self._install_avatars(self.document())
            self.viewport().update()

        run_in_background(draw, while_open(self, drawn), lambda _message: None)

    def _install_avatars(self, document: QTextDocument) -> None:
        for url, picture in self._avatars.items():  # a fresh document has no resources
            document.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), picture)

    def retranslate(self) -> None:
        """The person's bubbles say "You" and the links speak the language chosen now: drawn again."""
        self.latest_button.setToolTip(tr("Jump to the latest message"))
        if tr("You") != self._you:  # another first letter in another language
            self._make_avatars()
        if self.shown.bubbles:
            self.pager.redraw_all()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.shown.bubbles:  # light <-> dark
            self.pager.redraw_all()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.scroller.place_latest_button()

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
            elif kind == "tools":  # a reply's tool calls, folded or open
                self.toggle_tools(message_id)
            elif kind == "speak":  # any time, a reply streaming or not
                self.replay_requested.emit(message_id)
            else:
                self.action.emit(kind, message_id)
        elif url.scheme() in ("http", "https", "mailto"):  # never a file: or another app's scheme
            QDesktopServices.openUrl(url)
