"""A tool call's result as text a model can read: text parts joined, other parts named, a structured
result shown as JSON where no text came, and everything cut to a limit with a line saying so."""

from __future__ import annotations

import json
from typing import Any

from nexus_ark.mcp_tools.faults import ToolOutcome
from nexus_ark.notices import notice


def outcome_of(result: Any, max_chars: int) -> ToolOutcome:
    parts: list[str] = []
    for part in getattr(result, "content", None) or []:
        kind = getattr(part, "type", "")
        if kind == "text":
            parts.append(str(getattr(part, "text", "")))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {getattr(part, 'mime_type', '') or getattr(part, 'mimeType', '')}]")
        elif kind == "resource_link":
            parts.append(f"[link: {getattr(part, 'uri', '')}]")
        elif kind == "resource":
            resource = getattr(part, "resource", None)
            parts.append(str(getattr(resource, "text", "") or f"[resource: {getattr(resource, 'uri', '')}]"))
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(p for p in parts if p)
    cut_from = 0
    if len(text) > max_chars:
        cut_from = len(text)
        text = (
            text[:max_chars]
            + "\n"
            + notice(
                "(cut: the result was {total} characters; the first {shown} are shown)",
                total=cut_from,
                shown=max_chars,
            )
        )
    return ToolOutcome(
        text=text,
        is_error=bool(getattr(result, "is_error", False)),
        cut_from=cut_from,
        structured=structured if isinstance(structured, dict) else None,
    )
