"""What `chat` and `room chat` say alike: a reply as one line of a pipe, and the note on stderr when a
persona's model does not speak its language."""

from __future__ import annotations

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.prompts import LANGUAGE_NAMES


def language_note(app: NexusApp, slug: str, name: str) -> str:
    """The line a chat prints on stderr when the persona's model does not speak its language (ひかり on the
    English-only bundled model), and what to get instead; "" when it does (or the catalogue cannot tell).
    A room prints the same line for each such member (cli/room.py)."""
    try:
        advice = app.models.language_advice(slug)
    except NexusArkError:  # the catalogue unreadable: nothing to say, the chat goes on
        return ""
    if advice is None:
        return ""
    language = LANGUAGE_NAMES.get(advice.language, advice.language)
    line = (
        f"note: {name} speaks {language}, but its model ({advice.model_aside}) does not: replies may be"
        " broken."
    )
    if advice.suggestion is not None:
        line += (
            f" Suggested for {language}: `nexus-ark model get {advice.suggestion.id}`, then chat with"
            " --model and the spec it prints, or choose it in the window's Model settings."
        )
    return line


def one_line(reply: str) -> str:
    """A reply as one line of a pipe: its lines (every kind of line break: str.splitlines) without trailing
    spaces, joined by \\n, and a backslash written \\\\ so the two never read alike."""
    escaped = (line.rstrip().replace("\\", "\\\\") for line in reply.strip().splitlines())
    return "\\n".join(escaped).rstrip()
