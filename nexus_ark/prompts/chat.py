"""The turn's prompt (agent/prompt.py lays it out and budgets it): the headings of its sections, the soul
of a persona whose persona.md is empty, and what asks the model to go on with a reply the token limit cut
(agent/versions.py)."""

from __future__ import annotations

FALLBACK_SOUL = "You are {name}, a friendly companion."

# Who the persona talks with, right after its soul: the name the person gave (Settings, the first start,
# `nexus-ark setup --name`), or, when none was given, that the name is not known, so the model neither
# invents one nor borrows one from the soul's examples.
PERSON_LINE = {
    "en": "You are talking with {user}. Call them {user}; you are {name}, not them.",
    "ja": (
        "話し相手は「{user}」です。相手のことは「{user}」と呼びます。あなたは{name}で、相手ではありません。"
    ),
}
PERSON_UNKNOWN = {
    "en": "You do not know the person's name yet; do not make one up.",
    "ja": "相手の名前はまだ知りません。名前を作りません。",
}

# What comes before the changing sections (feelings, recall, entities, documents) in the system message
# right before the person's newest words (agent/prompt.py). Labels in parentheses in front of the person's
# words were copied by the bundled 135M model ("(What you know about what is said:)", issue 32): here they
# are plain headings in a system turn, and the intro says they are not to be said.
NOTES_INTRO = "Background for your next reply, for you only. Do not repeat it or write notes like it."

SECTION_HEADINGS = {
    "core_memory": "## Core memory",
    "notepad": "## Notepad",
    "goals": "## Your goals",
    "strategy": "## What you decided to try",
    "episodes": "## The days before this conversation",
    "feelings": "How you feel now:",
    "recalled": "Things you remember that may matter here:",
    "entities": "What you know about who and what is mentioned:",
    "knowledge": "From your documents:",
    "summary": "## Earlier in this conversation (a summary)",
}
GOAL_ITEMS = {"short": "(short-term) {goal}", "long": "(long-term) {goal}"}

# Sent, not stored, to have the model go on where the token limit stopped it.
CONTINUE_PROMPT = "Continue exactly where your last message stopped, without repeating it."
