"""The sentence that says a persona's model does not speak its language: the chat's notice
(ui/chat/language_notice.py) and a room's (ui/rooms/room_panel.py) say it in the same words."""

from __future__ import annotations

from nexus_ark.providers.catalogue import LanguageAdvice
from ui.util.i18n import N_, tr

# Whole sentences per language (a language's name alone would read as the language picker's own label).
MISMATCH = {
    "en": N_("{name} speaks English, but its model ({model}) does not: its replies may be broken."),
    "ja": N_("{name} speaks Japanese, but its model ({model}) does not: its replies may be broken."),
}


def mismatch_text(name: str, advice: LanguageAdvice) -> str:
    """The persona speaks a language its model does not; the model's name without brackets of its own
    inside the sentence's ("(SmolLM2-135M-Instruct Q4_1)", not "(SmolLM2-135M-Instruct (Q4_1))")."""
    return tr(MISMATCH.get(advice.language, MISMATCH["en"]), name=name, model=advice.model_aside)
