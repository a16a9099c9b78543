"""One persona's conversation: ChatSession, composed of its parts, each in a module of its own:
agent.turn (a turn's generation and commit), agent.recall (what a turn recalls, its prompt),
agent.versions (regenerate, edit, continue, delete) and agent.upkeep (after-turn work, conversation
ends)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from nexus_ark.agent.recall import EMBEDDER_RETRY_S, RECALL_K, SessionRecall, keywords_only
from nexus_ark.agent.reply import ReplyDelta, TurnResult
from nexus_ark.agent.room_turn import SessionRoom
from nexus_ark.agent.turn import MAX_TOOL_ROUNDS, USER_SPEAKER, SessionTurns
from nexus_ark.agent.upkeep import (
    AFTER_TURN_EMBED_LIMIT,
    CATCHUP_READ,
    CONVERSATION_END_KEY,
    END_READS,
    MAX_COMPRESSION_STEPS,
    SessionUpkeep,
)
from nexus_ark.agent.versions import CONTINUE_PROMPT, SessionVersions
from nexus_ark.memory.messages import DEFAULT_ROOM, StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector, EmotionReading
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend
from nexus_ark.providers.embedders import Embedder

# What the rest of Nexus Ark (the runtime, the CLI, the window, tests, bench) imports from here.
__all__ = [
    "AFTER_TURN_EMBED_LIMIT",
    "CATCHUP_READ",
    "CONTINUE_PROMPT",
    "CONVERSATION_END_KEY",
    "EMBEDDER_RETRY_S",
    "END_READS",
    "MAX_COMPRESSION_STEPS",
    "MAX_TOOL_ROUNDS",
    "RECALL_K",
    "USER_SPEAKER",
    "ChatSession",
    "ReplyDelta",
    "TurnResult",
    "keywords_only",
]


class ChatSession(SessionTurns, SessionRoom, SessionVersions, SessionRecall, SessionUpkeep):
    """One persona's conversation in one room: its state lives here, its jobs in the parts it is made of."""

    def __init__(
        self,
        persona: Persona,
        memory: MemoryStore,
        backend: ChatBackend,
        *,
        room: str = DEFAULT_ROOM,
        journal_interval_s: float = 0.5,
        embedder: Embedder | None = None,
        recall_problem: str = "",
        after_turn: Callable[[], None] | None = None,
        emotions: EmotionDetector | None = None,
        internal: ChatBackend | Callable[[], ChatBackend] | None = None,
    ) -> None:
        """internal: the persona's internal model for compression and open questions (or a function that
        loads it when first needed); the chat model when None."""
        self.persona = persona
        self.memory = memory
        self.backend = backend
        self.room = room
        self.journal_interval_s = journal_interval_s
        self.embedder = embedder
        # Why recall by meaning is unavailable (no embedder, or it failed recently); empty when it works.
        self.recall_problem = recall_problem if embedder is None else ""
        self._embedder_retry_at = 0.0
        self._after_turn = after_turn
        self.emotions = emotions  # how the person feels, read from each message (mind.emotion)
        self._recall_exclude: set[str] = set()  # sources the prompt carries already (a regeneration's)
        # How long the last prompt's recall and build took: the turn puts them in meta["timings"].
        self._prompt_timings: dict[str, float] = {}
        # The session is used on its persona's queue thread only (the runtime's; the owner connection
        # refuses other threads in tests), so no lock: these flags only catch re-entry on that thread (a
        # send while a reply's stream is still being read, compression from inside an end).
        self._in_turn = False
        self._internal_source = internal
        self._internal: ChatBackend | None = internal if isinstance(internal, ChatBackend) else None
        # The room the conversation had in the last prompt built (what compression measures against).
        self._conversation_room: int | None = None
        self._in_upkeep = False  # compression and conversation ends, one at a time
        # Set by interrupt_background(): a compression the user's next message would wait for gives way.
        self._background_cancel = threading.Event()
        # The last message's emotion as the head read it, for the internal model's second opinion after
        # the reply (mind.emotion_confirm): (message id, text, reading).
        self._unconfirmed: tuple[int, str, EmotionReading] | None = None

    @property
    def model_name(self) -> str:
        return self.backend.describe()

    def history(self, limit: int = 200) -> list[StoredMessage]:
        return self.memory.messages.recent(self.room, limit)
