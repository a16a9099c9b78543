"""One message as the conversation view shows it (Bubble), what the view shows (ShownBubbles: the state its
parts share, owned by ChatView), and how a bubble is drawn (BubblePainter): a framed block with the avatar,
the name, the time, the words as Markdown, a status note and the links under it, in the colours of the
view's palette. The parts of ChatView (ui/chat/chat_view.py) each get the ShownBubbles they read."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PySide6.QtGui import (
    QColor,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocumentFragment,
    QTextFrame,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QWidget

from nexus_ark.memory.conversation_pages import ShownMessage
from ui.util.chat_markdown import to_document
from ui.util.i18n import N_, tr

AVATAR_PX = 26
_STATUS_NOTES = {
    "stopped": N_("stopped"),
    "interrupted": N_("interrupted: the app closed while this reply was being written"),
    "error": N_("the model failed"),
    "cut": N_("cut at the token limit: Continue goes on"),
}
_LIGHT = {
    "user": "#e8f0fe",
    "assistant": "#f4f1ea",
    "user_name": "#1a56c4",
    "assistant_name": "#8a5a00",
    "muted": "#888888",
    "why": "#6a5acd",
    "note": "#aa3333",
    "link": "#5f6b7a",
    "hit": "#fff59d",
    "current": "#ffb74d",
}
_DARK = {
    "user": "#25344a",
    "assistant": "#3a3428",
    "user_name": "#8ab4f8",
    "assistant_name": "#e6b450",
    "muted": "#9a9a9a",
    "why": "#b39ddb",
    "note": "#f28b82",
    "link": "#a9b4c2",
    "hit": "#6d6220",
    "current": "#b86e00",
}


@dataclass(eq=False)  # a bubble is itself: two with the same words are still two
class Bubble:
    """One message as the view shows it. id is None for a message not saved yet (a reply streaming)."""

    id: int | None
    role: str
    who: str  # the persona's name; a message of the person's says "You" in the language of the moment
    text: str
    timestamp: str | None = None
    status: str = "complete"
    why: str = ""
    version_ids: list[int] = field(default_factory=list)
    frame: QTextFrame | None = field(default=None, repr=False)
    # The MCP tools the reply used (meta["tool_calls"]: name, arguments, result), folded into one line
    # under it until the person opens them.
    tools: list[dict[str, Any]] = field(default_factory=list)
    tools_open: bool = False

    @classmethod
    def of(cls, shown: ShownMessage, persona_name: str, why: str = "") -> Bubble:
        m = shown.message
        cut = m.status == "complete" and m.meta.get("cut_by_limit")
        return cls(
            id=m.id,
            role=m.role,
            who=persona_name,
            text=m.content,
            timestamp=m.created_at,
            status="cut" if cut else m.status,
            why=why,
            version_ids=shown.version_ids,
            tools=[
                c
                for c in m.meta.get("tool_calls") or []
                if isinstance(c, dict) and "__" in str(c.get("name"))
            ],
        )


def time_label(iso_timestamp: str | None) -> str:
    """Today's messages show the time; older ones the date too."""
    try:
        when = (
            datetime.fromisoformat(iso_timestamp).astimezone()
            if iso_timestamp
            else datetime.now().astimezone()
        )
    except (ValueError, OverflowError):  # a year-1 time an older version imported: no label, no traceback
        return ""
    return when.strftime("%H:%M" if when.date() == datetime.now().date() else "%Y-%m-%d %H:%M")


@dataclass
class ShownBubbles:
    """What the conversation view shows: its bubbles in order, whether there is more either side and
    whether it was asked for, the hint of an empty conversation, and the reply streaming (one of bubbles)."""

    bubbles: list[Bubble] = field(default_factory=list)
    has_older: bool = False
    has_newer: bool = False
    loading_older: bool = False
    loading_newer: bool = False
    placeholder_shown: bool = False
    stream: Bubble | None = None

    def message(self, message_id: int | None) -> Bubble | None:
        return next((b for b in self.bubbles if b.id == message_id), None)


