"""What a reply's Markdown may do: only what the model clearly meant.

Small models start a line of speech with "- " or put "---" under a sentence; Markdown reads the first as a
one-item bullet list and the second as a heading. A list needs two items; a line of dashes is a rule.
Raw HTML is never rendered (the text is shown as written) and an image is shown as its address, so a
reply cannot pull in files or anything from the network.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument

_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])([ \t]|$)")
_UNDERLINE = re.compile(r"^ {0,3}(-{2,}|={2,})[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}([ \t]|$)")

FEATURES = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
    | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)


def unambiguous(text: str) -> str:
    """The text with the Markdown a model rarely means escaped: lone list items, setext underlines."""
    lines = text.split("\n")
    out: list[str] = []
    in_fence = False
    items = [_ITEM.match(line) is not None for line in lines]
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence:
            out.append(line)
            continue
        match = _ITEM.match(line)
        if match and not _has_neighbour_item(items, lines, i):
            indent, marker = match.group(1), match.group(2)
            line = indent + marker[:-1] + "\\" + marker[-1] + line[match.end(2) :]
        elif _UNDERLINE.match(line) and out and out[-1].strip():
            out.append("")  # "---" under a sentence: a rule, not a heading; "===": just a line
        out.append(line)
    return "\n".join(out)


# Scripts written without spaces between words: a line break inside their paragraph is no space.
_NO_SPACES = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_ENDS_NO_SPACES = re.compile(f"[{_NO_SPACES}]$")
_STARTS_NO_SPACES = re.compile(f"^[ \t]*[{_NO_SPACES}]")


def joined_without_spaces(text: str) -> str:
    """Lines of one Japanese (or Chinese) paragraph joined as written: Markdown turns the break between
    them into a space, which reads as a stray gap in the middle of a sentence (「…です。 雇われた…」).
    Hard breaks (two spaces or a backslash at the end) and fenced code stay as they are."""
    lines = text.split("\n")
    out: list[str] = []
    in_fence = False
    joining = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        if joining and not in_fence and _STARTS_NO_SPACES.match(line):
            out[-1] += line.lstrip(" \t")
        else:
            out.append(line)
        last = out[-1]
        # A heading is one line; a hard break (two spaces, a backslash) does not end in such a letter.
        joining = not in_fence and bool(_ENDS_NO_SPACES.search(last)) and not _HEADING.match(last)
    return "\n".join(out)


def _has_neighbour_item(items: list[bool], lines: list[str], i: int) -> bool:
    """Another list item next to this one (one blank line between is still the same list)."""
    for step in (-1, 1):
        j = i + step
        if 0 <= j < len(lines) and not lines[j].strip():
            j += step
        if 0 <= j < len(lines) and items[j]:
            return True
    return False


def to_document(text: str) -> QTextDocument:
    doc = QTextDocument()
    doc.setMarkdown(joined_without_spaces(unambiguous(text)), FEATURES)
    _images_as_words(doc)
    return doc


def _images_as_words(doc: QTextDocument) -> None:
    """A Markdown image becomes its address in words: drawing it would read a local file or the network."""
    images: list[tuple[int, int, str]] = []
    block = doc.begin()
    while block.isValid():
        pieces = block.begin()
        while not pieces.atEnd():
            fragment = pieces.fragment()
            pieces += 1
            if fragment.charFormat().isImageFormat():
                name = fragment.charFormat().toImageFormat().name()
                images.append((fragment.position(), fragment.length(), name))
        block = block.next()
    for position, length, name in reversed(images):
        cursor = QTextCursor(doc)
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"[{name}]", QTextCharFormat())
