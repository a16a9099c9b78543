"""A reply shaped to what its model can do (issue 21).

A small model (below the capability record's reflection size: the bundled SmolLM2-135M) asked for 256 tokens
writes 256 tokens: every reply ran to the limit and was cut mid-sentence, and as the history filled with
those the model copied its old replies and called the person by the persona's name. For such a model a
reply is asked short and kept whole:

- a lower token limit, stop sequences at a new turn ("\\nUser:", "\\n<persona>:"), a stronger repeat penalty;
- the reply streams as it comes, held back only where it may still change (SentenceGate); after
  SMALL_SOFT_TOKENS it ends at the next sentence end, and what the hard limit cut mid-sentence is dropped
  (kept in meta as `cut_tail`, and the reply stays marked `cut_by_limit`: it is never stored as if whole);
- a sentence copied from an earlier reply in the prompt is left out, and a wrong name used to address the
  person ("Hi Aria!" written by Aria, "Hi Tomo!" with Tomo a name from the soul's example messages) is
  replaced by the person's name when it is known, else taken out of the sentence (issue 32).

Every model: a reply the limit cut is trimmed back to its last whole sentence, with the same marks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from nexus_ark.personas.cards import SOUL_SECTIONS
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
    # Names the persona must not call the person (beside its own): the soul's example messages' names.
    other_names: tuple[str, ...] = ()
    person_name: str = ""  # what the person is called ("" when not known): a wrong name becomes this

    @property
    def wrong_names(self) -> tuple[str, ...]:
        """The persona's own name and the examples' names, less the person's own (a person may share a
        name with an example), longest first ("Tomoko" before "Tomo")."""
        person = self.person_name.casefold()
        names = {n for n in (self.persona_name, *self.other_names) if n and n.casefold() != person}
        return tuple(sorted(names, key=len, reverse=True))


def shape_reply(
    params: GenerationParams,
    caps: Capabilities,
    persona_name: str,
    *,
    other_names: Sequence[str] = (),
    person_name: str = "",
) -> ReplyShape:
    """The generation parameters and the streaming rules for a reply of the model with `caps`; the
    persona's own settings where the model is not small (or asks for less)."""
    if not is_small(caps):
        return ReplyShape(
            params=params, persona_name=persona_name, other_names=tuple(other_names), person_name=person_name
        )
    limit = min(params.max_tokens, SMALL_MAX_TOKENS)
    small = params.model_copy(
        update={
            "max_tokens": limit,
            "repeat_penalty": max(params.repeat_penalty, SMALL_REPEAT_PENALTY),
            "stop": [*params.stop, *(s for s in stop_sequences(persona_name) if s not in params.stop)],
        }
    )
    soft = SMALL_SOFT_TOKENS if limit > SMALL_SOFT_TOKENS else None
    return ReplyShape(
        params=small,
        small=True,
        soft_tokens=soft,
        persona_name=persona_name,
        other_names=tuple(other_names),
        person_name=person_name,
    )


def normalise(sentence: str) -> str:
    return _SPACES.sub(" ", sentence).strip().lower()


_GREETING = r"(hi|hello|hey|dear|oh|thanks|thank you|welcome back|good (?:morning|night|evening))"