class BubblePainter:
    """Bubbles drawn into a view's document, in the colours of its palette (light or dark)."""

    def __init__(self, view: QWidget) -> None:
        self.view = view

    @property
    def colors(self) -> dict[str, str]:
        return _DARK if self.view.palette().color(QPalette.ColorRole.Base).lightness() < 128 else _LIGHT

    def draw(self, cursor: QTextCursor, bubble: Bubble) -> None:
        colors = self.colors
        user = bubble.role == "user"
        fmt = QTextFrameFormat()
        fmt.setBackground(QColor(colors["user" if user else "assistant"]))
        fmt.setPadding(8)
        fmt.setMargin(4)
        fmt.setBorder(0)
        if user:
            fmt.setLeftMargin(60)
        else:
            fmt.setRightMargin(60)
        frame = cursor.insertFrame(fmt)
        bubble.frame = frame
        who = tr("You") if user else bubble.who
        avatar = "avatar:user" if user else "avatar:persona"
        header = (
            f"<img src='{avatar}' width='{AVATAR_PX}' height='{AVATAR_PX}' style='vertical-align:middle'>"
            f"&nbsp;<span style='color:{colors['user_name' if user else 'assistant_name']}; font-weight:600'>"
            f"{html.escape(who)}</span>&nbsp;&nbsp;<span style='color:{colors['muted']}; font-size:small'>"
            f"{html.escape(time_label(bubble.timestamp))}</span>"
        )
        if bubble.why:  # the persona wrote first: why, in its own words and numbers
            header += (
                f"&nbsp;&nbsp;<span style='color:{colors['why']}; font-size:small'>"
                f"✦ {html.escape(tr('wrote first'))}: {html.escape(bubble.why)}</span>"
            )
        cursor.insertHtml(header)
        cursor.insertBlock()
        if bubble.status == "streaming" and not bubble.text:
            # A typing indicator until the first words arrive; the first piece replaces it.
            cursor.insertHtml(f"<span style='color:{colors['muted']}'>…</span>")
        elif bubble.text:
            cursor.insertFragment(QTextDocumentFragment(to_document(bubble.text)))
        if bubble.status == "streaming":
            return
        if bubble.tools:
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertHtml(self.tool_lines(bubble))
        note = _STATUS_NOTES.get(bubble.status)
        if note:
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())  # a plain block, never a list's item
            cursor.insertHtml(
                f"<span style='color:{colors['note']}; font-style:italic'>({html.escape(tr(note))})</span>"
            )
        if bubble.id is not None:
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertHtml(self.links(bubble))

    def tool_lines(self, bubble: Bubble) -> str:
        """The tools a reply used: one folded line ("⚙ Used helper:weather — show"), or each call with its
        arguments and what the tool gave."""
        colors = self.colors
        names = [str(call.get("name", "")).replace("__", ":", 1) for call in bubble.tools]
        toggle = tr("hide") if bubble.tools_open else tr("show")
        link = (
            f"<a href='nexus:tools/{bubble.id}' style='color:{colors['link']}; text-decoration:none'>"
            f"{html.escape(toggle)}</a>"
        )
        lines = [f"⚙ {html.escape(tr('Used {tools}', tools=', '.join(names)))} — {link}"]
        if bubble.tools_open:
            for name, call in zip(names, bubble.tools, strict=True):
                arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)[:300]
                result = str(call.get("result", ""))[:500]
                lines.append(html.escape(f"{name} {arguments} → {result}"))
        return f"<span style='font-size:small; color:{colors['muted']}'>{'<br>'.join(lines)}</span>"

    def links(self, bubble: Bubble) -> str:
        color = self.colors["link"]

        def link(kind: str, label: str, message_id: int | None = None) -> str:
            target = bubble.id if message_id is None else message_id
            return (
                f"<a href='nexus:{kind}/{target}' style='color:{color}; text-decoration:none'>"
                f"{html.escape(label)}</a>"
            )

        parts = [link("copy", tr("Copy"))]
        if bubble.role == "assistant":
            parts.insert(0, link("speak", tr("▶ Play")))  # heard again, in the persona's voice
            parts.append(link("regenerate", tr("Regenerate")))
        elif bubble.role == "user":
            parts.append(link("edit", tr("Edit")))
        parts.append(link("delete", tr("Delete")))
        links = " · ".join(parts)
        ids = bubble.version_ids
        if len(ids) > 1 and bubble.id in ids:
            i = ids.index(bubble.id)
            back = link("version", "‹", ids[i - 1]) if i > 0 else "‹"
            forward = link("version", "›", ids[i + 1]) if i + 1 < len(ids) else "›"
            links += f"&nbsp;&nbsp;&nbsp;{back} {i + 1}/{len(ids)} {forward}"
        return f"<span style='font-size:small; color:{color}'>{links}</span>"
