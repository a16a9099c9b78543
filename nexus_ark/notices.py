"""Sentences the core hands to a person (a card imported with notes, an error and its hint, ...): each is
the English sentence itself (a str: the CLI prints it, logs and tests compare it) and keeps its template
and values, so a window in another language shows it translated (the template is the catalogue key; the
UI's translation test collects every `notice("...")` template here).

A value may itself be a Notice (a problem named inside a sentence) or a Joined list of them: the window
translates those too, so one sentence reads in one language wherever the words are ours. Words from
elsewhere (a library's message, an OS error, a path) are values and stay as they come."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any


class NoticeKind(StrEnum):
    """What a sentence announces, where code acts on it and not only shows it: code matches the kind,
    never the English template (issue 34)."""

    # A persona would like to change its soul; values `persona` and `proposal` (not in the sentence) say
    # which proposal a click on the notification opens for review.
    SOUL_PROPOSAL = "soul_proposal"


class Notice(str):
    template: str
    values: dict[str, object]
    kind: NoticeKind | None = None  # set by of_kind(); copies and pickles keep it (it is in __dict__)

    def __new__(cls, template: str, **values: object) -> Notice:
        made = super().__new__(cls, template.format(**values))
        made.template = template
        made.values = values
        return made

    def __getnewargs_ex__(self) -> tuple[tuple[str], dict[str, object]]:
        # A copy or a pickle is made again from the template, not from the English text (which may hold
        # braces a value brought in).
        return (self.template,), self.values

    def of_kind(self, kind: NoticeKind) -> Notice:
        """The same sentence, marked as announcing `kind`."""
        made = Notice(self.template, **self.values)
        made.kind = kind
        return made


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

    def __getnewargs_ex__(self) -> tuple[tuple[tuple[str, ...], str], dict[str, object]]:
        # (str's __getnewargs__ would hand the joined text alone to __new__, as parts.)
        return (self.parts, self.sep), {}


ECHO_MAX = 60  # characters of a value from outside quoted back in a sentence


def clipped(value: str, limit: int = ECHO_MAX) -> str:
    """A value from outside as a sentence may quote it: at most `limit` characters, "…" where cut (a 10 MB
    setting was printed whole on stderr, in `persona list` and in the log at every chat)."""
    return value if len(value) <= limit else f"{value[: limit - 1]}…"


def notice(template: str, **values: object) -> Notice:
    return Notice(template, **values)


def joined(parts: Iterable[str], sep: str) -> Joined:
    return Joined(parts, sep)


def validation_message(error: Mapping[str, Any]) -> str:
    """What one of pydantic's errors (an item of ValidationError.errors()) says: the Notice our own
    validator raised when it raised one (so the window translates it), else pydantic's words (English)."""
    raised = (error.get("ctx") or {}).get("error")
    if isinstance(raised, ValueError) and raised.args and isinstance(raised.args[0], Notice):
        return raised.args[0]
    return str(error["msg"]).removeprefix("Value error, ")


def stored(text: str) -> str | None:
    """A Notice or Joined as JSON that keeps its template and values (for a database column beside the
    English text, so a window reading it later can still translate it); None for a plain string."""
    if not isinstance(text, Notice | Joined):
        return None
    return json.dumps(_encode(text), ensure_ascii=False, default=str)


def from_stored(raw: str) -> str:
    """What stored() kept, made again: the same English text, translatable again. A value that cannot be
    read back (written by another version, damaged) gives the raw text rather than an error."""
    try:
        return _decode(json.loads(raw))
    except (ValueError, TypeError, KeyError, IndexError):
        return raw


def _encode(value: object) -> object:
    if isinstance(value, Notice):
        return {"template": value.template, "values": {k: _encode(v) for k, v in value.values.items()}}
    if isinstance(value, Joined):
        return {"parts": [_encode(p) for p in value.parts], "sep": value.sep}
    return value


def _decode(value: object) -> str:
    if isinstance(value, dict) and "template" in value:
        values = {str(k): _decode_value(v) for k, v in value["values"].items()}
        return Notice(str(value["template"]), **values)
    if isinstance(value, dict) and "parts" in value:
        return Joined([_decode(p) for p in value["parts"]], str(value["sep"]))
    if isinstance(value, str):
        return value
    raise ValueError(f"not a stored notice: {value!r}")


def _decode_value(value: object) -> object:
    return _decode(value) if isinstance(value, dict | str) else value
