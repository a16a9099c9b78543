"""Whether what a dream writes is supported by the messages it cites (issue 21, on every model).

A claim (an episode sentence, an entity fact, an insight, a question, a goal) is supported when
- every name and number in it is found in its sources (or is a speaker's name): a person, a place or a
  date the conversation never held is the commonest invention of a small model; and
- at least one of its content words, and COVER_MIN of them, are found in its sources, and
- it says what one of its sources says: the embedder's similarity of the claim to its closest source is at
  least SUPPORT_MIN (multilingual-e5-small; calibrated on bench/data/faithfulness, docs/benchmarks.md), or,
  with no embedder at hand, most of its content words are found in its sources.
What is not supported is refused, and each refusal is counted in the dream's report with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, Field

from nexus_ark.providers.embedders import Embedder
from nexus_ark.sentences import sentences

# Cosine of multilingual-e5-small passage vectors: a sentence restating a message scores 0.85-1.0, one the
# conversation never held (a hobby nobody mentioned, a family the person does not have) 0.78-0.83.
SUPPORT_MIN = 0.835
# Without an embedder: the share of a claim's content words that must be found in its sources.
WORDS_MIN = 0.6
# With one: at least this share (a paraphrase keeps a third of its words; an invention around a name
# brings mostly new ones).
COVER_MIN = 0.3

_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d+(?:[.,:/]\d+)*(?:st|nd|rd|th)?", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s?$")
# 'Speaker: "words"', 'Speaker: words' or the words alone: a quote (a speaker's name has no quote mark
# or colon in it).
_QUOTED = re.compile(r'^(?:([^":]{1,80}): )?"?(.+?)"?$')
KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")
# Words that open an English sentence without being names (a capital letter there proves nothing).
COMMON_WORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "again",
        "all",
        "also",
        "always",
        "an",
        "and",
        "another",
        "any",
        "are",
        "as",
        "ask",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "both",
        "but",
        "by",
        "can",
        "celebrate",
        "check",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "during",
        "each",
        "encourage",
        "even",
        "every",
        "find",
        "follow",
        "for",
        "from",
        "get",
        "give",
        "go",
        "had",
        "has",
        "have",
        "he",
        "help",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "however",
        "i",
        "i'm",
        "if",
        "in",
        "is",
        "it",
        "it's",
        "its",
        "just",
        "keep",
        "learn",
        "let",
        "like",
        "listen",
        "make",
        "maybe",
        "me",
        "mention",
        "more",
        "most",
        "my",
        "next",
        "no",
        "not",
        "now",
        "of",
        "offer",
        "on",
        "once",
        "one",
        "only",
        "or",
        "our",
        "perhaps",
        "plan",
        "remember",
        "remind",
        "said",
        "say",
        "see",
        "she",
        "should",
        "show",
        "since",
        "so",
        "some",
        "spend",
        "suggest",
        "support",
        "take",
        "talk",
        "tell",
        "thank",
        "thanks",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "today",
        "tomorrow",
        "tonight",
        "try",
        "until",
        "us",
        "was",
        "we",
        "went",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "yes",
        "yesterday",
        "you",
        "your",
        "be",
        "there's",
        "that's",
        "what's",
        "we're",
        "they're",
        "she's",
        "he's",
        "you're",
        "i've",
        "i'd",
        "i'll",
        "let's",
        "don't",
        "didn't",
        "doesn't",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ]
)
_STOP = COMMON_WORDS | frozenset(
    [
        "very",
        "really",
        "much",
        "many",
        "lot",
        "well",
        "good",
        "great",
        "time",
        "day",
        "days",
        "thing",
        "things",
        "way",
        "also",
        "been",
    ]
)


class Refusal(BaseModel):
    """One claim a dream did not write, and why."""

    stage: str
    text: str
    why: str


class GroundingReport(BaseModel):
    """What the check saw in one dream: claims checked, claims refused (each with its reason)."""

    checked: int = 0
    refused: int = 0
    refusals: list[Refusal] = Field(default_factory=list)

    def add(self, other: dict | GroundingReport) -> None:
        other = other if isinstance(other, GroundingReport) else GroundingReport.model_validate(other)
        self.checked += other.checked
        self.refused += other.refused
        self.refusals += other.refusals


def names_in(text: str) -> list[str]:
    """Names and numbers a claim asserts: capitalized words that are not common sentence openers, digits,
    katakana words (Japanese names of people, places and things)."""
    found = []
    for word in _WORD.findall(text):
        bare = _POSSESSIVE.sub("", word)
        if word[0].isdigit():
            found.append(word)
        elif bare[:1].isupper() and bare.casefold() not in COMMON_WORDS and len(bare) > 1:
            found.append(bare)
    return found + KATAKANA.findall(text)


def content_words(text: str) -> set[str]:
    return {w.casefold()[:6] for w in _WORD.findall(text) if len(w) >= 4 and w.casefold() not in _STOP}


class Grounding:
    """Checks claims against source texts by id; keeps its counts for the dream's report.

    `texts`: every source a claim may cite ("msg:N" → "Speaker: words"); `known`: words that need no
    source (the speakers' and the persona's names); `context`: texts a higher-level stage may rest on as
    well (the week's episodes and insights)."""

    def __init__(
        self,
        texts: dict[str, str],
        embedder: Embedder | None,
        *,
        known: Iterable[str] = (),
        context: Sequence[str] = (),
    ) -> None:
        self.texts = dict(texts)
        self.embedder = embedder
        self.known = {k.casefold() for k in known if k}
        self.context = [c for c in context if c.strip()]
        self._vectors: dict[str, np.ndarray] = {}
        self._claims: dict[str, np.ndarray] = {}
        self.report = GroundingReport()

    # -- the parts ---------------------------------------------------------------------------------
    def _prepare(self, keys: list[str]) -> None:
        """One batch for the sources not yet embedded (a day's messages: one call, not one each)."""
        if self.embedder is None:
            return
        todo = [k for k in keys if k not in self._vectors]
        if todo:
            vectors = self.embedder.embed_passages([self._source(k) for k in todo])
            self._vectors.update(zip(todo, vectors, strict=True))

    def prefetch(self, claims: Sequence[str]) -> None:
        """Embed claims in one batch (a call per sentence costs far more on a busy machine)."""
        todo = [c for c in dict.fromkeys(claims) if c not in self._claims]
        if self.embedder is not None and todo:
            self._claims.update(zip(todo, self.embedder.embed_passages(todo), strict=True))

    def _source(self, key: str) -> str:
        return self.texts[key] if key in self.texts else self.context[int(key.removeprefix("context:"))]

    def _keys(self, cited: Sequence[str], with_context: bool) -> list[str]:
        keys = [c for c in dict.fromkeys(cited) if c in self.texts] or list(self.texts)
        if with_context:
            keys += [f"context:{i}" for i in range(len(self.context))]
        return keys

    def similarity(self, claim: str, keys: Sequence[str]) -> tuple[float, list[str]]:
        """The claim's best similarity to the sources, and the sources at or above SUPPORT_MIN (best
        first)."""
        if self.embedder is None or not keys:
            return 0.0, []
        self._prepare(list(keys))
        self.prefetch([claim])
        vector = self._claims[claim]
        scores = [(float(self._vectors[k] @ vector), k) for k in keys]
        scores.sort(reverse=True)
        return scores[0][0], [k for s, k in scores if s >= SUPPORT_MIN]

    def why_unsupported(
        self, claim: str, cited: Sequence[str], *, names_only: bool = False, with_context: bool = False
    ) -> tuple[str, list[str]]:
        """'' and the supporting sources (msg ids first), or the reason the claim is not supported."""
        keys = self._keys(cited, with_context)
        if self._verbatim(claim, keys):
            return "", [k for k in keys if k.startswith("msg:")]
        pool = " ".join(self._source(k) for k in keys).casefold()
        missing = [
            n
            for n in dict.fromkeys(names_in(claim))
            if n.casefold() not in pool and n.casefold() not in self.known
        ]
        if missing:
            return f"not in its sources: {', '.join(missing)}", []
        if names_only:
            return "", []
        words = content_words(claim)
        found = {w for w in words if w in pool}
        if words and not found:  # not one word of it was said: whatever the similarity, it is not theirs
            return f"none of its words are in its sources ({', '.join(sorted(words))})", []
        if words and len(found) / len(words) < COVER_MIN:
            # e5 rates "Your brother Daichi ... will bring you a gift for your birthday" 0.90 against "My
            # brother Daichi called": a name carries the similarity; most of what it says is new.
            new = ", ".join(sorted(words - found))
            return f"most of its words are not in its sources ({new})", []
        if self.embedder is not None:
            best, supporting = self.similarity(claim, keys)
            if not supporting:
                return f"says what no source says (similarity {best:.2f} < {SUPPORT_MIN})", []
            return "", supporting
        if words and len(found) / len(words) < WORDS_MIN:
            return f"says what no source says ({len(found)} of {len(words)} words found)", []
        return "", [k for k in keys if k.startswith("msg:")]

    def _verbatim(self, claim: str, keys: Sequence[str]) -> bool:
        """A quote of its own source word for word ('Speaker: "words"', "…" where it was shortened): true
        by construction, whatever e5 makes of a greeting (issue 32: "Hey Dave!" scored 0.78-0.83 against
        its own message and was refused). The speaker it names must be one of the conversation's."""
        match = _QUOTED.match(" ".join(claim.split()))
        if match is None:
            return False
        speaker, words = match.group(1), match.group(2)
        sources = [" ".join(self._source(k).split()).casefold() for k in keys if k.startswith("msg:")]
        if (
            speaker
            and speaker.casefold() not in self.known
            and not any(s.startswith(f"{speaker.casefold()}:") for s in sources)
        ):
            return False
        pieces = [p.strip().casefold() for p in words.split("…") if p.strip()]
        return bool(pieces) and any(all(p in s for p in pieces) for s in sources)

    # -- what the stages call ------------------------------------------------------------------------
    def check(
        self,
        stage: str,
        claim: str,
        cited: Sequence[str],
        *,
        names_only: bool = False,
        with_context: bool = False,
        report: GroundingReport | None = None,
    ) -> list[str] | None:
        """None when refused (counted, with its reason); else the message ids that support it (may be
        empty: a names-only check, or support from the period's context)."""
        into = report if report is not None else self.report
        into.checked += 1
        why, supporting = self.why_unsupported(claim, cited, names_only=names_only, with_context=with_context)
        if why:
            into.refused += 1
            into.refusals.append(Refusal(stage=stage, text=claim, why=why))
            return None
        return [k for k in supporting if k.startswith("msg:")]

    def keep_supported(
        self,
        stage: str,
        text: str,
        cited: Sequence[str],
        *,
        with_context: bool = False,
        report: GroundingReport | None = None,
    ) -> tuple[str, list[str]]:
        """The text's supported sentences (the others refused) and the messages that support them."""
        kept: list[str] = []
        support: list[str] = []
        said = sentences(text, flat=True)
        self.prefetch(said)
        for sentence in said:
            ids = self.check(stage, sentence, cited, with_context=with_context, report=report)
            if ids is not None:
                kept.append(sentence)
                support += [i for i in ids if i not in support]
        return " ".join(kept), support
