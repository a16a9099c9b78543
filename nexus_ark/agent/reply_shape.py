"""A reply shaped to what its model can do (issue 21).

A small model (below the capability record's reflection size: the bundled SmolLM2-135M) asked for 256 tokens
writes 256 tokens: every reply ran to the limit and was cut mid-sentence, and as the history filled with
those the model copied its old replies and called the person by the persona's name. For such a model a
reply is asked short and kept whole:

- a lower token limit, stop sequences at a new turn ("\\nUser:", "\\n<persona>:"), a stronger repeat penalty;
- the reply streams as it comes, held back only where it may still change (SentenceGate); after
  SMALL_SOFT_TOKENS it ends at the next sentence end, and what the hard limit cut mid-sentence is dropped
  (kept in meta as `cut_tail`, and the reply stays marked `cut_by_limit`: it is never stored as if whole);
- a sentence copied from an earlier reply in the prompt is left out, and the persona's name used to address
  the person ("Hi Aria!" written by Aria) is taken out of the sentence.

Every model: a reply the limit cut is trimmed back to its last whole sentence, with the same marks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from nexus_ark.providers.base import Capabilities, GenerationParams
from nexus_ark.sentences import BOUNDARY, sentences, trim_to_sentence

# Measured with bench/small_model_turns.py on the bundled model (docs/benchmarks.md).
SMALL_MAX_TOKENS = 96
SMALL_SOFT_TOKENS = 40
SMALL_REPEAT_PENALTY = 1.3
# A sentence this short may well be said twice ("Thank you!"); a longer one said again is a copy.
MIN_COPY_WORDS = 4

_SPACES = re.compile(r"\s+")


def is_small(caps: Capabilities) -> bool:
    """Whether replies are kept short and whole: the capability record says the model is small."""
    return not caps.reflects


def stop_sequences(persona_name: str) -> list[str]:
    """Where a small model starts writing the next turn itself (the person's or its own again)."""
    return ["\nUser:", "\nuser:", "\nYou:", f"\n{persona_name}:", "<|im_start|>", "\n\n\n"]


@dataclass(frozen=True, slots=True)
class ReplyShape:
    params: GenerationParams
    small: bool = False  # stream whole sentences, end early at a sentence, drop copies
    soft_tokens: int | None = None  # after this many tokens the reply ends at the next sentence end
    persona_name: str = ""


def shape_reply(params: GenerationParams, caps: Capabilities, persona_name: str) -> ReplyShape:
    """The generation parameters and the streaming rules for a reply of the model with `caps`; the
    persona's own settings where the model is not small (or asks for less)."""
    if not is_small(caps):
        return ReplyShape(params=params, persona_name=persona_name)
    limit = min(params.max_tokens, SMALL_MAX_TOKENS)
    small = params.model_copy(
        update={
            "max_tokens": limit,
            "repeat_penalty": max(params.repeat_penalty, SMALL_REPEAT_PENALTY),
            "stop": [*params.stop, *(s for s in stop_sequences(persona_name) if s not in params.stop)],
        }
    )
    soft = SMALL_SOFT_TOKENS if limit > SMALL_SOFT_TOKENS else None
    return ReplyShape(params=small, small=True, soft_tokens=soft, persona_name=persona_name)


def normalise(sentence: str) -> str:
    return _SPACES.sub(" ", sentence).strip().lower()


_GREETING = r"(hi|hello|hey|dear|oh|thanks|thank you|welcome back|good (?:morning|night|evening))"


def _name_fix_start(text: str, name: str) -> str:
    """ "Hi Aria, ..." -> "Hi, ...", "Aria, how ..." -> "How ..." """
    n = re.escape(name)
    fixed = re.sub(rf"\b{_GREETING},?\s+(?:my dear\s+)?{n}\b", r"\1", text, flags=re.I)
    lead = re.match(rf"(\s*)(?:dear\s+)?{n},\s*(\w)", fixed, flags=re.I)
    if lead:
        fixed = lead.group(1) + lead.group(2).upper() + fixed[lead.end() :]
    return fixed


def _name_fix_end(text: str, name: str) -> str:
    """ "..., Aria!" -> "...!" """
    return re.sub(rf",\s*(?:my dear\s+)?{re.escape(name)}(?=\s*[.!?…])", "", text, flags=re.I)


def persona_name_fix(sentence: str, name: str) -> str:
    """The persona's name taken out where the sentence uses it to address the person ("Hi Aria!",
    "Aria, I ...", "..., Aria."): the persona is speaking, so the person is not called by its name."""
    if not name:
        return sentence
    return _name_fix_end(_name_fix_start(sentence, name), name)


def earlier_sentences(replies: Iterable[str]) -> frozenset[str]:
    """The sentences of earlier replies that a copy would repeat (long enough to be a copy)."""
    return frozenset(
        key
        for reply in replies
        for s in sentences(reply)
        if len((key := normalise(s)).split()) >= MIN_COPY_WORDS
    )


@dataclass
class SentenceGate:
    """Lets a small model's streamed reply out as it comes, holding back only what may still change: a
    sentence while it could be a copy of an earlier reply's (it is left out when it is one), a sentence's
    first words (where "Hi Aria," would be), its last word (a name may be half-written) and a ", Ari..."
    at its end. What was let out is never taken back, except the words of a sentence the token limit cut
    (then the stored reply ends at the sentence before). `feed` returns what may be shown now; `done` says
    the reply has reached its soft length at a sentence end; `finish` settles what is kept and cut."""

    shape: ReplyShape
    earlier: frozenset[str] = frozenset()
    current: str = ""  # the sentence being written, as the model wrote it
    out: int = 0  # how much of `current` has been let out
    partial: str = ""  # what was let out of the current sentence (after the name fix)
    kept: list[str] = field(default_factory=list)  # finished sentences, as let out
    dropped: list[str] = field(default_factory=list)  # copies of earlier replies, left out
    tokens: int = 0
    renamed: int = 0  # sentences where the persona's name addressed the person
    _ended_now: bool = False

    def feed(self, piece: str) -> str:
        self.tokens += 1
        self.current += piece
        shown: list[str] = []
        self._ended_now = False
        while (found := BOUNDARY.search(self.current)) is not None:
            if found.start() == 0 and not self.kept and not self.partial:  # leading space: no sentence
                self.current = self.current[found.end() :]
                continue
            sentence, self.current = self.current[: found.end()], self.current[found.end() :]
            shown.append(self._end_sentence(sentence))
        if not self.done:
            shown.append(self._let_out())
        return "".join(shown)

    def _could_be_copy(self, text: str) -> bool:
        key = normalise(text)
        return bool(key) and any(e.startswith(key) for e in self.earlier)

    def _let_out(self) -> str:
        """What of the unfinished sentence can no longer change."""
        text, name = self.current, self.shape.persona_name
        if self._could_be_copy(text) or (self.out == 0 and len(text.split()) < MIN_COPY_WORDS):
            return ""
        safe = len(text.rstrip()) - len(text.rstrip().split()[-1]) if text.strip() else 0
        comma = text.rfind(",")
        after, target = " ".join(text[comma:].lower().split()), f", {name}".lower()
        if name and comma >= 0 and (target.startswith(after) or after.startswith(target)):
            safe = min(safe, comma)  # ", Ari" may become ", Aria!"
        if safe <= self.out:
            return ""
        piece = text[self.out : safe]
        if self.out == 0:
            fixed = _name_fix_start(piece, name) if name else piece
            self.renamed += fixed != piece
            piece = fixed
        self.out = safe
        self.partial += piece
        return piece

    def _end_sentence(self, sentence: str) -> str:
        """A finished sentence: left out if it copies an earlier reply (and none of it was let out),
        else the rest of it with the name fixed."""
        name = self.shape.persona_name
        if self.out == 0:
            key = normalise(sentence)
            if key in self.earlier and len(key.split()) >= MIN_COPY_WORDS:
                self.dropped.append(sentence)
                return ""
            fixed = persona_name_fix(sentence, name) if name else sentence
        else:
            rest = sentence[self.out :]
            fixed = _name_fix_end(rest, name) if name else rest
            if fixed != rest and name:
                self.renamed += 1
        if self.out == 0 and fixed != sentence:
            self.renamed += 1
        whole = self.partial + fixed
        self.out, self.partial = 0, ""
        if whole.strip():
            self.kept.append(whole)
            self._ended_now = True
        elif self.kept:  # a line break between sentences: shown, so kept with them
            self.kept[-1] += whole
        return fixed

    @property
    def done(self) -> bool:
        soft = self.shape.soft_tokens
        return soft is not None and self.tokens >= soft and self._ended_now

    def finish(self, finish: str | None) -> tuple[str, str, str]:
        """(the rest to show, the reply to store, the tail the limit cut). A reply the model ended keeps
        its last sentence (punctuated or not); one the limit ended drops its unfinished sentence (words
        of it already shown included: they are the tail)."""
        rest, tail = "", ""
        if self.done:  # ended at a sentence: what it holds is the next one's first words, never shown
            pass
        elif finish == "length":
            tail = self.current
        elif self.current.strip():
            rest = self._end_sentence(self.current)
        self.current, self.out, self.partial = "", 0, ""
        text = "".join(self.kept).strip()
        if not text and self.dropped:  # every sentence was a copy: a repeated reply beats none
            self.kept = [self.dropped[0]]
            rest = self.dropped[0]
            text = rest.strip()
        if not text and tail.strip():  # no whole sentence before the limit: up to the last whole word
            text, tail = trim_to_sentence(tail)
            rest = ""  # its words were shown as they came; the stored text replaces them at the end
        return rest, text, tail
