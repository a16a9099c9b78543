"""Hashed word and character features: the lexical half of the emotion head.

e5's sentence vector alone reads "thanks!!" and "ugh" less sharply than the words themselves do, so the
head adds a linear term on hashed unigrams and bigrams of tokens. A token is a run of Latin letters/digits
or any other single character (a kanji, a kana, an emoji, "!"), so Japanese needs no word segmenter:
its character bigrams carry words like 怖い or 疲れ. Latin words of five letters or more add their
character 4-grams, so "disgusting", "disgusted" and Reddit's misspellings share features ("#disg")
(GoEmotions train, out of fold, a 12-label head: Ekman macro-F1 0.547 without them, 0.559 with them;
3- to 5-grams reached 0.565 there but cost the Japanese check 2 points, docs/benchmarks.md).
crc32, not hash(): Python salts str hashes per process.
"""

from __future__ import annotations

import itertools
import re
import zlib

import numpy as np

_TOKEN = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")
_CHAR_NS = (4,)
_CHAR_MIN_WORD = 5  # shorter words are covered by their unigram


def lexical_features(text: str, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indices, values): each distinct unigram, bigram and character n-gram once, scaled to unit
    length."""
    tokens = _TOKEN.findall(text.lower())
    grams = set(tokens) | {f"{a} {b}" for a, b in itertools.pairwise(tokens)}
    for token in tokens:
        if len(token) >= _CHAR_MIN_WORD:
            word = f"<{token}>"  # marks the word's start and end: "<dis" is a prefix, "ing>" a suffix
            for n in _CHAR_NS:
                grams |= {"#" + word[i : i + n] for i in range(len(word) - n + 1)}
    if not grams:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    index = np.array([zlib.crc32(g.encode("utf-8")) % buckets for g in sorted(grams)], np.int64)
    return index, np.full(len(index), 1.0 / np.sqrt(len(index)), np.float32)
