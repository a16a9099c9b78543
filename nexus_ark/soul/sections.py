"""persona.md as sections: the text before the first level-2 heading, then one section per `## Heading`
(deeper headings stay inside their section; a `##` inside a fenced code block is text). A proposal names a
section by its heading; replacing a section's body leaves every other byte of the file as it was."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^##(?!#)[ \t]*(.*?)[ \t#]*$")
HEADING_MAX = 60


@dataclass(frozen=True)
class Section:
    heading: str  # "" for the text before the first heading
    body: str  # the lines under the heading, as written (trailing blank lines included)
    start: int  # offset of the heading line (of the body for the opening text)
    body_start: int
    end: int

    @property
    def content(self) -> str:
        return self.body.strip()


def split(text: str) -> list[Section]:
    """The file's sections in order; the first is the opening text (possibly empty)."""
    sections: list[Section] = []
    heading, start, body_start = "", 0, 0
    fenced = False
    offset = 0
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line.rstrip("\r\n"))
        if match is not None:
            sections.append(Section(heading, text[body_start:offset], start, body_start, offset))
            heading, start, body_start = match.group(1).strip(), offset, offset + len(line)
        offset += len(line)
    sections.append(Section(heading, text[body_start:], start, body_start, len(text)))
    return sections


def fold(heading: str) -> str:
    """A heading as compared: case, width and spacing do not matter, nor leading #'s."""
    clean = unicodedata.normalize("NFKC", heading).strip().lstrip("#").strip()
    return " ".join(clean.casefold().split())


def find(text: str, heading: str) -> Section | None:
    wanted = fold(heading)
    return next((s for s in split(text)[1:] if fold(s.heading) == wanted), None)


def headings(text: str) -> list[str]:
    return [s.heading for s in split(text)[1:]]


def replace(text: str, heading: str, new_body: str) -> str:
    """`text` with the section `heading`'s body replaced by `new_body` (its blank lines around trimmed; the
    section's own trailing blank lines kept, so the next heading stays where it was). A heading the file
    does not have is added at the end."""
    body = new_body.strip("\n").rstrip() + "\n"
    section = find(text, heading)
    if section is None:
        lead = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{lead}## {heading.strip()}\n{body}"
    old = section.body
    trailing = old[len(old.rstrip()) :]
    tail = trailing[trailing.find("\n") + 1 :] if "\n" in trailing else ""
    return text[: section.body_start] + body + tail + text[section.end :]


def normalised(text: str) -> str:
    """A section's text as compared (proposals that differ only in spacing are the same proposal)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())
