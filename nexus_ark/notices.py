"""Sentences the core hands to a person (a card imported with notes, an error and its hint, ...): each is
the English sentence itself (a str: the CLI prints it, logs and tests compare it) and keeps its template
and values, so a window in another language shows it translated (the template is the catalogue key; the
UI's translation test collects every `notice("...")` template here).

A value may itself be a Notice (a problem named inside a sentence) or a Joined list of them: the window
translates those too, so one sentence reads in one language wherever the words are ours. Words from
elsewhere (a library's message, an OS error, a path) are values and stay as they come."""

from __future__ import annotations

from collections.abc import Iterable


class Notice(str):
    template: str
    values: dict[str, object]

    def __new__(cls, template: str, **values: object) -> Notice:
        made = super().__new__(cls, template.format(**values))
        made.template = template
        made.values = values
        return made

    def __getnewargs_ex__(self) -> tuple[tuple[str], dict[str, object]]:
        # A copy or a pickle is made again from the template, not from the English text (which may hold
        # braces a value brought in).
        return (self.template,), self.values


class Joined(str):
    """Several sentences or fragments shown as one (`sep` between them), each translated on its own."""

    parts: tuple[str, ...]
    sep: str

    def __new__(cls, parts: Iterable[str], sep: str) -> Joined:
        kept = tuple(parts)
        made = super().__new__(cls, sep.join(kept))
        made.parts = kept
        made.sep = sep
        return made

    def __getnewargs__(self) -> tuple[tuple[str, ...], str]:
        return self.parts, self.sep


def notice(template: str, **values: object) -> Notice:
    return Notice(template, **values)


def joined(parts: Iterable[str], sep: str) -> Joined:
    return Joined(parts, sep)


def validation_message(error: dict) -> str:
    """What one of pydantic's errors (an item of ValidationError.errors()) says: the Notice our own
    validator raised when it raised one (so the window translates it), else pydantic's words (English)."""
    raised = (error.get("ctx") or {}).get("error")
    if isinstance(raised, ValueError) and raised.args and isinstance(raised.args[0], Notice):
        return raised.args[0]
    return str(error["msg"]).removeprefix("Value error, ")
