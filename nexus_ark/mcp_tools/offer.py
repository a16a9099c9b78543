"""Which MCP tools a turn offers the model and what happens when it calls one: offered only to a model that
can use tools (never the bundled one), at most a few at once (the most relevant to the conversation by e5
similarity, each server's "use when" included), and each call goes through the person's decision for that
tool: "always" runs, "never" and a turn the persona started itself do not, "ask" asks the person first."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from nexus_ark.mcp_tools.approvals import decide, load_decisions, may_run
from nexus_ark.mcp_tools.faults import ToolFault, ToolFaultError, ToolInfo, ToolOutcome
from nexus_ark.mcp_tools.hub import McpHub
from nexus_ark.mcp_tools.servers import ServerConfig
from nexus_ark.prompts.protocol import (
    TOOL_DECLINED,
    TOOL_NEEDS_PERSON,
    TOOL_NEVER,
    TOOL_REPORTED_ERROR,
    TOOL_UNAVAILABLE,
)
from nexus_ark.providers.base import Capabilities, ToolSpec
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.tools import ToolBox, ToolHandler

log = logging.getLogger(__name__)
MAX_OFFERED = 8  # tools offered at once: more crowd the prompt and confuse a small model
Approval = Literal["once", "always", "deny"]
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class ApprovalRequest:
    """What the person sees before a tool runs: the server, the tool, the arguments as the model wrote
    them, and what the tool says it does. `stopped`: the asking turn's stop (Ctrl-C in `nexus-ark chat`);
    once set, the question has no one waiting for its answer and the asker gives way (the tool does not
    run), rather than keep the turn, and what the person types next, to itself."""

    persona: str
    tool: ToolInfo
    arguments: dict[str, Any]
    stopped: threading.Event | None = None


@dataclass(frozen=True)
class ToolRun:
    """One call as the conversation and the timeline show it."""

    tool: ToolInfo
    arguments: dict[str, Any]
    outcome: ToolOutcome | None
    fault: ToolFault | None
    decision: str  # "always", "once", "denied", "never", "not asked"


Asker = Callable[[ApprovalRequest], Approval]
Recorder = Callable[[ToolRun], None]


class ToolSource(Protocol):
    """Where a turn gets its MCP tools (app.tools): added to the turn's `box` for the persona `slug`, none
    for a model that cannot use them; `person_present` False for a turn nobody can answer a question in.
    Each call is told to `record`; a question to the person gives way once `cancel` (the turn's stop) is
    set. Returns the tools offered."""

    def offer(
        self,
        slug: str,
        capabilities: Capabilities,
        conversation: str,
        embedder: Embedder | None,
        *,
        person_present: bool,
        record: Recorder,
        box: ToolBox,
        cancel: threading.Event | None = None,
    ) -> list[ToolInfo]: ...


def can_use_tools(capabilities: Capabilities) -> bool:
    """Native tool calls, or the text protocol on a model big enough to follow it (tiny models invent
    calls: the bundled model is never offered a tool that acts on the world)."""
    return capabilities.tools or (capabilities.text_tools and capabilities.reflects)


def model_name(tool: ToolInfo) -> str:
    """The name the model calls it by: server and tool, in the characters every provider allows."""
    return _NAME_UNSAFE.sub("_", f"{tool.server}__{tool.name}")[:64]


def most_relevant(
    tools: Sequence[ToolInfo],
    hints: dict[str, str],
    conversation: str,
    embed_query: Callable[[str], np.ndarray] | None,
    embed_passages: Callable[[Sequence[str]], np.ndarray] | None,
    cap: int = MAX_OFFERED,
) -> list[ToolInfo]:
    """The `cap` tools nearest the conversation by e5 similarity (the tool's description and its server's
    "use when"); all of them when they fit, and the servers' own order when no embedder works."""
    if len(tools) <= cap:
        return list(tools)
    if embed_query is None or embed_passages is None:
        return list(tools)[:cap]
    texts = [f"{hints.get(t.server, '')} {t.name.replace('_', ' ')}: {t.description}".strip() for t in tools]
    try:
        query = np.asarray(embed_query(conversation[-2000:]), dtype=np.float32)
        passages = np.asarray(embed_passages(texts), dtype=np.float32)
    except Exception as exc:  # a tool offer never stops a turn: the servers' order then
        log.warning("ranking tools by relevance failed: %s", exc)
        return list(tools)[:cap]
    scores = passages @ query
    order = np.argsort(-scores, kind="stable")[:cap]
    return [tools[int(i)] for i in order]


class ToolRunner:
    """Runs the MCP tools of one turn for one persona, through the person's decisions."""

    def __init__(
        self,
        hub: McpHub,
        servers: dict[str, ServerConfig],
        persona: str,
        persona_folder: Path,
        *,
        person_present: bool,
        ask: Asker | None,
        record: Recorder,
        cancel: threading.Event | None = None,
    ) -> None:
        self.hub = hub
        self.servers = servers
        self.persona = persona
        self.folder = persona_folder
        self.person_present = person_present
        self.ask = ask
        self.record = record
        self.cancel = cancel

    def add_to(self, box: ToolBox, tools: Sequence[ToolInfo]) -> None:
        for tool in tools:
            hint = self.servers[tool.server].use_when
            description = f"{tool.description} (Use when: {hint})" if hint else tool.description
            schema = tool.input_schema or {"type": "object", "properties": {}}
            box.add(
                ToolSpec(name=model_name(tool), description=description, parameters=schema),
                self.handler(tool),
            )

    def handler(self, tool: ToolInfo) -> ToolHandler:
        return lambda arguments: self.run(tool, arguments)

    def run(self, tool: ToolInfo, arguments: dict[str, Any]) -> str:
        """What the model reads back: the tool's result, or in words why it did not run."""
        stored = load_decisions(self.folder).decision(tool.server, tool.name)
        allowed, decision = may_run(stored, person_present=self.person_present), str(stored)
        if allowed is None and self.ask is not None:
            answer = self.ask(ApprovalRequest(self.persona, tool, arguments, self.cancel))
            if answer == "always":
                decide(self.folder, tool.key, "always")
            allowed, decision = answer != "deny", ("denied" if answer == "deny" else answer)
        if not allowed:
            said = {"never": TOOL_NEVER, "denied": TOOL_DECLINED}.get(decision, TOOL_NEEDS_PERSON)
            shown = decision if decision in ("never", "denied") else "not asked"
            self.record(ToolRun(tool, arguments, None, None, shown))
            return said.format(tool=tool.key)
        try:
            outcome = self.hub.call(tool.server, self.servers[tool.server], tool, arguments)
        except ToolFaultError as exc:
            self.record(ToolRun(tool, arguments, None, exc.fault, decision))
            return TOOL_UNAVAILABLE.format(tool=tool.key, problem=str(exc.fault.message))
        self.record(ToolRun(tool, arguments, outcome, None, decision))
        return TOOL_REPORTED_ERROR.format(text=outcome.text) if outcome.is_error else outcome.text
