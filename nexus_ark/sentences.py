"""Where sentences end, the one rule for it (English and Japanese), and a text cut short taken back to its
last whole sentence: for replies, summaries and structured answers that a token limit or a schema's
maxLength stopped mid-word (issue 21: never stored as if whole).

Every splitter in the app is this one (issue 34): the reply streamed a sentence at a time
(agent.reply_shape), a prompt section cut to its budget (agent.prompt), a claim checked against memory
(dreaming.grounding), a detail quoted in a message written first (runtime.first_words).
"""

from __future__ import annotations

import re

# A title before a name is no sentence end ("Mr. Sato", "Dr. Rose"): each lookbehind is fixed-width.
_NOT_A_TITLE = r"(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bDr)(?<!\bSt)(?<!\bProf)"
# . ! ? … (and "...") with the quotes, brackets and emphasis that close after them: an end when white
# space follows (a decimal point or "e.g." inside a word is not).
_LATIN_END = _NOT_A_TITLE + r"[.!?…]+[\"'”’)\]*_]*"
# 。！？ with the closing brackets after them (「…。」): an end as they stand, since Japanese sets no
# space between sentences.
_CJK_END = r"[。！？]+[」』）)】〉》”’]*"

# Where a sentence ends: a Latin end followed by white space, a full-width end (and the white space after
# it), or a line break. A match's end is where the next sentence starts.
BOUNDARY = re.compile(rf"{_LATIN_END}\s+|{_CJK_END}\s*|\n+")
_ENDS_SENTENCE = re.compile(rf"(?:{_LATIN_END}|{_CJK_END})\s*$")


def sentences(text: str, *, flat: bool = False) -> list[str]:
    """`text` split where sentences end.

    By default each piece keeps its trailing space or line break, so the pieces join back into `text`
    exactly: what streaming and cutting need. `flat=True` reads the sentences one by one instead (a claim
    to check, a detail to quote): white space, line breaks included, is collapsed to single spaces first,
    each sentence is stripped, and none is empty."""
    if flat:
        return [s.strip() for s in sentences(" ".join(text.split())) if s.strip()]
    pieces, start = [], 0
    for found in BOUNDARY.finditer(text):
        if found.end() > start:
            pieces.append(text[start : found.end()])
            start = found.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence of `text`, its trailing white space left out: `text[:end]` is a
    beginning of whole sentences, spacing and paragraph breaks as written."""
    ends, start = [], 0
    for piece in sentences(text):
        start += len(piece)
        ends.append(start - (len(piece) - len(piece.rstrip())))
    return ends


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
