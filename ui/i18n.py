"""UI translations. English strings are the keys; assets/translations/<lang>.json maps them.

A JSON catalogue (not Qt's .ts/.qm) keeps translation a text edit with no build step, and lets a test
check that every string the UI shows has its Japanese.
"""

from __future__ import annotations

import json
import locale
import os

from nexus_ark.paths import assets_dir

SUPPORTED = ("en", "ja")
_catalogue: dict[str, str] = {}
_language = "en"


def system_language() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    code = (locale.getlocale()[0] or "").lower()
    return "ja" if code.startswith("ja") else "en"


def catalogue_path(language: str):
    return assets_dir() / "translations" / f"{language}.json"


def load_catalogue(language: str) -> dict[str, str]:
    if language == "en":
        return {}
    with open(catalogue_path(language), encoding="utf-8") as fh:
        return json.load(fh)


def set_language(language: str) -> str:
    """Switch the UI language ("auto" follows the system). Returns the language now in use."""
    global _catalogue, _language
    resolved = system_language() if language == "auto" else language
    if resolved not in SUPPORTED:
        resolved = "en"
    _catalogue = load_catalogue(resolved)
    _language = resolved
    return resolved


def current_language() -> str:
    return _language


def N_(text: str) -> str:
    """Marks a string for translation where it is defined; tr() translates it where it is shown."""
    return text


def tr(text: str, **values: object) -> str:
    """The translation of an English UI string, with {placeholders} filled in."""
    translated = _catalogue.get(text, text)
    return translated.format(**values) if values else translated
