"""A reply that starts to copy the prompt's scaffolding is cut there (issue 32).

The bundled 135M model copied the labels of the notes it was given ("Hello. What's your name? (What you know
about what is said:)", "(You remember what I asked:)"): the notes now sit in a system message of their own
(agent/prompt.py), and what still comes through is cut where it begins, as the reply streams, so what is
shown and what is stored end at the same place. Two shapes are scaffolding:

- a label in brackets: "(" or "（", a few words with no sentence end, and a colon ("(How you feel now:");
  the model makes up new ones, so the shape counts, not the words;
- a line that opens with one of the prompt's own headings ("## Core memory", "Things you remember that may
  matter here: …", "Background for your next reply"), with or without "#", "-" or "(" before it.

A reply that opens with one is not left empty: the label's block (to its closing bracket, or to the blank
line after a heading) is skipped and the reply goes on after it; a label after the reply's first words ends
the reply. Text that may still become a label is held back until it is clear (an open bracket until it
closes, a line while it could be a heading), so nothing shown is taken back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexus_ark.prompts.chat import NOTES_INTRO, SECTION_HEADINGS
from nexus_ark.prompts.rooms import ROOM_NOTE

# How far a label runs before its colon: longer, it is a sentence in brackets.
LABEL_CHARS = 60
_SENTENCE_END = re.compile(r"[.!?。！？\n)）]")
# A colon that ends the bracket or its line: "(Label:)" or "(Label:" and the notes below it; "(my
# favourite: tea)" is a reply's own aside.
_BRACKET_LABEL = re.compile(r"[(（]\s*([^()（）\n.!?。！？:：]{3,60})[:：][ \t]*(?=[)）\n]|$)")  # LABEL_CHARS
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_LINE_LEAD = re.compile(r"[ \t]*(?:#{1,6}[ \t]*|[-*][ \t]+|[(（][ \t]*)?")
_WORD = re.compile(r"[^\W_]+")
_DATED_NOTE = re.compile(r"[ \t]*[-*][ \t]+\d{4}-\d")
_DATED_START = re.compile(r"[ \t]*[-*](?:[ \t]+\d{0,4}-?)?[ \t]*")


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _heading_labels() -> tuple[tuple[tuple[str, ...], bool], ...]:
    """The prompt's own headings as words: (their first words, whether a colon must follow on the line).
    Headings without a colon ("## Core memory", the notes' intro) count by their words alone."""
    labels: list[tuple[tuple[str, ...], bool]] = []
    texts = [*SECTION_HEADINGS.values(), NOTES_INTRO.split(".")[0]]
    texts += [ROOM_NOTE["en"].split(" with ")[0]]  # NOTE_LINE has a bracket of its own: the shape finds it
    for text in texts:
        words = tuple(_words(text))
        colon = text.rstrip().endswith(":")
        # A heading with a colon is known by its first three words and the colon; one without by all of
        # its words (up to five): "What you know" alone is everyday English.
        labels.append((words[:3], True) if colon else (words[:5], False))
    return tuple(labels)


_LABELS = _heading_labels()


def _bracket_label(text: str, final: bool) -> re.Match[str] | None:
    """The first label in brackets: two words or more (or Japanese) before the colon. While the reply
    streams, a colon at the very end may still be followed by the aside's own words."""
    for found in _BRACKET_LABEL.finditer(text):
        inside = found.group(1)
        if found.end() == len(text) and not final:
            continue
        if len(inside.split()) >= 2 or _CJK.search(inside):
            return found
    return None


# Words of a note's line that make a copy of it ("- The basil grows best with six hours of sun").
NOTE_COPY_WORDS = 5


def _without_article(words: list[str]) -> list[str]:
    """A copy may add or drop a leading article ("The basil grows…" for "Basil grows…")."""
    return words[1:] if words and words[0] in ("the", "a", "an") else words


def note_lines(notes: str) -> tuple[tuple[str, ...], ...]:
    """The lines of the notes message as words, for the cutter to know a copied one."""
    found = []
    for line in notes.splitlines():
        lead = _LINE_LEAD.match(line)
        words = tuple(_without_article(_words(line[lead.end() if lead else 0 :])))
        if len(words) >= NOTE_COPY_WORDS:
            found.append(words)
    return tuple(found)


def _line_label(line: str, notes: tuple[tuple[str, ...], ...] = ()) -> bool | None:
    """Whether a line (without its line break) opens with one of the prompt's headings or copies a line
    of its notes: True, False, or None while it still may (too few words yet, or a colon still to come)."""
    lead = _LINE_LEAD.match(line)
    words = _words(line[lead.end() if lead else 0 :])
    partial = bool(line) and bool(_WORD.match(line[-1]))  # the last word may still grow
    if _DATED_NOTE.match(line):  # the recalled memories' form: "- 2026-11-20: …"
        return True
    maybe = bool(_DATED_START.fullmatch(line))  # "- 20" may become one
    said = _without_article(words)
    for note in notes:
        same = next((i for i, (a, b) in enumerate(zip(said, note, strict=False)) if a != b), None)
        same = min(len(said), len(note)) if same is None else same
        whole = same - (partial and same == len(said) < len(note))  # a half-written word counts not yet
        if whole >= min(NOTE_COPY_WORDS, len(note)):
            return True
        if whole < NOTE_COPY_WORDS and _may_become(said, note, partial):
            maybe = True
    for label, colon in _LABELS:
        head = tuple(words[: len(label)])
        if head == label:
            if not colon or re.search(r"[:：]", line):
                return True
            maybe = maybe or len(line) < LABEL_CHARS
        elif len(words) <= len(label) and _may_become(words, label, partial):
            maybe = True
    return None if maybe else False


def _may_become(words: list[str], label: tuple[str, ...], partial: bool) -> bool:
    """Whether the words so far are the beginning of the label's (the last one maybe half-written)."""
    if not words:
        return True
    if partial:
        return tuple(words[:-1]) == label[: len(words) - 1] and label[len(words) - 1].startswith(words[-1])
    return len(words) < len(label) and tuple(words) == label[: len(words)]


@dataclass
class ScaffoldCutter:
    """Feeds on the reply as it streams (`feed` returns what may be shown now, `finish` the rest) and says
    whether it cut (`cut`: the model should stop) and how much of a leading label it skipped."""

    notes: tuple[tuple[str, ...], ...] = ()  # the lines of the prompt's notes (note_lines)
    raw: str = ""
    start: int = 0  # where the reply proper begins (after leading labels skipped)
    out: int = 0  # how much of raw was let out
    cut: bool = False
    skipped: int = 0  # leading labels skipped

    def feed(self, piece: str) -> str:
        if self.cut:
            return ""
        self.raw += piece
        return self._advance(final=False)

    def finish(self) -> str:
        """What was held back and is no label after all (the reply ended)."""
        return "" if self.cut else self._advance(final=True)

    def _advance(self, final: bool) -> str:
        while True:
            at, end = self._first_label(final)
            if at is None:
                break
            if self.raw[self.out : at].strip() or self.out > self.start:  # after the reply's first words
                self.cut = True
                piece = self.raw[self.out : at].rstrip()
                self.out = at
                return piece
            if end is None:  # a leading label whose block has not ended yet: wait
                return ""
            self.start = self.out = end
            self.skipped += 1
        safe = len(self.raw) if final else self._safe_end()
        if self.out == self.start:  # nothing let out yet: no leading blank lines
            lead = len(self.raw[self.out : safe]) - len(self.raw[self.out : safe].lstrip())
            self.start = self.out = self.out + lead
        piece = self.raw[self.out : max(safe, self.out)]
        self.out = max(safe, self.out)
        return piece

    def _first_label(self, final: bool) -> tuple[int | None, int | None]:
        """Where the first label from `out` on begins, and where its block ends (None: not yet)."""
        text = self.raw
        found_at: int | None = None
        block_end: int | None = None
        bracket = _bracket_label(text[self.out :], final)
        if bracket is not None:
            found_at = self.out + bracket.start()
            close = re.compile(r"[)）]").search(text, found_at)
            block_end = close.end() if close else (len(text) if final else None)
        line_start = text.rfind("\n", 0, self.out) + 1
        for match in re.finditer(r"[^\n]*(?:\n|$)", text[line_start:]):
            begin = line_start + match.start()
            if found_at is not None and begin >= found_at:
                break
            if begin < self.out:  # a line partly let out was judged already
                continue
            line = match.group().rstrip("\n")
            if not line and match.end() == match.start():
                break
            complete = match.group().endswith("\n") or final
            verdict = _line_label(line, self.notes)
            if verdict or (verdict is None and complete and re.search(r"[:：]", line)):
                found_at = max(begin, self.out)
                blank = text.find("\n\n", begin)
                block_end = blank + 2 if blank >= 0 else (len(text) if final else None)
                break
        return found_at, block_end

    def _safe_end(self) -> int:
        """How far the text can no longer become a label: before an open bracket that has not closed or
        ended a sentence, and before a line that may still open with a heading."""
        text = self.raw
        safe = len(text)
        opener = max(text.rfind("("), text.rfind("（"))
        open_label = opener >= self.out and len(text) - opener <= LABEL_CHARS
        if open_label and not _SENTENCE_END.search(text, opener + 1):
            safe = min(safe, opener)
        line_start = text.rfind("\n") + 1
        if line_start >= self.out and _line_label(text[line_start:], self.notes) is None:
            safe = min(safe, line_start)
        return max(safe, self.out)