def _names(names: str | Sequence[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def _name_fix_start(text: str, names: str | Sequence[str], person: str = "") -> str:
    """ "Hi Aria, ..." -> "Hi, ..." ("Hi Ken, ..." when the person is Ken), "Aria, how ..." -> "How ..."
    ("Ken, how ...")."""
    fixed = text
    for name in _names(names):
        n = re.escape(name)
        fixed = re.sub(
            rf"\b{_GREETING},?\s+(?:my dear\s+)?{n}\b",
            lambda m: m.group(1) + (f" {person}" if person else ""),
            fixed,
            flags=re.I,
        )
        lead = re.match(rf"(\s*)(?:dear\s+)?{n},\s*(\w)", fixed, flags=re.I)
        if lead:
            rest = lead.group(2) if person else lead.group(2).upper()
            fixed = lead.group(1) + (f"{person}, " if person else "") + rest + fixed[lead.end() :]
    return fixed


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement that is `text` as it is (re.sub would read backslashes in a plain string)."""
    return lambda _match: text


def _name_fix_end(text: str, names: str | Sequence[str], person: str = "") -> str:
    """ "..., Aria!" -> "...!" ("..., Ken!" when the person is Ken)"""
    for name in _names(names):
        to = f", {person}" if person else ""
        text = re.sub(rf",\s*(?:my dear\s+)?{re.escape(name)}(?=\s*[.!?…])", _literal(to), text, flags=re.I)
    return text


def persona_name_fix(sentence: str, name: str | Sequence[str], person: str = "") -> str:
    """A wrong name taken out where the sentence uses it to address the person ("Hi Aria!", "Aria, I
    ...", "..., Aria."), or replaced by the person's own name (`person`) when it is known: the persona is
    speaking, so the person is not called by the persona's name nor by a name from its examples."""
    names = _names(name)
    if not any(names):
        return sentence
    return _name_fix_end(_name_fix_start(sentence, names, person), names, person)


# A name said to someone in the soul's example messages: a speaker's label ("Tomo: hi"), a name after a
# greeting ("Hi Tomo"), a name closing a sentence (", Tomo!"), a Japanese name with its honorific (トモさん).
_EXAMPLE_LABEL = re.compile(r"^\s*([A-Z][\w'-]{1,30}|[\u3040-\u30ff\u4e00-\u9fff]{1,8})\s*[:：]", re.M)
_EXAMPLE_GREETED = re.compile(rf"\b{_GREETING},?\s+([A-Z][\w'-]{{1,30}})\b", re.I)
_EXAMPLE_CLOSING = re.compile(r",\s*([A-Z][\w'-]{1,30})\s*[.!?…]")
_EXAMPLE_HONORIFIC = re.compile(r"([\u30a0-\u30ff\u4e00-\u9fff]{1,6})(?:さん|ちゃん|くん|様)")
_NOT_NAMES = frozenset(
    {"user", "char", "you", "me", "i", "assistant", "bot", "example", "note", "narrator", "system", "human"}
    | {"ai", "yes", "no", "oh", "ok", "okay", "well", "so", "あなた", "わたし", "私"}
)


def example_names(soul: str, persona_name: str) -> list[str]:
    """The names said in the soul's example messages (its "Example messages" / 「会話の例」 section):
    the persona must not call the person by one of them. Its own name and {{user}}/{{char}} are not among
    them."""
    headings = {f"## {h}" for key, *names in SOUL_SECTIONS if key == "mes_example" for h in names}
    lines = soul.splitlines()
    section: list[str] = []
    inside = False
    for line in lines:
        if line.strip() in headings:
            inside = True
            continue
        if inside and re.match(r"#{1,6} ", line.strip()):
            inside = False
        if inside:
            section.append(line)
    text = "\n".join(section)
    if not text.strip():
        return []
    found: list[str] = []
    for pattern in (_EXAMPLE_LABEL, _EXAMPLE_GREETED, _EXAMPLE_CLOSING, _EXAMPLE_HONORIFIC):
        for hit in pattern.finditer(text):
            name = hit.group(hit.lastindex or 1)
            if name.casefold() in _NOT_NAMES or name.casefold() == persona_name.casefold():
                continue
            if "{" in name or name in found:
                continue
            found.append(name)
    return found


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
        text, names, person = self.current, self.shape.wrong_names, self.shape.person_name
        if self._could_be_copy(text) or (self.out == 0 and len(text.split()) < MIN_COPY_WORDS):
            return ""
        safe = len(text.rstrip()) - len(text.rstrip().split()[-1]) if text.strip() else 0
        comma = text.rfind(",")
        after = " ".join(text[comma:].lower().split())
        for name in names:
            target = f", {name}".lower()
            if comma >= 0 and (target.startswith(after) or after.startswith(target)):
                safe = min(safe, comma)  # ", Ari" may become ", Aria!"
        if safe <= self.out:
            return ""
        piece = text[self.out : safe]
        if self.out == 0:
            fixed = _name_fix_start(piece, names, person) if names else piece
            self.renamed += fixed != piece
            piece = fixed
        self.out = safe
        self.partial += piece
        return piece

    def _end_sentence(self, sentence: str) -> str:
        """A finished sentence: left out if it copies an earlier reply (and none of it was let out),
        else the rest of it with the name fixed."""
        names, person = self.shape.wrong_names, self.shape.person_name
        if self.out == 0:
            key = normalise(sentence)
            if key in self.earlier and len(key.split()) >= MIN_COPY_WORDS:
                self.dropped.append(sentence)
                return ""
            fixed = persona_name_fix(sentence, names, person) if names else sentence
        else:
            rest = sentence[self.out :]
            fixed = _name_fix_end(rest, names, person) if names else rest
            if fixed != rest and names:
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
