"""One persona's conversation: ChatSession, one state object (agent.session_state) and the parts that
work on it, each in a module of its own and each given what it needs: agent.recall (what a turn recalls,
its prompt), agent.turn (a turn's generation and commit, and storing an incoming message),
agent.room_turn (its part in a room), agent.versions (regenerate, edit, continue, delete) and
agent.upkeep (after-turn work, conversation ends). ChatSession is the face the runtime, the CLI and the
tests use; it keeps no state of its own."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from nexus_ark.agent.compression import CompressionResult
from nexus_ark.agent.open_questions import ResolutionReport
from nexus_ark.agent.prompt import BuiltPrompt
from nexus_ark.agent.recall import RECALL_K, Recall, keywords_only
from nexus_ark.agent.reply import ReplyDelta, TurnResult
from nexus_ark.agent.reply_stream import MAX_TOOL_ROUNDS
from nexus_ark.agent.room_turn import HeardLine, RoomTurns
from nexus_ark.agent.session_state import EMBEDDER_RETRY_S, SessionState
from nexus_ark.agent.turn import USER_SPEAKER, Turns
from nexus_ark.agent.upkeep import (
    AFTER_TURN_EMBED_LIMIT,
    CATCHUP_READ,
    CONVERSATION_END_KEY,
    END_READS,
    MAX_COMPRESSION_STEPS,
    InternalSource,
    Upkeep,
)
from nexus_ark.agent.versions import CONTINUE_PROMPT, Versions
from nexus_ark.mcp_tools.offer import ToolSource
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


class ChatSession:
    """One persona's conversation in one room: `state` (SessionState) and the parts `recall`, `turns`,
    `room`, `versions` and `upkeep`, each given the state and the parts it builds on."""

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
        internal: InternalSource = None,
        tools: ToolSource | None = None,
    ) -> None:
        """internal: the persona's internal model for compression and open questions (or a function that
        loads it when first needed); the chat model when None."""
        self.state = SessionState(
            persona,
            memory,
            backend,
            room=room,
            journal_interval_s=journal_interval_s,
            embedder=embedder,
            emotions=emotions,
            recall_problem=recall_problem if embedder is None else "",
            tools=tools,
        )
        self.recall = Recall(self.state)
        self.turns = Turns(self.state, self.recall)
        self.room_turns = RoomTurns(self.state, self.turns, self.recall)
        self.versions = Versions(self.state, self.turns, self.recall)
        self.upkeep = Upkeep(self.state, self.recall, internal=internal, after_turn=after_turn)

    # -- what the conversation is -------------------------------------------------------------------
    @property
    def persona(self) -> Persona:
        return self.state.persona

    @property
    def memory(self) -> MemoryStore:
        return self.state.memory

    @property
    def backend(self) -> ChatBackend:
        return self.state.backend

    @property
    def room(self) -> str:
        return self.state.room

    @property
    def embedder(self) -> Embedder | None:
        return self.state.embedder

    @property
    def emotions(self) -> EmotionDetector | None:
        return self.state.emotions

    @emotions.setter
    def emotions(self, detector: EmotionDetector | None) -> None:
        self.state.emotions = detector

    @property
    def recall_problem(self) -> str:
        """Why recall by meaning is unavailable (no embedder, or it failed recently); empty when it works."""
        return self.state.recall_problem

    @property
    def model_name(self) -> str:
        return self.state.backend.describe()

    def history(self, limit: int = 200) -> list[StoredMessage]:
        return self.state.memory.messages.recent(self.state.room, limit)

    # -- the person's turns (agent.turn, agent.versions) ----------------------------------------------
    def send(self, text: str, cancel: threading.Event | None = None) -> Iterator[ReplyDelta | TurnResult]:
        return self.turns.send(text, cancel)

    def write_first(
        self,
        instruction: str,
        state: str,
        reason: dict[str, Any],
        cancel: threading.Event | None = None,
        *,
        text: str | None = None,
    ) -> TurnResult:
        return self.turns.write_first(instruction, state, reason, cancel, text=text)

    def preview_prompt(
        self, text: str, history: list[StoredMessage] | None = None, *, feelings: str | None = None
    ) -> BuiltPrompt:
        return self.recall.preview_prompt(text, history, feelings=feelings)

    def regenerate(
        self, reply_id: int, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        return self.versions.regenerate(reply_id, cancel)

    def edit(
        self, message_id: int, text: str, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        return self.versions.edit(message_id, text, cancel)

    def continue_reply(
        self, reply_id: int, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        return self.versions.continue_reply(reply_id, cancel)

    def delete(self, message_id: int, *, forget: bool = False) -> None:
        self.versions.delete(message_id, forget=forget)

    # -- a room (agent.room_turn) ---------------------------------------------------------------------
    def hear(self, lines: Sequence[HeardLine]) -> int:
        return self.room_turns.hear(lines)

    def keep_note(self, key: str, sender: str, text: str) -> bool:
        return self.room_turns.keep_note(key, sender, text)

    def respond(
        self,
        others: Sequence[str],
        cancel: threading.Event | None = None,
        *,
        answering_person: bool = False,
        not_again: Sequence[str] = (),
    ) -> Iterator[ReplyDelta | TurnResult]:
        return self.room_turns.respond(others, cancel, answering_person=answering_person, not_again=not_again)

    # -- after a turn, and the conversation's end (agent.upkeep) -------------------------------------
    def after_turn(self) -> None:
        self.upkeep.after_turn()

    def internal_backend(self) -> ChatBackend:
        return self.upkeep.internal_backend()

    def interrupt_background(self) -> None:
        self.upkeep.interrupt_background()

    def compress_if_due(self, *, force: bool = False) -> CompressionResult | None:
        return self.upkeep.compress_if_due(force=force)

    def embed_new_memories(self) -> int:
        return self.upkeep.embed_new_memories()

    def confirm_emotion(self) -> EmotionReading | None:
        return self.upkeep.confirm_emotion()

    def end_conversation(self) -> ResolutionReport | None:
        return self.upkeep.end_conversation()

    def end_if_idle(self, now: datetime) -> ResolutionReport | None:
        return self.upkeep.end_if_idle(now)
