"""One section of the soul before and after a change, side by side: two read-only panes, the changed lines
on a tint of the text background (removed on the left, added on the right) and the changed words inside
them tinted more, struck through on the left and underlined on the right, so the difference is not told
by colour alone. The tints are mixed from the palette drawn now and drawn again when the theme changes."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QGridLayout, QLabel, QPlainTextEdit, QTextEdit, QWidget

from ui.util import theme

ADDED, REMOVED = "#2e9e4f", "#d0453a"  # mixed into the text background, never used as they are
# A token: a run of Latin letters or digits, one character of a script written without spaces (Japanese,
# Chinese), a run of spaces, or any other single character.
_TOKEN = re.compile(r"[^\W\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+|\s+|.", re.DOTALL)
WORDS_BELOW = 0.25  # two blocks that share less than this are marked whole, not word by word


@dataclass(frozen=True)
class Span:
    start: int  # character offsets in the text as shown (Python str indices)
    end: int


@dataclass(frozen=True)
class Marks:
    """What differs in one side of a comparison: whole lines (by number) and the words inside them."""

    lines: tuple[int, ...]
    words: tuple[Span, ...]


def shown(text: str) -> str:
    """A section's text as a pane shows it (one kind of line end)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def compare(old: str, new: str) -> tuple[Marks, Marks]:
    """What changed from `old` to `new`: the lines and words to mark in each."""
    old, new = shown(old), shown(new)
    before, after = old.split("\n"), new.split("\n")
    starts_before, starts_after = _line_starts(before), _line_starts(after)
    lines_a: list[int] = []
    lines_b: list[int] = []
    words_a: list[Span] = []
    words_b: list[Span] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines_a += [i for i in range(i1, i2) if before[i].strip()]
        lines_b += [j for j in range(j1, j2) if after[j].strip()]
        block_a = "\n".join(before[i1:i2])
        block_b = "\n".join(after[j1:j2])
        at_a = starts_before[i1] if i1 < len(before) else len(old)
        at_b = starts_after[j1] if j1 < len(after) else len(new)
        spans_a, spans_b = _words(block_a, block_b)
        words_a += [Span(at_a + s.start, at_a + s.end) for s in spans_a]
        words_b += [Span(at_b + s.start, at_b + s.end) for s in spans_b]
    return Marks(tuple(lines_a), tuple(words_a)), Marks(tuple(lines_b), tuple(words_b))


def _line_starts(lines: list[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    return starts


def _words(a: str, b: str) -> tuple[list[Span], list[Span]]:
    """The changed words of two blocks of lines (a block with nothing on the other side: all of it)."""
    tokens_a, tokens_b = _TOKEN.findall(a), _TOKEN.findall(b)
    matcher = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False)
    if not a.strip() or not b.strip() or matcher.ratio() < WORDS_BELOW:
        return _visible(a, [Span(0, len(a))]), _visible(b, [Span(0, len(b))])
    offsets_a, offsets_b = _offsets(tokens_a), _offsets(tokens_b)
    spans_a: list[Span] = []
    spans_b: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            spans_a.append(Span(offsets_a[i1], offsets_a[i2]))
        if j2 > j1:
            spans_b.append(Span(offsets_b[j1], offsets_b[j2]))
    return _visible(a, _joined(a, spans_a)), _visible(b, _joined(b, spans_b))


def _offsets(tokens: list[str]) -> list[int]:
    offsets, at = [0], 0
    for token in tokens:
        at += len(token)
        offsets.append(at)
    return offsets


def _joined(text: str, spans: list[Span]) -> list[Span]:
    """Neighbouring changes with only spaces between them read as one change."""
    out: list[Span] = []
    for span in spans:
        if out and not text[out[-1].end : span.start].strip(" \t"):
            out[-1] = Span(out[-1].start, span.end)
        else:
            out.append(span)
    return out


def _visible(text: str, spans: list[Span]) -> list[Span]:
    """Each span cut at line ends and trimmed of spaces at either end (a tint on nothing says nothing)."""
    out: list[Span] = []
    for span in spans:
        at = span.start
        for part in text[span.start : span.end].split("\n"):
            stripped = part.strip()
            if stripped:
                begin = at + part.index(stripped)
                out.append(Span(begin, begin + len(stripped)))
            at += len(part) + 1
    return out


@dataclass(frozen=True)
class Tints:
    line: QColor
    word: QColor

    @classmethod
    def of(cls, palette: QPalette, accent: str) -> Tints:
        base = palette.color(QPalette.ColorRole.Base)
        line, word = (0.28, 0.5) if base.lightness() < 128 else (0.16, 0.34)
        return cls(theme.mix(base, accent, line), theme.mix(base, accent, word))


def _utf16(text: str, index: int) -> int:
    """A Python index into `text` as Qt counts it (UTF-16 code units: an emoji is two)."""
    return len(text[:index].encode("utf-16-le")) // 2


class DiffPane(QPlainTextEdit):
    """A read-only pane that marks what changed in its text (on the side `accent` says: added or removed)."""

    def __init__(self, accent: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.accent = accent
        self.marks = Marks((), ())
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )

    def show_text(self, text: str, marks: Marks) -> None:
        if self.toPlainText() != text:
            self.setPlainText(text)
        self.marks = marks
        self._mark()

    def tints(self) -> Tints:
        return Tints.of(self.palette(), self.accent)

    def _mark(self) -> None:
        tints = self.tints()
        text = self.toPlainText()
        document = self.document()
        selections: list[QTextEdit.ExtraSelection] = []
        for number in self.marks.lines:
            block = document.findBlockByNumber(number)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(tints.line)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        for span in self.marks.words:
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(tints.word)
            if self.accent == REMOVED:
                fmt.setFontStrikeOut(True)
            else:
                fmt.setFontUnderline(True)
            selection.format = fmt
            cursor = QTextCursor(document)
            cursor.setPosition(_utf16(text, span.start))
            cursor.setPosition(_utf16(text, span.end), QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: tints of the new palette
            self._mark()


class SideBySide(QWidget):
    """The section now (left) and as it would become (right), each under its caption, scrolled together."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.before = DiffPane(REMOVED)
        self.before.setObjectName("soulNow")
        self.after = DiffPane(ADDED)
        self.after.setObjectName("soulProposed")
        self.before_caption = QLabel()
        self.before_caption.setObjectName("soulNowCaption")
        self.after_caption = QLabel()
        self.after_caption.setObjectName("soulProposedCaption")
        for caption, pane in ((self.before_caption, self.before), (self.after_caption, self.after)):
            caption.setBuddy(pane)
            font = caption.font()
            font.setBold(True)
            caption.setFont(font)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.before_caption, 0, 0)
        grid.addWidget(self.after_caption, 0, 1)
        grid.addWidget(self.before, 1, 0)
        grid.addWidget(self.after, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(1, 1)
        self._syncing = False
        self.before.verticalScrollBar().valueChanged.connect(lambda v: self._follow(self.after, v))
        self.after.verticalScrollBar().valueChanged.connect(lambda v: self._follow(self.before, v))

    def set_texts(self, old: str, new: str) -> None:
        """Compare the two and show them marked."""
        old, new = shown(old), shown(new)
        marks_old, marks_new = compare(old, new)
        self.before.show_text(old, marks_old)
        self.after.show_text(new, marks_new)

    def _follow(self, pane: DiffPane, value: int) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            pane.verticalScrollBar().setValue(value)
        finally:
            self._syncing = False
