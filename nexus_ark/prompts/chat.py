"""The turn's prompt (agent/prompt.py lays it out and budgets it): the headings of its sections, the soul
of a persona whose persona.md is empty, and what asks the model to go on with a reply the token limit cut
(agent/versions.py)."""

from __future__ import annotations

FALLBACK_SOUL = "You are {name}, a friendly companion."

# A heading opening with "(" marks a note on the user's message: the section is closed with ")".
SECTION_HEADINGS = {
    "core_memory": "## Core memory",
    "notepad": "## Notepad",
    "goals": "## Your goals",
    "strategy": "## What you decided to try",
    "episodes": "## The days before this conversation",
    "feelings": "(How you feel now:",
    "recalled": "(Things you remember that may matter here:",
    "entities": "(What you know about who and what is mentioned:",
    "knowledge": "(From your documents:",
    "summary": "## Earlier in this conversation (a summary)",
}
GOAL_ITEMS = {"short": "(short-term) {goal}", "long": "(long-term) {goal}"}

# Sent, not stored, to have the model go on where the token limit stopped it.
CONTINUE_PROMPT = "Continue exactly where your last message stopped, without repeating it."
