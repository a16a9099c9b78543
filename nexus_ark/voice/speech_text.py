"""What of a reply is read aloud: its words, not its markup (issue 36).

speakable() takes a reply (or one sentence of it, as the speech queue feeds it) in Markdown and returns the
text a voice should say, in Japanese or English:
- fenced code blocks (``` and ~~~, an unclosed one to the end) and `inline code` are left out: code read
  aloud is noise, and the window shows it;
- links say their text, images their description; bare URLs, <autolinks> and link definitions are left out;
- headings, emphasis, strike-through, block quotes, list bullets and numbers, task boxes and rules lose
  their marks; a table row is read as its cells ("a, b"; "a、b" in Japanese), its separator row not at all;
- emoji and other pictographs (😀 ♪ ★ ❤️ 🇯🇵) are not read, nor are the app's folded tool lines
  ("⚙ Used helper:weather — show") and the text protocol's <tool_call>/<tool_result> blocks;
- names the persona knows are replaced by their readings (田中 -> たなか, "Siobhan" -> "Shivawn"): whole
  names only (a Latin-letter name not inside a longer word), the longest name first.
Text with nothing left to say (only code, a link, an emoji) comes back as "".
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Mapping

_FENCED = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.M | re.S)
_TOOL_BLOCKS = re.compile(r"<(tool_call|tool_result)\b[^>]*>.*?(?:</\1>|\Z)", re.S)
_TOOL_FOLD = re.compile(r"^[ \t]*⚙.*$", re.M)  # the window's folded tool line, in any language
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_LINK_DEFINITION = re.compile(r"^[ \t]*\[[^\]]+\]:[ \t]*\S+.*$", re.M)
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>", re.I)
# A URL is ASCII: it ends where Japanese text or white space begins; closing punctuation is not part of it.
_URL = re.compile(r"(?<![A-Za-z0-9])(?:(?:https?|ftp)://|www\.)[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%()]+", re.I)
_URL_TAIL = ".,;:!?')]"
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*?)[ \t#]*$", re.M)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_BULLET = re.compile(r"^[ \t]*(?:(?:[-*+•・]|\d{1,3}[.)])[ \t]+)+(?:\[[ xX]\][ \t]+)?", re.M)
_RULE = re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$", re.M)
_TABLE_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M)
_TABLE_ROW = re.compile(r"^[ \t]*\|(.*\|.*?)\|?[ \t]*$", re.M)
# Emphasis: the marks hug the words (a lone "*" in "5 * 3" or snake_case's "_" is left alone).
_EMPHASIS = (
    re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1"),
    re.compile(r"(?<![A-Za-z0-9])(_{1,3})(?=\S)(.+?)(?<=\S)\1(?![A-Za-z0-9])"),
    re.compile(r"(~~)(?=\S)(.+?)(?<=\S)\1"),
)
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~>])")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|（\s*）|「\s*」|\[\s*\]")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"[ \t]+([.,!?;:)。、！？）])")
_SPACES = re.compile(r"[ \t\u3000]+")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_WORD_CHAR = re.compile(r"[A-Za-z0-9]")
_CLOCK_TIME = re.compile(r"(?<![0-9:])([0-2]?[0-9]):([0-5][0-9])(?![0-9:])")


def speakable(text: str, readings: Mapping[str, str] | None = None) -> str:
    """The words of `text` to say aloud (see the module's docstring); "" when nothing is left to say."""
    text = _drop_code_and_tools(text.replace("\r\n", "\n"))
    text = _links_to_words(text)
    text = _blocks_to_words(text)
    text = _inline_to_words(text)
    text = _without_pictographs(text)
    if readings:
        text = with_readings(text, readings)
    return _tidy(text)


def _drop_code_and_tools(text: str) -> str:
    text = _FENCED.sub("", text)
    text = _TOOL_BLOCKS.sub("", text)
    text = _TOOL_FOLD.sub("", text)
    return _INLINE_CODE.sub("", text)


def _links_to_words(text: str) -> str:
    text = _LINK_DEFINITION.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _FOOTNOTE.sub("", text)
    text = _AUTOLINK.sub("", text)
    return _URL.sub(_url_tail, text)


def _url_tail(found: re.Match[str]) -> str:
    """A URL is left out, but the punctuation that closes the sentence after it stays ("see x.com/a." ->
    "see ."); an unbalanced ")" belongs to the text around it, not to the URL."""
    url = found.group(0)
    kept = len(url.rstrip(_URL_TAIL))
    tail = url[kept:]
    if url[:kept].count("(") > url[:kept].count(")") and tail.startswith(")"):
        tail = tail[1:]
    return tail


def _blocks_to_words(text: str) -> str:
    text = _TABLE_SEPARATOR.sub("", text)
    text = _TABLE_ROW.sub(_table_row, text)
    text = _RULE.sub("", text)
    text = _HEADING.sub(r"\1", text)
    text = _QUOTE.sub("", text)
    return _BULLET.sub("", text)


def _table_row(found: re.Match[str]) -> str:
    cells = [cell.strip() for cell in found.group(1).split("|")]
    cells = [cell for cell in cells if cell]
    return ("、" if any(_JAPANESE.search(cell) for cell in cells) else ", ").join(cells)


def _inline_to_words(text: str) -> str:
    text = _HTML_TAG.sub(" ", text)
    for pattern in _EMPHASIS:
        previous = None
        while previous != text:  # nested marks (**a *b* c**) come off one layer at a time
            previous, text = text, pattern.sub(r"\2", text)
    text = _ESCAPED.sub(r"\1", text)
    return html.unescape(text)


def _is_pictograph(ch: str) -> bool:
    """Emoji and symbols read as noise: pictographs (So: 😀 ♪ ★ ❤ ⚙ and the flags' regional letters),
    skin-tone modifiers (Sk in U+1F3FB-1F3FF), variation selectors, the zero-width joiner, keycaps."""
    code = ord(ch)
    if code in (0x200D, 0x20E3, 0xFE0E, 0xFE0F) or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:
        return True
    return unicodedata.category(ch) == "So"


def _without_pictographs(text: str) -> str:
    return "".join(" " if _is_pictograph(ch) else ch for ch in text)


def with_readings(text: str, readings: Mapping[str, str]) -> str:
    """Each known name replaced by its reading, in one pass (a reading is never read again as a name).
    Longest names first, so 田中太郎 wins over 田中; a name's Latin-letter ends must be word ends ("Ann"
    is not replaced inside "Anna"); Latin-letter names match in any case."""
    wanted = {
        name.strip(): reading.strip()
        for name, reading in readings.items()
        if name.strip() and reading.strip()
    }
    if not wanted:
        return text
    by_key = {name.casefold(): reading for name, reading in wanted.items()}
    parts = []
    for name in sorted(wanted, key=len, reverse=True):
        before = r"(?<![A-Za-z0-9])" if _WORD_CHAR.match(name[0]) else ""
        after = r"(?![A-Za-z0-9])" if _WORD_CHAR.match(name[-1]) else ""
        parts.append(f"{before}{re.escape(name)}{after}")
    pattern = re.compile("|".join(parts), re.IGNORECASE)
    return pattern.sub(lambda found: by_key.get(found.group(0).casefold(), found.group(0)), text)


def _japanese_time(found: re.Match[str]) -> str:
    hours, minutes = int(found.group(1)), int(found.group(2))
    return f"{hours}時" + (f"{minutes}分" if minutes else "")


def _tidy(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        line = _EMPTY_BRACKETS.sub("", line)
        line = _SPACES.sub(" ", line)
        line = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", line).strip()
        if _JAPANESE.search(line):  # Open JTalk reads "15:30" as "じゅうご、コロン、さんじゅう"
            line = _CLOCK_TIME.sub(_japanese_time, line)
        if any(unicodedata.category(ch)[0] in "LN" for ch in line):
            lines.append(line)
    return "\n".join(lines)
