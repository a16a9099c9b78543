"""Where sentences end, and a text cut short taken back to its last whole sentence: for replies, summaries
and structured answers that a token limit or a schema's maxLength stopped mid-word (issue 21: never stored
as if whole). English and Japanese."""

from __future__ import annotations

import re

# Where a sentence ends in streamed text: . ! ? … (and closing quotes) followed by whitespace, full-width
# 。！？ (no space follows in Japanese), or a line break. A match's end is where the next sentence starts.
BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]*_]*\s+|[。！？]+[」』）)]*\s*|\n+")
_ENDS_SENTENCE = re.compile(r"(?:[.!?…]+[\"'”’)\]*_]*|[。！？]+[」』）)]*)\s*$")


def sentences(text: str) -> list[str]:
    """`text` split where sentences end (each piece keeps its trailing space or line break)."""
    pieces, start = [], 0
    for found in BOUNDARY.finditer(text):
        if found.end() > start:
            pieces.append(text[start : found.end()])
            start = found.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def ends_sentence(text: str) -> bool:
    return bool(_ENDS_SENTENCE.search(text.strip()))


def trim_to_sentence(text: str) -> tuple[str, str]:
    """A reply the token limit cut: its whole sentences and the unfinished tail. With no whole sentence,
    the text up to its last whole word, ending in "…" (it trails off, and says so)."""
    parts = sentences(text)
    tail = parts.pop() if parts and not ends_sentence(parts[-1]) else ""
    kept = "".join(parts).rstrip()
    if kept:
        return kept, tail
    head, _, rest = tail.rstrip().rpartition(" ")
    head = head.rstrip(" ,;:-—、") if head else ""
    if not head:
        return (tail.rstrip() + "…" if tail.strip() else ""), ""
    return head + "…", rest
