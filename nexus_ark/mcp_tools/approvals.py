"""Who may run what: each tool is "ask" (every time; the default), "always" or "never", per persona, in
personas/<name>/tools.toml. A turn the persona starts itself never runs an "ask" tool."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nexus_ark.config import edit_toml_file, load_toml_model
from nexus_ark.notices import notice

TOOLS_FILE = "tools.toml"
Decision = Literal["ask", "always", "never"]


def tool_key(server: str, tool: str) -> str:
    return f"{server}:{tool}"


def split_key(key: str) -> tuple[str, str]:
    """ "server:tool" → ("server", "tool"); refused in words when either half is missing."""
    server, sep, tool = key.partition(":")
    if not sep or not server or not tool:
        raise ValueError(notice("{key} is not SERVER:TOOL (e.g. weather:forecast)", key=repr(key[:80])))
    return server, tool


class ToolDecisions(BaseModel):
    """tools.toml: `[tools]` "server:tool" = "ask" | "always" | "never"."""

    model_config = ConfigDict(extra="ignore")

    tools: dict[str, Decision] = Field(default_factory=dict)

    @field_validator("tools")
    @classmethod
    def keys_are_server_tool(cls, value: dict[str, Decision]) -> dict[str, Decision]:
        for key in value:
            split_key(key)
        return value

    def decision(self, server: str, tool: str) -> Decision:
        return self.tools.get(tool_key(server, tool), "ask")


def load_decisions(persona_folder: Path) -> ToolDecisions:
    return load_toml_model(persona_folder / TOOLS_FILE, ToolDecisions)


def decide(persona_folder: Path, key: str, decision: Decision) -> ToolDecisions:
    """Store one decision ("ask" removes the line: it is the default), keeping the rest of the file."""
    split_key(key)
    current = load_decisions(persona_folder).tools
    changed = {k: v for k, v in current.items() if k != key}
    if decision != "ask":
        changed[key] = decision
    return edit_toml_file(persona_folder / TOOLS_FILE, {"tools": changed}, ToolDecisions)


def may_run(decision: Decision, *, person_present: bool) -> bool | None:
    """True: run it; False: never; None: ask the person first. Without the person there (a message the
    persona writes first, a dream, a room's auto mode) an "ask" tool does not run."""
    if decision == "never":
        return False
    if decision == "always":
        return True
    return None if person_present else False
