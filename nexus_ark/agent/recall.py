"""What a turn recalls and the prompt it is sent with: memory's context for the text (archive search by
meaning, keywords when the embedder is down), the running summary and the turns after it."""

from __future__ import annotations

import logging
import time

from nexus_ark.agent.prompt import MESSAGE_OVERHEAD, BuiltPrompt, MemoryContext, build_prompt
from nexus_ark.agent.prompt_inputs import gather_inputs
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.summaries import ConversationSummary, Summaries
from nexus_ark.notices import Notice, notice
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend, context_window
from nexus_ark.providers.embedders import Embedder

log = logging.getLogger(__name__)

RECALL_K = 3
EMBEDDER_RETRY_S = 60.0


def keywords_only(problem: str) -> Notice:
    """What a turn whose recall fell back to keywords says (the embedder failed: `problem`)."""
    return notice("Recall by meaning is unavailable, so keywords only were used: {problem}", problem=problem)


# How the person's messages are stored (agent.turn.USER_SPEAKER, which imports this module).
PERSON_SPEAKER = "user"


class SessionRecall:
    """ChatSession's recall and prompt building (agent.session composes it)."""

    persona: Persona
    memory: MemoryStore
    backend: ChatBackend
    room: str
    embedder: Embedder | None
    recall_problem: str

    def _memory_context(self, text: str, history: list[StoredMessage]) -> MemoryContext:
        """What memory puts into this turn's prompt (agent.prompt_inputs): the stable components, the
        episodes before the conversation, recalled items not already in the prompt, and entities and
        documents that match the text."""
        in_prompt = {f"msg:{m.id}" for m in history}
        # Earlier versions and the branches they left are off the conversation's line: not recalled either
        # (a regenerated reply must not come back through memory).
        off_line = {
            f"msg:{r[0]}"
            for r in self.memory.db.execute(
                "select id from messages where room = ? and hidden = 1", [self.room]
            ).fetchall()
        }
        k = RECALL_K + len(in_prompt) + 1 + min(len(off_line), 20)
        hits = None
        if self.embedder is not None and time.monotonic() >= self._embedder_retry_at:
            try:
                hits = self.memory.archive.search(text, self.embedder, k=k)
                self.recall_problem = ""
            except NexusArkError as exc:  # the embedder is down: keyword recall still works
                log.warning("recall by meaning unavailable: %s", exc)
                self.recall_problem = str(exc)
                # Don't wait on a server that is down at every turn: try it again in a minute.
                self._embedder_retry_at = time.monotonic() + EMBEDDER_RETRY_S
        if hits is None:
            hits = self.memory.archive.search(text, None, k=k, mode="fts")
        summary = self._summary()
        if summary is not None:  # the prompt carries it, and it holds what its predecessors said
            store = self.memory
            chain = Summaries(store.db, store.archive, store.activity).all(self.room)
            off_line |= {s.source_id for s in chain if s.id <= summary.id}
        hits = [h for h in hits if h.source_id not in off_line and h.source_id not in self._recall_exclude]
        context = gather_inputs(
            self.memory,
            text,
            history,
            hits,
            lookback_days=self.persona.settings.conversation.episode_lookback_days,
            now=self.memory.messages.clock.now(),
            recall_k=RECALL_K,
            speakers=self._speaker_names(),
        )
        context.summary = summary.text if summary is not None else ""
        return context

    def _speaker_names(self) -> dict[str, str]:
        """Who said a recalled message, by the names the prompt uses: the person's name where one is known
        (Persona.user_name), the persona's own name for its folder's."""
        names = {self.persona.slug: self.persona.settings.name}
        if self.persona.user_name:
            names[PERSON_SPEAKER] = self.persona.user_name
        return names

    def _summaries(self) -> Summaries:
        store = self.memory
        return Summaries(store.db, store.archive, store.activity, store.messages.clock)

    def _summary(self) -> ConversationSummary | None:
        """The running summary of this conversation's older turns (None before the first compression)."""
        return self._summaries().current(self.room)

    def _after_summary(self, history: list[StoredMessage]) -> list[StoredMessage]:
        """The turns the summary does not cover: the prompt carries the summary and these verbatim."""
        summary = self._summary()
        return history if summary is None else [m for m in history if m.id > summary.last_id]

    def preview_prompt(
        self, text: str, history: list[StoredMessage] | None = None, *, feelings: str | None = None
    ) -> BuiltPrompt:
        """The prompt a message would be sent with, and each section's tokens (the model's tokenizer where
        it is local). Stores nothing: a dry run may use a read-only memory. Raises NexusArkError when the
        stable sections alone cannot fit the model's context."""
        text = text.strip()
        if not text:
            raise NexusArkError(notice("The message is empty: there is no prompt to show."))
        if history is None:
            limit = self.persona.settings.conversation.history_messages
            history = self.memory.messages.recent(self.room, limit)
        history = self._after_summary(history)
        started = time.perf_counter()
        memory = self._memory_context(text, history)
        if feelings is not None:  # a message written first carries the full internal state instead
            memory.feelings = feelings
        recalled_at = time.perf_counter()
        # The loaded model's context where the backend knows it (a --model override), else the persona's.
        context_size = context_window(self.backend, self.persona.settings.model.context_size)
        built = build_prompt(
            self.persona,
            history,
            text,
            memory,
            count=self.backend.count_tokens,
            context_size=context_size,
            max_tokens=self.persona.settings.model.max_tokens,
        )
        self._prompt_timings = {
            "recall_s": round(recalled_at - started, 4),
            "build_s": round(time.perf_counter() - recalled_at, 4),
        }
        if self.recall_problem:
            built.warnings.append(keywords_only(self.recall_problem))
        # The conversation's room: what the window leaves after every other section (compression's measure).
        others = sum(r.tokens for r in built.sections if r.name not in ("conversation", "summary"))
        available = context_size - self.persona.settings.model.max_tokens - MESSAGE_OVERHEAD
        self._conversation_room = max(0, available - others)
        log.debug("prompt sections: %s", [(r.name, r.tokens, r.cut) for r in built.sections])
        return built
