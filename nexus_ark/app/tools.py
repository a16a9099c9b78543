"""app.tools: the MCP servers the personas may use, one hub for the process (servers start on first use and
stop with the app), the person's decisions per tool, and the one place a turn gets its MCP tools from.

Asking the person: the front end sets `asker` (the window shows an approval card and waits for the answer;
the terminal asks on a terminal, else allows only what `--allow-tool` named). With no asker set, an "ask"
tool does not run. The asker is called on the persona's queue thread, never the UI thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nexus_ark.app.host import AppRoot
from nexus_ark.mcp_tools.approvals import Decision, decide, load_decisions
from nexus_ark.mcp_tools.faults import ToolFault, ToolFaultError, ToolInfo
from nexus_ark.mcp_tools.hub import McpHub
from nexus_ark.mcp_tools.offer import (
    Approval,
    ApprovalRequest,
    ToolRun,
    ToolRunner,
    can_use_tools,
    most_relevant,
)
from nexus_ark.mcp_tools.servers import MCP_FILE, Scope, ServerConfig, servers_for
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.base import Capabilities
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.secrets import resolve_key
from nexus_ark.providers.tools import ToolBox

log = logging.getLogger(__name__)
Asker = Callable[[ApprovalRequest], Approval]


@dataclass(frozen=True)
class ServerStatus:
    """A server as Settings → Tools and `tools list` show it: its tools, or why none could be listed."""

    name: str
    scope: Scope
    config: ServerConfig
    tools: tuple[ToolInfo, ...] = ()
    fault: ToolFault | None = None


class Tools:
    def __init__(self, root: AppRoot, store: PersonaStore) -> None:
        self._root = root
        self._store = store
        self.hub = McpHub(lambda reference: resolve_key(reference) or "")
        self.asker: Asker | None = None
        self._lock = threading.Lock()
        self._listed: dict[str, tuple[ToolInfo, ...]] = {}  # tools per server config, listed once
        # Each tool's description embedded once per embedder, not at every turn that ranks them.
        self._vectors: dict[tuple[int, str], np.ndarray] = {}

    def servers(self, slug: str | None) -> dict[str, tuple[ServerConfig, Scope]]:
        """The servers a persona may use (the app's alone for None): two small files read, nothing loaded."""
        folder = self._store.root / slug if slug else None
        return servers_for(self._root.layout.root / MCP_FILE, folder)

    def statuses(self, slug: str | None) -> list[ServerStatus]:
        """Each server with its tools (starting the servers not started yet): on a worker."""
        found = []
        for name, (config, scope) in self.servers(slug).items():
            try:
                found.append(ServerStatus(name, scope, config, self._tools(name, config)))
            except ToolFaultError as exc:
                found.append(ServerStatus(name, scope, config, fault=exc.fault))
        return found

    def decide(self, slug: str, key: str, decision: Decision) -> None:
        decide(self._store.load(slug).folder, key, decision)

    def decisions(self, slug: str) -> dict[str, Decision]:
        return dict(load_decisions(self._store.load(slug).folder).tools)

    def offer(
        self,
        slug: str,
        capabilities: Capabilities,
        conversation: str,
        embedder: Embedder | None,
        *,
        person_present: bool,
        record: Callable[[ToolRun], None],
        box: ToolBox,
        cancel: threading.Event | None = None,
    ) -> list[ToolInfo]:
        """Add this turn's MCP tools to `box`: none for a model that cannot use tools, else the most
        relevant few of every server that answers (one that does not is logged and left out)."""
        if not can_use_tools(capabilities):
            return []
        servers = {name: config for name, (config, _) in self.servers(slug).items()}
        if not servers:  # the usual turn: no persona is loaded for it
            return []
        persona = self._store.load(slug)
        tools: list[ToolInfo] = []
        for name, config in servers.items():
            try:
                tools.extend(self._tools(name, config))
            except ToolFaultError as exc:
                log.warning("MCP server %s left out of this turn: %s", name, exc.fault.message)
        never = {k for k, v in load_decisions(persona.folder).tools.items() if v == "never"}
        tools = [t for t in tools if t.key not in never]  # never offered, so never called
        chosen = most_relevant(
            tools,
            {name: config.use_when for name, config in servers.items()},
            conversation,
            embedder.embed_query if embedder else None,
            self._passages(embedder) if embedder else None,
        )
        runner = ToolRunner(
            self.hub,
            servers,
            persona.settings.name,
            persona.folder,
            person_present=person_present,
            ask=self.asker,
            record=record,
            cancel=cancel,
        )
        runner.add_to(box, chosen)
        return chosen

    def _passages(self, embedder: Embedder) -> Callable[[Sequence[str]], np.ndarray]:
        def embed(texts: Sequence[str]) -> np.ndarray:
            missing = [t for t in dict.fromkeys(texts) if (id(embedder), t) not in self._vectors]
            if missing:
                for text, vector in zip(missing, embedder.embed_passages(missing), strict=True):
                    self._vectors[(id(embedder), text)] = vector
            return np.stack([self._vectors[(id(embedder), t)] for t in texts])

        return embed

    def _tools(self, name: str, config: ServerConfig) -> tuple[ToolInfo, ...]:
        key = f"{name}\n{config.model_dump_json()}"
        with self._lock:
            listed = self._listed.get(key)
        if listed is None:
            listed = tuple(self.hub.tools(name, config))
            with self._lock:
                self._listed[key] = listed
        return listed

    def close(self) -> None:
        self.hub.close()
