"""A message written first from a template, for a model too small to write it (issue 21).

Asked to write first, the bundled SmolLM2-135M wrote 256 tokens of invented life ("my husband and I...").
Below the capability record's reflection size (`Capabilities.reflects` False) the persona sends a short
message in its language built from why it writes and what memory holds for that reason: the person's last
worry (devotion), an open question it still has (curiosity), its goal's words (goal), the plan it made
(event) or the routine's task. Nothing here is invented: every detail is quoted from memory, and a reason
without one gets the plain line. The templates are in nexus_ark/prompts/life.py.
"""

from __future__ import annotations

from typing import Literal

from nexus_ark.prompts.life import FIRST_WORDS
from nexus_ark.sentences import ends_sentence, sentences

Language = Literal["en", "ja"]

# The longest quoted detail, in characters: a message written first is a line, not a letter.
QUOTE_MAX = 90


def quote(text: str, limit: int = QUOTE_MAX) -> str:
    """The first sentence of `text`, on one line, at most `limit` characters (cut at a word, with "…")."""
    line = next(iter(sentences(text, flat=True)), "")
    if len(line) <= limit:
        return line
    head = line[:limit]
    if " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:-—、") + "…"


def _ended(text: str, language: Language) -> str:
    """A detail that closes the message ends like a sentence."""
    if ends_sentence(text):
        return text
    return text + ("。" if language == "ja" else ".")


def first_message(
    language: str,
    trigger: str,
    drive: str | None,
    *,
    worry: str = "",
    question: str = "",
    goal: str = "",
    what: str = "",
) -> str:
    """The message for why the persona writes: `trigger` (drive, heartbeat, event, routine) and the
    dominant `drive`; details quoted from memory (empty where memory has none: the plain line then).
    `what` is the planned event's or the routine's own words."""
    lang: Language = "ja" if language == "ja" else "en"
    words = FIRST_WORDS[lang]
    if trigger == "event" and what.strip():
        return words["event"].format(what=_ended(quote(what), lang))
    if trigger == "routine" and what.strip():
        return words["routine"].format(task=_ended(quote(what), lang))
    if drive == "devotion":
        if worry.strip():
            said = quote(worry).rstrip("。") if lang == "ja" else _ended(quote(worry), lang)
            return words["devotion"].format(worry=said)
        return words["devotion_plain"]
    if drive == "curiosity":
        if question.strip():
            return words["curiosity"].format(question=_ended(quote(question), lang))
        return words["curiosity_plain"]
    if drive == "goal_achievement" and goal.strip():
        if lang == "ja":
            return words["goal_achievement"].format(goal=quote(goal).rstrip("。"))
        return words["goal_achievement"].format(goal=_ended(quote(goal), lang))
    return words["boredom"]
