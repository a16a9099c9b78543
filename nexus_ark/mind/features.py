"""Hashed word and character features: the lexical half of the emotion head.

e5's sentence vector alone reads "thanks!!" and "ugh" less sharply than the words themselves do, so the
head adds a linear term on hashed unigrams and bigrams of tokens. A token is a run of Latin letters/digits
or any other single character (a kanji, a kana, an emoji, "!"), so Japanese needs no word segmenter:
its character bigrams carry words like 怖い or 疲れ. Latin words add their character n-grams, so
"disgusting", "disgusted" and Reddit's misspellings share features ("#disg"). The head file names which
(`lex_char_ns`, `lex_char_min_word`; the shipped head: 3- to 5-grams of words of four letters or more,
older heads: 4-grams of words of five or more). Out of fold on GoEmotions train they added 0.003-0.006
Ekman macro-F1 over 4-grams in every comparison (docs/benchmarks.md, Emotion). is_japanese() says where
the head's Japanese-only term applies. crc32, not hash(): Python salts str hashes per process.
"""

from __future__ import annotations

import itertools
import re
import zlib

import numpy as np

_TOKEN = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")
# Hiragana, katakana (full and half width) and CJK ideographs: a text with any of them is read as Japanese.
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
# A head made before its file named its character n-grams used these (emotion.py reads the head's own).
CHAR_NS = (4,)
CHAR_MIN_WORD = 5  # shorter words are covered by their unigram


def is_japanese(text: str) -> bool:
    """Whether the head's Japanese-only term applies (emotion.py): any kana or kanji, so mixed
    Japanese/English chat counts as Japanese."""
    return _JAPANESE.search(text) is not None


def lexical_features(
    text: str,
    buckets: int,
    char_ns: tuple[int, ...] = CHAR_NS,
    char_min_word: int = CHAR_MIN_WORD,
) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indices, values): each distinct unigram, bigram and character n-gram (of Latin words of
    char_min_word letters or more) once, scaled to unit length."""
    tokens = _TOKEN.findall(text.lower())
    grams = set(tokens) | {f"{a} {b}" for a, b in itertools.pairwise(tokens)}
    for token in tokens:
        if len(token) >= char_min_word:
            word = f"<{token}>"  # marks the word's start and end: "<dis" is a prefix, "ing>" a suffix
            for n in char_ns:
                grams |= {"#" + word[i : i + n] for i in range(len(word) - n + 1)}
    if not grams:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    index = np.array([zlib.crc32(g.encode("utf-8")) % buckets for g in sorted(grams)], np.int64)
    return index, np.full(len(index), 1.0 / np.sqrt(len(index)), np.float32)
