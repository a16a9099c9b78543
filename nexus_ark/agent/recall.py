"""What a turn recalls and the prompt it is sent with: memory's context for the text (archive search by
meaning, keywords when the embedder is down), the running summary and the turns after it."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

from nexus_ark.agent.prompt import MESSAGE_OVERHEAD, BuiltPrompt, MemoryContext, build_prompt
from nexus_ark.agent.prompt_inputs import gather_inputs
from nexus_ark.agent.session_state import EMBEDDER_RETRY_S, SessionState
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.summaries import ConversationSummary, Summaries
from nexus_ark.mind.emotion import read_text
from nexus_ark.notices import Notice, notice
from nexus_ark.providers.base import context_window

__all__ = ["EMBEDDER_RETRY_S", "PERSON_SPEAKER", "RECALL_K", "Recall", "keywords_only"]

log = logging.getLogger(__name__)

RECALL_K = 3


def keywords_only(problem: str) -> Notice:
    """What a turn whose recall fell back to keywords says (the embedder failed: `problem`)."""
    return notice("Recall by meaning is unavailable, so keywords only were used: {problem}", problem=problem)


# How the person's messages are stored (agent.turn.USER_SPEAKER, which imports this module).
PERSON_SPEAKER = "user"


def meaning_of(text: str) -> str:
    """What of the message recall's vector is made from: the text the emotion head reads (its opening, less
    a leading greeting), so the turn embeds the message once and both use it (providers/embedders.py
    remembers it). With a greeting before each LoCoMo dev question, recall@10 was no lower without it
    (docs/benchmarks.md, Emotion speed); the keyword rankings still read the whole message."""
    return read_text(text)


class Recall:
    """A conversation's recall and prompt building: a part of ChatSession (agent.session), given the
    session's state. What the last prompt measured is kept for the turn (`timings`) and for compression
    (`conversation_room`)."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        # How long the last prompt's recall and build took: the turn puts them in meta["timings"].
        self.timings: dict[str, float] = {}
        # The room the conversation had in the last prompt built (what compression measures against);
        # None before the first prompt.
        self.conversation_room: int | None = None

    def memory_context(
        self, text: str, history: list[StoredMessage], exclude: Collection[str] = ()
    ) -> MemoryContext:
        """What memory puts into this turn's prompt (agent.prompt_inputs): the stable components, the
        episodes before the conversation, recalled items not already in the prompt, and entities and
        documents that match the text."""
        state, memory = self.state, self.state.memory
        in_prompt = {f"msg:{m.id}" for m in history}
        # Earlier versions and the branches they left are off the conversation's line: not recalled either
        # (a regenerated reply must not come back through memory).
        off_line = {f"msg:{message_id}" for message_id in memory.messages.hidden_ids(state.room)}
        k = RECALL_K + len(in_prompt) + 1 + min(len(off_line), 20)
        hits = None
        if state.embedder is not None and state.embedder_ready():
            try:
                vector = state.embedder.embed_query(meaning_of(text))
                hits = memory.archive.search(text, state.embedder, k=k, query_vector=vector)
                state.recall_problem = ""
            except NexusArkError as exc:  # the embedder is down: keyword recall still works
                log.warning("recall by meaning unavailable: %s", exc)
                state.recall_problem = str(exc)
                state.embedder_failed()
        if hits is None:
            hits = memory.archive.search(text, None, k=k, mode="fts")
        summary = self.summary()
        if summary is not None:  # the prompt carries it, and it holds what its predecessors said
            chain = Summaries(memory.db, memory.archive, memory.activity).all(state.room)
            off_line |= {s.source_id for s in chain if s.id <= summary.id}
        hits = [h for h in hits if h.source_id not in off_line and h.source_id not in exclude]
        context = gather_inputs(
            memory,
            text,
            history,
            hits,
            lookback_days=state.persona.settings.conversation.episode_lookback_days,
            now=memory.messages.clock.now(),
            recall_k=RECALL_K,
            speakers=self._speaker_names(),
        )
        context.summary = summary.text if summary is not None else ""
        return context

    def _speaker_names(self) -> dict[str, str]:
        """Who said a recalled message, by the names the prompt uses: the person's name where one is known
        (Persona.user_name), the persona's own name for its folder's."""
        persona = self.state.persona
        names = {persona.slug: persona.settings.name}
        if persona.user_name:
            names[PERSON_SPEAKER] = persona.user_name
        return names

    def summaries(self) -> Summaries:
        memory = self.state.memory
        return Summaries(memory.db, memory.archive, memory.activity, memory.messages.clock)

    def summary(self) -> ConversationSummary | None:
        """The running summary of this conversation's older turns (None before the first compression)."""
        return self.summaries().current(self.state.room)

    def after_summary(self, history: list[StoredMessage]) -> list[StoredMessage]:
        """The turns the summary does not cover: the prompt carries the summary and these verbatim."""
        summary = self.summary()
        return history if summary is None else [m for m in history if m.id > summary.last_id]

    def preview_prompt(
        self,
        text: str,
        history: list[StoredMessage] | None = None,
        *,
        feelings: str | None = None,
        exclude: Collection[str] = (),
    ) -> BuiltPrompt:
        """The prompt a message would be sent with, and each section's tokens (the model's tokenizer where
        it is local). Stores nothing: a dry run may use a read-only memory. Raises NexusArkError when the
        stable sections alone cannot fit the model's context. `exclude`: sources not to recall (the
        messages a regeneration or a room's answer carries in the prompt already)."""
        state = self.state
        settings = state.persona.settings
        text = text.strip()
        if not text:
            raise NexusArkError(notice("The message is empty: there is no prompt to show."))
        if history is None:
            history = state.memory.messages.recent(state.room, settings.conversation.history_messages)
        history = self.after_summary(history)
        started = time.perf_counter()
        memory = self.memory_context(text, history, exclude)
        if feelings is not None:  # a message written first carries the full internal state instead
            memory.feelings = feelings
        recalled_at = time.perf_counter()
        # The loaded model's context where the backend knows it (a --model override), else the persona's.
        context_size = context_window(state.backend, settings.model.context_size)
        built = build_prompt(
            state.persona,
            history,
            text,
            memory,
            count=state.backend.count_tokens,
            context_size=context_size,
            max_tokens=settings.model.max_tokens,
        )
        self.timings = {
            "recall_s": round(recalled_at - started, 4),
            "build_s": round(time.perf_counter() - recalled_at, 4),
        }
        if state.recall_problem:
            built.warnings.append(keywords_only(state.recall_problem))
        # The conversation's room: what the window leaves after every other section (compression's measure).
        others = sum(r.tokens for r in built.sections if r.name not in ("conversation", "summary"))
        available = context_size - settings.model.max_tokens - MESSAGE_OVERHEAD
        self.conversation_room = max(0, available - others)
        log.debug("prompt sections: %s", [(r.name, r.tokens, r.cut) for r in built.sections])
        return built
