"""The conversation: one framed bubble per message, Markdown rendered (while it streams too), a page of
history at a time.

The view holds a window of the conversation (at most MAX_BUBBLES): scrolling to its top asks for the page
before (need_older), to its bottom for the page after when it shows an older stretch (need_newer); the far
end is dropped so years of history never sit in one document. Links under each bubble (copy, regenerate,
edit, delete, ‹ n/m ›) emit `action`; copy is handled here. A streaming reply re-renders only its own frame.

The view is put together from one mixin per job, each in its own module: bubble.py (a message and how
its bubble is drawn), chat_pages.py (pages drawn a few bubbles a turn, the far end dropped),
chat_document.py (bubbles as frames in the document), chat_scrolling.py (following the end, edges, the
jump-to-latest button), chat_messages.py (single messages and the streaming reply). Here: the state they
share, avatars, search highlights and links.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QImage,
    QPixmap,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QTextBrowser, QTextEdit, QToolButton

from ui.chat.bubble import AVATAR_PX, Bubble, BubbleDrawing
from ui.chat.chat_document import ChatDocument
from ui.chat.chat_messages import ChatMessages
from ui.chat.chat_pages import ChatPages
from ui.chat.chat_scrolling import ChatScrolling
from ui.util.avatars import avatar_image, placeholder_image
from ui.util.i18n import tr
from ui.util.tasks import run_in_background, while_open


class ChatView(ChatMessages, ChatPages, ChatScrolling, ChatDocument, BubbleDrawing, QTextBrowser):
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
            else:
                self.action.emit(kind, message_id)
        elif url.scheme() in ("http", "https", "mailto"):  # never a file: or another app's scheme
            QDesktopServices.openUrl(url)
