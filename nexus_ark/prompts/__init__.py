"""Every sentence the app sends to a language model, in one place, by job: chat (the turn's prompt),
upkeep (after-turn work on the internal model), mind (the drives and emotions in words), life (writing
first), dreaming, tools (the memory tools the model calls), archive (the texts of the memories it
recalls), cards (a character card's soul as the prompt carries it), protocol (the text tool protocol and
structured answers, for any model). Text whose wording depends on the persona's language is a dict keyed
"en" and "ja" with the same keys and placeholders in both; instructions the model reads in English
whatever the persona speaks are plain strings. Templates are str.format strings.

What the person reads (notices, the window, error messages) is not here: it is translated in ui/i18n.
This package imports nothing of ours (tests/core/test_prompts.py and the import-linter layers hold it
to that, and find Japanese sentences elsewhere)."""

from __future__ import annotations

# The persona's language as an instruction written in English names it ("Write in Japanese").
LANGUAGE_NAMES = {"en": "English", "ja": "Japanese"}
