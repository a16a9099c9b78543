"""What the parts of a conversation share (agent.session composes them): who talks, in which room, on
which model, and the few things more than one part reads, each declared here: the person's turn under
way and the background work that gives way to it (TurnGate), how recall by meaning stands, and the
emotion reading that waits for the internal model's second opinion."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from nexus_ark.errors import NexusArkError
from nexus_ark.mcp_tools.offer import ToolRun, ToolSource
from nexus_ark.memory.messages import DEFAULT_ROOM
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector, EmotionReading
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend
from nexus_ark.providers.embedders import Embedder

# An embedder that failed is not asked again before this many seconds (recall, after-turn embedding).
EMBEDDER_RETRY_S = 60.0


class TurnGate:
    """One thing at a time for the person (send, regenerate, edit, continue, a room's answer, a message
    written first); background work told to give way (interrupt_background) waits for the next turn.

    The session is used on its persona's queue thread only (the runtime's; the owner connection refuses
    other threads in tests), so no lock: `busy` only catches re-entry on that thread (a send while a
    reply's stream is still being read). `background_cancel` is set from other threads: an Event."""

    def __init__(self) -> None:
        self.busy = False
        self.background_cancel = threading.Event()

    @contextmanager
    def persons_turn(self, name: str) -> Iterator[None]:
        """While it runs, background work that was told to give way may follow it again."""
        if self.busy:
            raise NexusArkError(notice("{name} is still answering the previous message.", name=name))
        self.busy = True
        self.background_cancel.clear()
        try:
            yield
        finally:
            self.busy = False

    def interrupt_background(self) -> None:
        self.background_cancel.set()


@dataclass
class SessionState:
    """One persona's conversation in one room, as every part of it sees it."""

    persona: Persona
    memory: MemoryStore
    backend: ChatBackend
    room: str = DEFAULT_ROOM
    journal_interval_s: float = 0.5
    embedder: Embedder | None = None
    emotions: EmotionDetector | None = None  # how the person feels, read from each message (mind.emotion)
    # Why recall by meaning is unavailable (no embedder, or it failed recently); empty when it works.
    recall_problem: str = ""
    # When a failed embedder may be asked again (time.monotonic()).
    embedder_retry_at: float = 0.0
    # The last message's emotion as the head read it, for the internal model's second opinion after the
    # reply (mind.emotion_confirm): (message id, text, reading). The turn sets it, upkeep takes it.
    unconfirmed: tuple[int, str, EmotionReading] | None = None
    gate: TurnGate = field(default_factory=TurnGate)
    # Where the turns get MCP tools (app.tools; None: memory tools only), the person's newest words (what
    # the tools offered are chosen by), and the calls of the turn under way (indexed as tool results).
    tools: ToolSource | None = None
    latest_text: str = ""
    tool_runs: list[ToolRun] = field(default_factory=list)

    def embedder_ready(self) -> bool:
        """An embedder is there and did not fail in the last EMBEDDER_RETRY_S."""
        return self.embedder is not None and time.monotonic() >= self.embedder_retry_at

    def embedder_failed(self) -> None:
        """Don't wait on a server that is down at every turn: try it again in a minute."""
        self.embedder_retry_at = time.monotonic() + EMBEDDER_RETRY_S

    def persons_turn(self) -> AbstractContextManager[None]:
        """The person's turn (TurnGate.persons_turn), refused in the persona's name while one runs."""
        return self.gate.persons_turn(self.persona.settings.name)
