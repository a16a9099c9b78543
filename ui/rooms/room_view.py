"""A room's lines as the window shows them: a bubble per line with its speaker's avatar, name and colour
(each member its own, by its place in the room; the person's bubbles on the right), the words as Markdown,
and the answer being written streamed into its own bubble: each coalesced piece lays out only that bubble."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass

from PySide6.QtCore import QDate, QDateTime, QEvent, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QColor,
    QImage,
    QPalette,
    QPixmap,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFrame,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QTextBrowser

from nexus_ark.agent.room_turn import HeardLine
from ui.util.chat_markdown import to_document
from ui.util.i18n import N_, tr

AVATAR_PX = 28
MAX_LINES = 300  # bubbles kept in the view; older ones leave from the top (the journal keeps them all)
# Drawing the history takes this much of a main-loop turn, then lets it run: 200 lines drawn at once held
# the loop 75 ms in bench/room_stall.py (60-word lines), 240-520 ms with longer lines and cold fonts.
HISTORY_BUDGET_S = 0.002
# A hue per place in the room (up to six members), far apart around the wheel.
MEMBER_HUES = (28, 150, 285, 345, 55, 185)  # none near the person's blue (about 220)
_NOTES = {"stopped": N_("stopped"), "error": N_("the model failed")}
_PERSON = {"light": ("#e8f0fe", "#1a56c4"), "dark": ("#25344a", "#8ab4f8")}
_MUTED = {"light": "#666666", "dark": "#a8a8a8"}  # 4.5:1 on every bubble
_NOTE = {"light": "#aa3333", "dark": "#f28b82"}


def member_colours(place: int, dark: bool) -> tuple[str, str]:
    """(the bubble's background, the name's colour) of the member at this place in the room."""
    hue = MEMBER_HUES[place % len(MEMBER_HUES)]
    if dark:
        return QColor.fromHsl(hue, 50, 52).name(), QColor.fromHsl(hue, 170, 175).name()
    return QColor.fromHsl(hue, 130, 240).name(), QColor.fromHsl(hue, 200, 60).name()


def _when(created_at: str | None) -> str:
    """The time of a line today, with its date on another day (local time)."""
    moment = QDateTime.fromString(created_at or "", Qt.DateFormat.ISODateWithMs)
    if not moment.isValid():
        moment = QDateTime.currentDateTime()
    moment = moment.toLocalTime()
    return moment.toString("HH:mm" if moment.date() == QDate.currentDate() else "yyyy-MM-dd HH:mm")


def _put(cursor: QTextCursor, text: str) -> None:
    """Words as Markdown in place of the selection. The block left where the selection was may be a list's
    item (an earlier piece of the answer ended in a list): made plain first, or the answer's first paragraph
    would show a bullet."""
    cursor.removeSelectedText()
    cursor.setBlockFormat(QTextBlockFormat())  # out of any list
    cursor.insertFragment(QTextDocumentFragment(to_document(text)))


@dataclass(eq=False)
class ShownLine:
    author: str | None  # a member's slug; None: the person
    name: str
    text: str
    created_at: str | None = None
    status: str = "complete"  # "streaming" while it is written, "stopped", "error"
    frame: QTextFrame | None = None


class RoomView(QTextBrowser):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("roomView")
        self.setOpenLinks(False)
        self.document().setDocumentMargin(12)
        self.document().setUndoRedoEnabled(False)
        self.shown: list[ShownLine] = []
        self._places: dict[str, int] = {}  # member slug -> its place in the room (its colour)
        self._avatars: dict[str, QPixmap] = {}
        self._answer: ShownLine | None = None
        self._placeholder = False
        self._undrawn: list[ShownLine] = []  # history still to draw, oldest first (drawn from the newest up)
        self._history_timer = QTimer(self, interval=0)
        self._history_timer.timeout.connect(self._draw_history)

    # -- who is in the room -------------------------------------------------------------------------
    def set_members(self, members: list[tuple[str, QImage]], you: QImage) -> None:
        """The members in the room's order (their colours) with their avatars, and the person's. A member
        who left keeps its avatar beside its lines."""
        self._places = {slug: place for place, (slug, _) in enumerate(members)}
        self._avatars.update({f"avatar:{slug}": QPixmap.fromImage(image) for slug, image in members})
        self._avatars["avatar:you"] = QPixmap.fromImage(you)
        self._install_avatars()

    def _install_avatars(self) -> None:
        for url, picture in self._avatars.items():
            self.document().addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), picture)

    @property
    def dark(self) -> bool:
        return self.palette().color(QPalette.ColorRole.Base).lightness() < 128

    # -- lines ----------------------------------------------------------------------------------------
    def show_lines(self, lines: list[HeardLine]) -> None:
        """The room's history, in place of whatever was shown."""
        self._answer = None
        self.shown = [ShownLine(line.author, line.name, line.text, line.created_at) for line in lines]
        self._redraw()
        self.scroll_to_end()

    def show_placeholder(self, text: str) -> None:
        self._answer = None
        self.shown, self._undrawn = [], []
        self._history_timer.stop()
        color = _MUTED["dark" if self.dark else "light"]
        self.setHtml(f"<p align='center' style='color:{color}'><br><br>{html.escape(text)}</p>")
        self._install_avatars()
        self._placeholder = True

    def add_line(self, author: str | None, name: str, text: str, created_at: str | None = None) -> ShownLine:
        line = ShownLine(author, name, text, created_at)
        self._append(line)
        return line

    def _append(self, line: ShownLine) -> None:
        if self._placeholder:
            self.clear()
            self._install_avatars()
            self._placeholder = False
        follow = self.at_end() or line.author is None
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self._draw(cursor, line)
        self.shown.append(line)
        if len(self.shown) > MAX_LINES:
            oldest = self.shown.pop(0)
            if oldest in self._undrawn:
                self._undrawn.remove(oldest)
            self._remove(oldest)
        if follow:
            self.scroll_to_end()

    # -- the answer being written ----------------------------------------------------------------------
    @property
    def answering(self) -> str | None:
        """The member whose answer is being written, or None."""
        return self._answer.author if self._answer is not None else None

    def begin_answer(self, slug: str, name: str) -> None:
        self._answer = ShownLine(slug, name, "", status="streaming")
        self._append(self._answer)

    def append_answer(self, text: str) -> None:
        """More of the answer: only its bubble's words are set again."""
        answer = self._answer
        if answer is None:
            return
        answer.text += text
        if answer.frame is None:  # not drawn again yet (the theme switched): drawn whole when it is
            return
        follow = self.at_end()
        _put(self._body(answer.frame), answer.text)
        if follow:
            self.scroll_to_end()

    def end_answer(self, text: str, status: str) -> None:
        """The answer as it was kept (its final words, "complete", "stopped" or "error")."""
        answer, self._answer = self._answer, None
        if answer is None:
            return
        answer.text, answer.status = text, status
        if answer.frame is None:
            return
        follow = self.at_end()
        cursor = self._body(answer.frame)
        cursor.beginEditBlock()
        self._fill(cursor, answer)
        cursor.endEditBlock()
        if follow:
            self.scroll_to_end()

    def withdraw_answer(self) -> None:
        """The answer being written is taken off: it repeated another member's line (never stored)."""
        answer, self._answer = self._answer, None
        if answer is None:
            return
        self._remove(answer)
        if answer in self.shown:
            self.shown.remove(answer)

    # -- drawing --------------------------------------------------------------------------------------
    def _draw(self, cursor: QTextCursor, line: ShownLine) -> None:
        theme = "dark" if self.dark else "light"
        person = line.author is None
        if line.author is None:
            background, name_colour = _PERSON[theme]
        else:
            background, name_colour = member_colours(self._places.get(line.author, 0), theme == "dark")
        frame_format = QTextFrameFormat()
        frame_format.setBackground(QColor(background))
        frame_format.setPadding(8)
        frame_format.setBorder(0)
        frame_format.setTopMargin(4)
        frame_format.setBottomMargin(4)
        # The side away from the speaker stays open: the person's bubbles sit right, the members' left.
        frame_format.setLeftMargin(64 if person else 4)
        frame_format.setRightMargin(4 if person else 64)
        line.frame = cursor.insertFrame(frame_format)
        avatar = "avatar:you" if person else f"avatar:{line.author}"
        who = tr("You") if person else line.name
        when = _when(line.created_at)
        cursor.insertHtml(
            f"<img src='{avatar}' width='{AVATAR_PX}' height='{AVATAR_PX}' style='vertical-align:middle'>"
            f"&nbsp;<span style='color:{name_colour}; font-weight:600'>{html.escape(who)}</span>&nbsp;&nbsp;"
            f"<span style='color:{_MUTED[theme]}; font-size:small'>{html.escape(when)}</span>"
        )
        cursor.insertBlock()
        self._fill(cursor, line)

    def _fill(self, cursor: QTextCursor, line: ShownLine) -> None:
        """A bubble's words (or, before the first of them, a typing mark) and its note."""
        theme = "dark" if self.dark else "light"
        if line.text:
            _put(cursor, line.text)
        elif line.status == "streaming":
            cursor.insertHtml(f"<span style='color:{_MUTED[theme]}'>…</span>")
        else:
            cursor.removeSelectedText()
        note = _NOTES.get(line.status)
        if note:
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())  # a plain block, never a list's item
            cursor.insertHtml(
                f"<span style='color:{_NOTE[theme]}; font-style:italic'>({html.escape(tr(note))})</span>"
            )

    def _body(self, frame: QTextFrame) -> QTextCursor:
        """A bubble's words: from the block after its header to the frame's end, selected."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(frame.firstCursorPosition().block().next().position())
        cursor.setPosition(frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _remove(self, line: ShownLine) -> None:
        if line.frame is None:
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(line.frame.firstPosition() - 1)
        cursor.setPosition(line.frame.lastPosition() + 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        line.frame = None

    def _redraw(self) -> None:
        """Every bubble again (a palette or a language changed, or a new history), from the newest up, a
        few a main-loop turn: the latest words show at once and the window never stalls."""
        self.clear()
        self._placeholder = False
        self._install_avatars()
        for line in self.shown:
            line.frame = None
        self._undrawn = list(self.shown)
        self._draw_history()

    @property
    def drawing(self) -> bool:
        """History is still being drawn."""
        return bool(self._undrawn)

    def _draw_history(self) -> None:
        """Undrawn lines above the drawn ones for HISTORY_BUDGET_S, in one edit block (laid out once); the
        person reading the end stays there, one reading above keeps their words in place."""
        bar = self.verticalScrollBar()
        following, value, height = self.at_end(), bar.value(), bar.maximum()
        until = time.perf_counter() + HISTORY_BUDGET_S
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        drawn = 0
        while self._undrawn and (drawn == 0 or time.perf_counter() < until):
            cursor.setPosition(0)
            self._draw(cursor, self._undrawn.pop())
            drawn += 1
        cursor.endEditBlock()
        if following:
            self.scroll_to_end()
        else:
            bar.setValue(value + bar.maximum() - height)
        if self._undrawn:
            self._history_timer.start()
        else:
            self._history_timer.stop()

    def retranslate(self) -> None:
        if self.shown:
            follow = self.at_end()
            self._redraw()
            if follow:
                self.scroll_to_end()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.shown:  # light <-> dark
            self.retranslate()

    # -- scrolling ------------------------------------------------------------------------------------
    def at_end(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- what is shown, in words (tests and the screenshots' checks) ---------------------------------
    def texts(self) -> list[tuple[str, str]]:
        """(who, words) of every bubble shown, the person as "" ."""
        return [("" if line.author is None else line.name, line.text) for line in self.shown]
