"""UI translations. English strings are the keys; assets/translations/<lang>.json maps them.

A JSON catalogue (not Qt's .ts/.qm) keeps translation a text edit with no build step, and lets a test
check that every string the UI shows has its Japanese.
"""

from __future__ import annotations

import json
import locale
import logging
import os
import string
import unicodedata
from collections.abc import Callable
from pathlib import Path

from nexus_ark.errors import NexusArkError
from nexus_ark.notices import Joined, Notice
from nexus_ark.paths import assets_dir

log = logging.getLogger(__name__)

SUPPORTED = ("en", "ja")
_catalogue: dict[str, str] = {}
_language = "en"
_read: dict[Path, dict[str, str]] = {}  # each catalogue file read once: a switch later reads no file
_FORMATTER = string.Formatter()


def system_language() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    code = (locale.getlocale()[0] or "").lower()
    return "ja" if code.startswith("ja") else "en"


def catalogue_path(language: str) -> Path:
    return assets_dir() / "translations" / f"{language}.json"


def load_catalogue(language: str) -> dict[str, str] | None:
    """The translations for a language ({} for English); None when the catalogue is missing or damaged.

    A broken install must still open its window: the settings remember the language, so raising here
    would stop every later start. The log and `nexus-ark doctor` say what is missing.
    """
    if language == "en":
        return {}
    path = catalogue_path(language)
    try:
        with open(path, encoding="utf-8") as fh:
            catalogue = json.load(fh)
    except (OSError, ValueError) as exc:
        log.error("cannot read the %s translations %s (%s): showing English", language, path, exc)
        return None
    if not isinstance(catalogue, dict):
        log.error("the %s translations %s are not a JSON object: showing English", language, path)
        return None
    return {str(k): str(v) for k, v in catalogue.items()}


def set_language(language: str) -> str:
    """Switch the UI language ("auto" follows the system). Returns the language now in use: English
    when the asked language's catalogue cannot be read."""
    global _catalogue, _language
    resolved = system_language() if language == "auto" else language
    if resolved not in SUPPORTED:
        resolved = "en"
    catalogue = _catalogue_for(resolved)
    if catalogue is None:
        catalogue, resolved = {}, "en"
    _catalogue = catalogue
    _language = resolved
    return resolved


def _catalogue_for(language: str) -> dict[str, str] | None:
    """load_catalogue, each file read once (English, {}, and an unreadable one, None, are not kept)."""
    path = catalogue_path(language)
    if path not in _read:
        catalogue = load_catalogue(language)
        if not catalogue:
            return catalogue
        _read[path] = catalogue
    return _read[path]


def read_every_catalogue() -> None:
    """Read the catalogues of every language now (at start, before the window shows), so that switching
    language in the window reads no file on the UI thread."""
    for language in SUPPORTED:
        _catalogue_for(language)


def current_language() -> str:
    return _language


def N_(text: str) -> str:
    """Marks a string for translation where it is defined; tr() translates it where it is shown."""
    return text


def tr(text: str, /, **values: object) -> str:
    """The translation of an English UI string, with {placeholders} filled in (a placeholder may be
    called `text`: the string itself is given by position only)."""
    translated = _catalogue.get(text, text)
    if not values:
        return translated
    if translated is text:  # English, or a string without its translation
        return text.format(**values)
    return _fill(translated, values)


def _fill(template: str, values: dict[str, object]) -> str:
    """A translated template filled in. The Japanese catalogue sets a value off by a space ("{name} は",
    "{count} 件"), as Japanese type does around Latin words and numbers; between two Japanese characters
    (「ひかり は」) that space is wrong, so a space at a value's edge goes where both sides are wide."""
    pieces: list[tuple[str, bool]] = []  # (text, whether it is a value)
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        if literal:
            pieces.append((literal, False))
        if field is None:
            continue
        if "{" in (spec or ""):  # a nested field: rare enough to fill the plain way
            return template.format(**values)
        value = _FORMATTER.convert_field(_FORMATTER.get_field(field, (), values)[0], conversion)
        pieces.append((_FORMATTER.format_field(value, spec or ""), True))
    for n, (text, is_value) in enumerate(pieces):
        if is_value:
            continue
        before = pieces[n - 1][0] if n and pieces[n - 1][1] else ""
        after = pieces[n + 1][0] if n + 1 < len(pieces) and pieces[n + 1][1] else ""
        if before and text[:1] == " " and _wide(before[-1]) and _wide(text[1:2]):
            text = text[1:]
        if after and text[-1:] == " " and _wide(after[0]) and _wide(text[-2:-1]):
            text = text[:-1]
        pieces[n] = (text, False)
    return "".join(text for text, _ in pieces)


def _wide(char: str) -> bool:
    return bool(char) and unicodedata.east_asian_width(char) in ("W", "F")


def sources_saying(words: str, limit: int = 40) -> list[str]:
    """The English strings whose translation in the language shown contains these words (case ignored): a
    search typed in the person's language finds what is stored in English. None in English; at most limit."""
    wanted = words.casefold()
    if not wanted or not _catalogue:
        return []
    found = [source for source, said in _catalogue.items() if wanted in said.casefold()]
    return found[:limit]


def tr_notice(text: str) -> str:
    """A sentence from the core in the person's language: a Notice is translated by its template (and
    the notices among its values with it), a Joined list part by part; any other text is shown as it is."""
    if isinstance(text, Notice):
        values = {k: tr_notice(v) if isinstance(v, str) else v for k, v in text.values.items()}
        return tr(text.template, **values)
    if isinstance(text, Joined):
        return text.sep.join(tr_notice(part) for part in text.parts)
    return text


def tr_error(error: BaseException | str) -> str:
    """An error as the window shows it, in the person's language. A NexusArkError: its message, then its
    hint on the next line (as str() of it reads in English); another exception: its type and text, as it
    comes (it is a bug or a library's words); a string: translated when it is a Notice.

    Only reads the catalogue (a dict lookup), so a worker thread may call it before handing the text over."""
    if isinstance(error, NexusArkError):
        message, hint = tr_notice(error.message), tr_notice(error.hint)
        return f"{message}\n{hint}" if hint else message
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}"
    return tr_notice(error)


class LanguageTexts:
    """A window's texts that follow the language: each one set through follow() is set again by
    retranslate() (MainWindow.show_language calls retranslate on every open window). A part the window
    owns (`self.texts = LanguageTexts()`), handed to the panels it builds so that one retranslate() sets
    them all again.

    follow(lambda: label.setText(tr("Search"))) sets the text now and after every switch; with a key, a
    later follow() under the same key replaces it (a status line shows its latest message, translated).
    """

    def __init__(self) -> None:
        self._texts: dict[object, Callable[[], object]] = {}

    def follow(self, apply: Callable[[], object], key: str | None = None) -> None:
        self._texts[key if key is not None else object()] = apply
        apply()

    def retranslate(self) -> None:
        for apply in list(self._texts.values()):
            apply()
