"""Why a persona wrote first, as the conversation and the inbox both show it."""

from __future__ import annotations

from ui.util.i18n import tr


def why_line(reason: dict) -> str:
    """The reason stored with a message the persona wrote first, as one line for the person."""
    why = str(reason.get("why") or "")
    if reason.get("trigger") == "event":
        return tr("it planned this: {what}", what=why.removeprefix("planned: "))
    if reason.get("trigger") == "routine":
        return tr("a routine: {what}", what=why.removeprefix("routine "))
    return str(reason.get("narrative") or why)
