"""What a persona's runtime and its parts are given, declared below all of them.

RuntimeHost is the app around a runtime (NexusApp builds it). SoulHost, DreamsHost and RoomsHost are the
narrow faces of the runtime that its parts (runtime/soul_owner.py, dreams.py, room_member.py) may call: the
parts import this module and never persona_runtime, and PersonaRuntime satisfies the protocols. Each part
keeps its own state; what belongs to the runtime (the persona, its conversations) changes only through these
calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nexus_ark.agent.session import ChatSession
from nexus_ark.clock import Clock
from nexus_ark.events import EventHub
from nexus_ark.mcp_tools.offer import ToolSource
from nexus_ark.mind.drives import DriveReport
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend
from nexus_ark.providers.embedders import Embedder

# A streamed turn: given the conversation and the stop flag, what it yields (ReplyDelta..., TurnResult).
StartTurn = Callable[[ChatSession, threading.Event], Iterator[Any]]


@dataclass
class RuntimeHost:
    """What a runtime needs from the app around it (NexusApp builds it): the clock, the event hub, and
    how to load a persona, its models and the embedder. The callables may block (model loads): the runtime
    calls them on its own thread."""

    clock: Clock
    events: EventHub
    load_persona: Callable[[str], Persona]
    chat_backend: Callable[[Persona], ChatBackend]
    internal_backend: Callable[[Persona], ChatBackend]
    embedder: Callable[[], tuple[Embedder | None, str]]
    emotions: EmotionDetector | None
    backups_dir: Callable[[str], Path]
    notify: Callable[[str, str, str], bool]  # title, body, persona slug -> shown
    autonomy_paused: Callable[[], bool]
    # A room's title by its key in memory ("room:<slug>"), None when there is no such room (any more).
    room_title: Callable[[str], str | None] = lambda key: None
    # Where the conversations get MCP tools (app.tools); None: memory tools only.
    tools: ToolSource | None = None


class SoulHost(Protocol):
    """What the soul part asks of its runtime."""

    @property
    def slug(self) -> str: ...

    @property
    def host(self) -> RuntimeHost: ...

    @property
    def persona(self) -> Persona: ...

    def persona_changed(self) -> None:
        """persona.md or persona.toml changed: load them again; every conversation opens anew on its next
        turn. On the queue's thread."""


class DreamsHost(Protocol):
    """What the dreams part asks of its runtime."""

    @property
    def slug(self) -> str: ...

    @property
    def host(self) -> RuntimeHost: ...

    @property
    def persona(self) -> Persona: ...

    def recompute_drives(self, trigger: str) -> DriveReport:
        """Recompute and record the drives, and tell the window. On the queue's thread."""

    def after_dream(self, embedder: Embedder | None) -> None:
        """A dream finished: what it proposed is announced, what it wrote made findable. Queue thread."""


class RoomsHost(Protocol):
    """What the rooms part asks of its runtime."""

    def new_session(self, room: str) -> ChatSession:
        """A new conversation in `room` on the chat model the persona talks on. On the queue's thread."""

    def stream(
        self,
        name: str,
        start: StartTurn,
        cancel: threading.Event | None,
        session: Callable[[], ChatSession] | None = None,
    ) -> Iterator[Any]:
        """Run a streaming turn on the persona's queue; the caller's thread iterates what it yields."""
