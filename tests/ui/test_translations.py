"""Every string the UI shows has its Japanese, and the catalogue has nothing stale."""

from __future__ import annotations

import ast
import json
import string
from pathlib import Path

from nexus_ark.notices import notice

UI = Path(__file__).resolve().parents[2] / "ui"
CORE = Path(__file__).resolve().parents[2] / "nexus_ark"
CATALOGUE = Path(__file__).resolve().parents[2] / "assets" / "translations" / "ja.json"


def _marked(paths, names: tuple[str, ...]) -> set[str]:
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in names
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found.add(node.args[0].value)
    return found


def _ui_strings() -> set[str]:
    """The UI's own strings, and the core's notices (nexus_ark.notices) the window shows translated."""
    return _marked(UI.rglob("*.py"), ("tr", "N_")) | _marked(CORE.rglob("*.py"), ("notice",))


def _form_descriptions() -> set[str]:
    """The persona editor's form is generated from PersonaSettings: its fields' descriptions are tooltips."""
    from typing import get_args

    from pydantic import BaseModel

    from nexus_ark.personas.model import PersonaSettings

    def walk(model: type[BaseModel]) -> set[str]:
        found = set()
        for field in model.model_fields.values():
            if field.description:
                found.add(field.description)
            for part in (field.annotation, *get_args(field.annotation)):
                if isinstance(part, type) and issubclass(part, BaseModel):
                    found |= walk(part)
        return found

    return walk(PersonaSettings)


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_every_ui_string_is_translated_and_none_is_stale() -> None:
    catalogue = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    strings = _ui_strings() | _form_descriptions()
    assert len(strings) > 20
    assert sorted(strings - catalogue.keys()) == [], "missing Japanese"
    assert sorted(catalogue.keys() - strings) == [], "stale catalogue entries"
    for english, japanese in catalogue.items():
        assert (japanese.strip() and japanese != english) or not english.isascii()
        assert _fields(english) == _fields(japanese), english


def test_tr_switches_language() -> None:
    from ui.util import i18n

    i18n.set_language("ja")
    try:
        assert i18n.tr("Send") == "送信"
        assert i18n.tr("Loading {name}…", name="Aria") == "Aria を読み込み中…"
    finally:
        i18n.set_language("en")
    assert i18n.tr("Send") == "Send"


def test_a_japanese_value_joins_the_japanese_words_beside_it_without_a_space() -> None:
    """The catalogue sets a value off by a space, as Japanese type does around Latin words and numbers
    ("Aria を読み込み中…", "3 件"); a Japanese name read 「ひかり を読み込み中…」. The space goes only
    between two wide characters, and a value's own spaces and formatting stay."""
    from ui.util import i18n

    i18n.set_language("ja")
    try:
        assert i18n.tr("Loading {name}…", name="ひかり") == "ひかりを読み込み中…"
        assert i18n.tr("Loading {name}…", name="Aria") == "Aria を読み込み中…"
        assert i18n.tr("Loading {name}…", name="ひかり と Aria") == "ひかり と Aria を読み込み中…"
        assert i18n.tr("Activity of {name}", name="ひかり") == "ひかりのアクティビティ"
        said = i18n.tr_notice(
            notice("{name} would like to change “{section}”", name="ひかり", section="話し方")
        )
        assert said == "ひかりが「話し方」を変えたいと提案しています"
    finally:
        i18n.set_language("en")
    assert i18n.tr("Loading {name}…", name="ひかり") == "Loading ひかり…"


def test_missing_catalogue_shows_english_instead_of_failing(monkeypatch, tmp_path: Path) -> None:
    """An install without its translations must still open: the settings remember "ja" for every start."""
    from ui.util import i18n

    monkeypatch.setattr(i18n, "assets_dir", lambda: tmp_path)  # an install that lacks assets/translations
    try:
        assert i18n.set_language("ja") == "en"
        assert i18n.tr("Send") == "Send"
        assert i18n.current_language() == "en"
    finally:
        i18n.set_language("en")
