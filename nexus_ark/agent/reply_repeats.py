"""A member's reply that repeats another member's line (issue 32): in a room the bundled 135M model answered
with what the member before it had just said ("I'm glad to hear about your recent hike!" twice). Such a
reply is neither shown nor stored as new: agent/room_turn.py holds it back while it may be a copy and drops
it; the room withdraws what streamed of a paraphrase.

Two tests, either is enough:
- by words: the reply's words are nearly all another line's, in nearly the same number (a copy with a
  word or two changed, its punctuation or case aside); a short line ("Thank you!") may be said twice;
- by meaning: the reply's e5 embedding is as close to another line's as a paraphrase is (the same line in
  other words), with the bundled multilingual-e5-small. Measured on it (passage embeddings, cosine): a copy
  with a word added 0.998, paraphrases 0.95-0.99, the same idea reworded 0.97; the same line in Japanese
  0.92 (below the threshold: left to the words' test, which it escapes); members' different answers to the
  same question 0.84-0.89; unrelated lines 0.79.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from nexus_ark.providers.embedders import Embedder

MIN_WORDS = 4  # a line this short may be said twice ("Thank you!", "That sounds lovely.")
WORD_OVERLAP = 0.8  # share of the longer line's words the two have in common
MEANING = 0.93  # e5 cosine similarity at which two lines say the same thing (see above)

_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def words(text: str) -> list[str]:
    """Words, casefolded; Japanese (no spaces) as its characters, so a copied Japanese line counts too."""
    out: list[str] = []
    for word in _WORD.findall(text.casefold()):
        out.extend(list(word) if _CJK.search(word) else [word])
    return out


def repeats_by_words(reply: str, line: str) -> bool:
    """The reply says the other line again, nearly word for word."""
    mine, theirs = words(reply), words(line)
    if min(len(mine), len(theirs)) < MIN_WORDS:
        return False
    common = sum(min(mine.count(w), theirs.count(w)) for w in set(mine))
    return common / max(len(mine), len(theirs)) >= WORD_OVERLAP


def repeated_line(reply: str, lines: Sequence[str], embedder: Embedder | None = None) -> int | None:
    """Which of `lines` (others' lines in the room) the reply repeats, by words or by meaning; None: none.
    Without an embedder (none configured, or it failed) words alone decide."""
    if len(words(reply)) < MIN_WORDS:
        return None
    for i, line in enumerate(lines):
        if repeats_by_words(reply, line):
            return i
    candidates = [i for i, line in enumerate(lines) if len(words(line)) >= MIN_WORDS]
    if embedder is None or not candidates:
        return None
    vectors = embedder.embed_passages([reply, *(lines[i] for i in candidates)])
    scores = np.asarray(vectors[1:]) @ np.asarray(vectors[0])
    best = int(np.argmax(scores))
    return candidates[best] if float(scores[best]) >= MEANING else None


def may_become_copy(shown: str, lines: Sequence[str]) -> bool:
    """While a reply streams: its words so far are the start of another line's (hold it back; it may turn
    out a copy, which is never shown)."""
    mine = words(shown)
    if not mine:
        return True
    for line in lines:
        theirs = words(line)
        if len(theirs) >= MIN_WORDS and theirs[: len(mine)] == mine[: len(theirs)]:
            return True
    return False
