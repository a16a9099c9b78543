"""nexus_ark/prompts/ is the one place for what the app says to a language model: every text keyed by
language has both English and Japanese with the same placeholders, every template formats, the package
imports nothing of ours, and no other module of the core holds a Japanese string except the data listed
below (each with why it is not a prompt). A Japanese sentence for the model written anywhere else fails
here."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import string
from pathlib import Path
from typing import Any

import nexus_ark.prompts

CORE = Path(nexus_ark.prompts.__file__).resolve().parents[1]
PROMPTS = CORE / "prompts"
LANGUAGES = {"en", "ja"}
# Hiragana, katakana (full and half width) and kanji: a Japanese sentence has some, a kanji-only word too.
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uff66-\uff9f]")
# English grammar a Japanese template has no use for (the plural ending).
GRAMMAR_ONLY = {"s"}

# Japanese strings outside prompts/, by (module, top-level name), and why each is not a model-facing
# sentence of ours. Moving one into prompts/ (or deleting it) means deleting its line here.
NOT_PROMPTS = {
    ("rooms/turn_taking.py", "_JA_HONORIFIC"): "honorifics that may follow a member's name (a pattern)",
    ("rooms/turn_taking.py", "_COMMON_KANJI"): "kanji too common to say what a message is about (relevance)",
    ("memory/archive/vectors.py", "CENTER_PROBES"): "sample sentences whose embeddings find a model's center",
    ("mind/emotion_greeting.py", "_JA"): "greetings to strip before reading an emotion (a pattern)",
    ("mind/emotion_greeting.py", "_JA_NAME"): "what may follow a greeting (a pattern)",
    ("mind/narrative.py", "drive_line"): "the dashboard's and `nexus-ark drives`' line: the person reads it",
    ("personas/store.py", "_SOUL_TEMPLATES"): "a new persona's persona.md, which the person edits",
    ("personas/cards/plan.py", "SOUL_SECTIONS"): "persona.md's headings for a card's fields",
    ("personas/cards/plan.py", "ALWAYS_SECTION"): "a persona.md heading",
    ("personas/cards/plan.py", "NAMES_SECTION"): "a persona.md heading",
    ("personas/cards/plan.py", "_NAMES_NOTE"): "written into persona.md by a card's import",
    ("personas/cards/plan.py", "_YOU"): "what replaces {{user}} in persona.md",
    ("personas/cards/plan.py", "guess_language"): "a script range that tells Japanese text",
    ("memory/migrations/steps_archive.py", "CJK_GLOB"): "the script ranges of CJK text (a GLOB pattern)",
    ("personas/cards/plan.py", "_USER_HONORIFIC"): "honorifics dropped after {{user}} (a pattern)",
    ("runtime/scripted_mind.py", "_PLANS_JA"): "the scripted stand-in model's own plans (a model's words)",
    ("runtime/scripted_mind.py", "ScriptedMind"): "the scripted stand-in model's replies (a model's words)",
    ("simulation.py", "_LINES"): "what the simulated person says (sample data)",
    ("agent/reply_shape.py", "_EXAMPLE_HONORIFIC"): "honorifics after a name in the examples (a pattern)",
    ("agent/reply_shape.py", "_NOT_NAMES"): "words of a soul's examples that are no one's name",
    # Voice (issue 36) and recall's dates (issue 37): patterns, an engine's answer and a help example.
    ("cli/voice.py", "add_voice_parsers"): "`voice reading --help`'s example of a reading in kana",
    ("memory/archive/search.py", "_JA_DATE"): "a Japanese date in a question (a pattern)",
    ("voice/engines/kokoro_ja.py", "KokoroJaEngine"): "one kana phonemized to warm the engine up",
    ("voice/engines/voicevox.py", "VoicevoxEngine"): "a word of VOICEVOX's own refusal, matched",
    ("voice/speech_text.py", "_BULLET"): "list bullets not read aloud, ・ included (a pattern)",
    ("voice/speech_text.py", "_japanese_time"): "the hour counter a clock time is read with",
    # What tells a dream's quotes apart (issue 32): word classes in patterns, read, never sent to a model.
    ("dreaming/informative.py", "_FIRST_PERSON"): "first-person words (a pattern)",
    ("dreaming/informative.py", "_SECOND_PERSON"): "second-person words (a pattern)",
    ("dreaming/informative.py", "_MYSELF"): "first-person singular words (a pattern)",
    ("dreaming/informative.py", "_TIME"): "words that date an event (a pattern)",
    ("dreaming/informative.py", "_PLAN"): "words of a plan (a pattern)",
    ("dreaming/informative.py", "_PEOPLE_PLACES"): "words for people, pets and places (a pattern)",
    ("dreaming/informative.py", "_FEELING"): "words of feeling (a pattern)",
    ("dreaming/informative.py", "_NUMBER"): "numbers and counters (a pattern)",
    ("dreaming/informative.py", "_CHEER"): "openings of a cheer or a greeting (a pattern)",
    ("dreaming/informative.py", "_REACTION"): "replies to the listener's news (a pattern)",
    ("dreaming/informative.py", "_JA_WORD"): "kanji and katakana runs (a pattern)",
    ("dreaming/names.py", "HONORIFICS"): "honorifics after a name",
    ("dreaming/names.py", "NEVER_NAMES_JA"): "greetings, thanks, weekdays that are no one's name",
    ("dreaming/names.py", "_MONTH_OR_DAY_JA"): "months and weekdays (a pattern)",
    ("dreaming/names.py", "_JA_NAME"): "what a name may be written in (a pattern)",
    ("dreaming/names.py", "_JA_HONORED"): "a name with its honorific (a pattern)",
    ("dreaming/names.py", "_JA_GREETING"): "greetings before a name (a pattern)",
    ("dreaming/names.py", "_JA_OPENING"): "a name opening a sentence (a pattern)",
    ("mind/distress.py", "_LOSS_JA"): "words of loss (a distress lexicon)",
    ("mind/distress.py", "_SCARE_JA"): "words of a scare or a failure (a distress lexicon)",
    ("mind/distress.py", "_WORRY_JA"): "words of worry (a distress lexicon)",
    ("mind/distress.py", "_REASSURED"): "reassurance, not distress (a pattern)",
    ("mind/distress.py", "_FIRST_PERSON"): "first-person words (a pattern)",
    ("mind/distress.py", "_JAPANESE"): "the script of Japanese text (a pattern)",
    ("mind/distress.py", "_POLITE"): "greetings, thanks and polite phrases (a pattern)",
}


def _constants():
    """(qualified name, value) of every public name in the prompts package and its modules."""
    names = ["nexus_ark.prompts"] + [
        m.name for m in pkgutil.iter_modules(nexus_ark.prompts.__path__, "nexus_ark.prompts.")
    ]
    for module in map(importlib.import_module, names):
        for name, value in vars(module).items():
            if not name.startswith("_"):
                yield f"{module.__name__}.{name}", value


def _texts(value: Any, where: str):
    """(where, text) of every string in a prompt constant, nested dicts and tuples included."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(item, f"{where}[{key!r}]")
    elif isinstance(value, tuple | list):
        for i, item in enumerate(value):
            yield from _texts(item, f"{where}[{i}]")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _same_shape(en: Any, ja: Any, where: str) -> list[str]:
    """Where the Japanese side differs from the English in keys or placeholders."""
    if isinstance(en, dict) and isinstance(ja, dict):
        if set(en) != set(ja):
            return [f"{where}: keys {sorted(set(en) ^ set(ja))} are in one language only"]
        return [p for key in en for p in _same_shape(en[key], ja[key], f"{where}[{key!r}]")]
    if isinstance(en, str) and isinstance(ja, str):
        if _fields(en) - GRAMMAR_ONLY != _fields(ja) - GRAMMAR_ONLY:
            return [
                f"{where}: placeholders {sorted(_fields(en))} in English, {sorted(_fields(ja))} in Japanese"
            ]
        return []
    return [f"{where}: {type(en).__name__} in English, {type(ja).__name__} in Japanese"]


def _language_keyed(value: Any, where: str):
    """(where, dict) of every dict keyed by language inside a prompt constant."""
    if isinstance(value, dict):
        if set(value) & LANGUAGES:
            yield where, value
        for key, item in value.items():
            yield from _language_keyed(item, f"{where}[{key!r}]")


def test_every_prompt_keyed_by_language_has_english_and_japanese_with_the_same_keys_and_placeholders() -> (
    None
):
    keyed = 0
    problems: list[str] = []
    for qualified, value in _constants():
        for where, texts in _language_keyed(value, qualified):
            keyed += 1
            if set(texts) != LANGUAGES:
                problems.append(f"{where}: languages {sorted(texts)}, not {sorted(LANGUAGES)}")
                continue
            problems += _same_shape(texts["en"], texts["ja"], where)
    assert not problems, "\n".join(problems)
    assert keyed >= 8  # drive names, sentences, durations, internal state, write first, first words...


def test_every_prompt_text_is_a_template_that_formats() -> None:
    texts = [text for qualified, value in _constants() for text in _texts(value, qualified)]
    for where, text in texts:
        try:  # a stray brace, a placeholder that is no name, a bad format spec
            text.format(**{field: 1 for field in _fields(text)})
        except (ValueError, KeyError, IndexError) as exc:
            raise AssertionError(f"{where} is not a template that formats: {exc!r}") from exc
    assert len(texts) >= 80


def test_the_prompts_package_imports_nothing_of_ours() -> None:
    for path in PROMPTS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                imported = [node.module or ""]
            elif isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            else:
                continue
            ours = [
                m
                for m in imported
                if m.split(".")[0] == "nexus_ark" and not m.startswith("nexus_ark.prompts")
            ]
            assert not ours, f"prompts/{path.name} imports {ours}"


def _prompts_used(core: Path = CORE) -> set[str]:
    """The prompt constants ("module.NAME") that a module of the core outside prompts/ imports by name
    and then uses."""
    used: set[str] = set()
    for path in core.rglob("*.py"):
        if core / "prompts" in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nexus_ark.prompts"):
                used |= {f"{node.module}.{a.name}" for a in node.names if (a.asname or a.name) in names}
    return used


def test_every_prompt_is_used_by_a_module_outside_prompts() -> None:
    # A prompt nobody imports is dead text, or its module still says it in words of its own.
    prompts = {q for q, value in _constants() if isinstance(value, str | dict | tuple | list)}
    unused = prompts - _prompts_used()
    assert not unused, f"prompts no module of the core imports and uses: {sorted(unused)}"
    assert {"nexus_ark.prompts.protocol.TOOL_PROTOCOL", "nexus_ark.prompts.cards.EXAMPLES_NOTE"} <= prompts


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings or other bare string statements (not values)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _top_level_name(statement: ast.stmt) -> str:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return statement.name
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return ", ".join(ast.unparse(t) for t in targets)
    return ast.unparse(statement)[:60]


def japanese_strings_outside_prompts(core: Path = CORE) -> dict[tuple[str, str], str]:
    """(module, top-level name) -> the first Japanese string literal found there, for every module of the
    core outside prompts/ (docstrings and comments aside)."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(core.rglob("*.py")):
        if core / "prompts" in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for statement in tree.body:
            for node in ast.walk(statement):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docs
                    and JAPANESE.search(node.value)
                ):
                    key = (path.relative_to(core).as_posix(), _top_level_name(statement))
                    found.setdefault(key, node.value)
    return found


def test_no_module_outside_prompts_holds_a_japanese_string_but_the_listed_data() -> None:
    found = japanese_strings_outside_prompts()
    unlisted = {key: text for key, text in found.items() if key not in NOT_PROMPTS}
    assert not unlisted, (
        "Japanese text outside nexus_ark/prompts/ (a sentence for the model belongs there; data that is "
        f"no prompt goes in NOT_PROMPTS with why): {unlisted}"
    )
    stale = set(NOT_PROMPTS) - set(found)
    assert not stale, f"listed in NOT_PROMPTS but no Japanese there any more (remove them): {stale}"


def test_the_scan_finds_a_japanese_sentence_outside_prompts_and_skips_docstrings_and_prompts(
    tmp_path: Path,
) -> None:
    core = tmp_path / "nexus_ark"
    (core / "prompts").mkdir(parents=True)
    (core / "runtime").mkdir()
    (core / "prompts" / "life.py").write_text('NUDGE = {"ja": "話しかけること。", "en": "Talk."}\n')
    (core / "runtime" / "life.py").write_text(
        '"""ドキュメント"""\n\n\ndef nudge(ja):\n    """説明"""\n'
        '    return f"{ja}自分から話しかけること。"\n',
        encoding="utf-8",
    )
    assert japanese_strings_outside_prompts(core) == {
        ("runtime/life.py", "nudge"): "自分から話しかけること。"
    }
