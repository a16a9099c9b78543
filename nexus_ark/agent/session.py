"""One persona's conversation: store the message, stream the reply, journal it, store the result."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from nexus_ark.agent.compression import CompressionResult, compress
from nexus_ark.agent.memory_tools import MemoryTools
from nexus_ark.agent.open_questions import ResolutionReport, resolve_open_questions
from nexus_ark.agent.prompt import MESSAGE_OVERHEAD, BuiltPrompt, MemoryContext, build_prompt
from nexus_ark.agent.prompt_inputs import gather_inputs
from nexus_ark.agent.reply_shape import (
    ReplyShape,
    SentenceGate,
    earlier_sentences,
    shape_reply,
)
from nexus_ark.clock import iso
from nexus_ark.errors import DatabaseError, NexusArkError
from nexus_ark.memory.components import EmotionEntry
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.db import database_error, sqlite
from nexus_ark.memory.messages import DEFAULT_ROOM, MessageStatus, MessageStore, StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.summaries import ConversationSummary, Summaries
from nexus_ark.mind.emotion import EmotionDetector, EmotionReading
from nexus_ark.mind.emotion_confirm import confirm_emotion, is_better_than_bundled
from nexus_ark.mind.labels import label_word
from nexus_ark.notices import Notice, notice
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams, context_window
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.tools import ToolBox, ToolLoopResult, ToolUse, stream_tool_loop
from nexus_ark.sentences import trim_to_sentence

log = logging.getLogger(__name__)

USER_SPEAKER = "user"
_USER_WORD = notice("user")  # the person as the timeline names them (USER_SPEAKER; translated where shown)
RECALL_K = 3
EMBEDDER_RETRY_S = 60.0
AFTER_TURN_EMBED_LIMIT = 8
MAX_TOOL_ROUNDS = 3
# Sent, not stored, to have the model go on where the token limit stopped it.
CONTINUE_PROMPT = "Continue exactly where your last message stopped, without repeating it."
# Where the last conversation end was (the newest message it read), per room, in reflection_meta.
CONVERSATION_END_KEY = "conversation_end:{room}"
# The most messages one conversation end reads (the newest; open_questions bounds them in tokens too).
END_READS = 200
# Catching up on turns no summary covers: the most of them read for one step (the step is bounded in
# tokens too), and the most steps one after-turn pass runs (each is one internal-model call).
CATCHUP_READ = 200
MAX_COMPRESSION_STEPS = 1000


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    text: str


def keywords_only(problem: str) -> Notice:
    """What a turn whose recall fell back to keywords says (the embedder failed: `problem`)."""
    return notice("Recall by meaning is unavailable, so keywords only were used: {problem}", problem=problem)


@dataclass
class TurnResult:
    user_message_id: int
    reply_id: int | None
    text: str
    status: MessageStatus
    tokens: int = 0
    first_token_s: float | None = None
    tokens_per_s: float | None = None
    error: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    # Things the person should know that did not stop the turn (e.g. recall fell back to keywords).
    warnings: list[str] = field(default_factory=list)
    # The reply ended at the token limit: it can be continued (ChatSession.continue_reply).
    cut_by_limit: bool = False


@dataclass
class _Reply:
    """A reply as it is generated: what streamed, where it is stored, how it ended."""

    started: float
    reply_id: int | None = None
    parts: list[str] = field(default_factory=list)
    tokens: int = 0
    first_at: float | None = None
    last_at: float | None = None
    status: MessageStatus = "complete"
    error: str = ""
    finish: str | None = None
    tool_log: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    version_of: int | None = None  # a regenerated reply: the first version's id
    # What is stored when it differs from what the model wrote (reply_shape: whole sentences kept).
    final: str | None = None
    tail: str = ""  # what the token limit cut mid-sentence, kept in meta but not in the reply

    def text(self) -> str:
        return "".join(self.parts)


class ChatSession:
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
        self._busy = threading.Lock()
        self._internal_source = internal
        self._internal: ChatBackend | None = internal if isinstance(internal, ChatBackend) else None
        # The room the conversation had in the last prompt built (what compression measures against).
        self._conversation_room: int | None = None
        self._background = threading.Lock()  # compression and conversation ends, one at a time
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

    def send(self, text: str, cancel: threading.Event | None = None) -> Iterator[ReplyDelta | TurnResult]:
        """Yield ReplyDelta pieces as the reply streams, then exactly one TurnResult.

        Whatever happens (stop, model error), the user's message and any partial reply are kept.
        """
        text = text.strip()
        if not text:
            raise ValueError("empty message")
        with self._persons_turn():
            yield from self._turn(text, cancel)

    @contextmanager
    def _persons_turn(self) -> Iterator[None]:
        """One thing at a time for the person (send, regenerate, edit, continue); while it runs, background
        work that was told to give way may follow it again."""
        if not self._busy.acquire(blocking=False):
            raise NexusArkError(
                notice("{name} is still answering the previous message.", name=self.persona.settings.name)
            )
        self._background_cancel.clear()
        try:
            yield
        finally:
            self._busy.release()

    # -- regenerate, edit, delete -----------------------------------------------------------------
    def regenerate(
        self, reply_id: int, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """A new version of a reply. Earlier versions are kept (messages.versions, choose_version); the
        new one is what the conversation shows and the next prompt sees."""
        with self._persons_turn():
            store = self.memory.messages
            old = store.get(reply_id)
            if old.role != "assistant" or old.hidden or old.room != self.room:
                raise NexusArkError(
                    notice("Only a reply in the conversation as it stands can be regenerated.")
                )
            limit = self.persona.settings.conversation.history_messages
            history = [m for m in store.recent(self.room, limit + 1) if m.id < old.id]
            user = next((m for m in reversed(history) if m.role == "user"), None)
            if user is None:
                raise NexusArkError(
                    notice("This reply answers no message of yours, so there is nothing to redo.")
                )
            store.hide_from(old.id)  # with anything after it: kept as that version's branch
            self._recall_exclude = {f"msg:{user.id}"}  # the message answered is in the prompt already
            try:
                prompt = self.preview_prompt(user.content, [m for m in history if m.id < user.id])
            except NexusArkError:
                store.choose_version(old.id)
                raise
            finally:
                self._recall_exclude = set()
            reply = _Reply(started=time.perf_counter(), version_of=old.version_group)
            yield from self._generate(prompt.messages, self._shape(), cancel, reply, self._tools())
            result = self._commit(reply, user.id, [])
            if result.reply_id is None:  # nothing came: the conversation keeps the version it had
                store.choose_version(old.id)
            yield result

    def edit(
        self, message_id: int, text: str, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """Say a message of yours differently and go on from there. What followed the old wording is
        kept as its branch (choosing the old version again brings it back)."""
        text = text.strip()
        if not text:
            raise ValueError("empty message")
        with self._persons_turn():
            store = self.memory.messages
            old = store.get(message_id)
            if old.role != "user" or old.hidden or old.room != self.room:
                raise NexusArkError(
                    notice("Only a message of yours in the conversation as it stands can be edited.")
                )
            store.hide_from(old.id)
            try:
                yield from self._turn(text, cancel, version_of=old.version_group)
            except NexusArkError:  # not sent (too long, a damaged file): the old wording stays
                store.choose_version(old.id)
                raise

    def delete(self, message_id: int, *, forget: bool = False) -> None:
        """Delete a message. With `forget`, also what memory derived from it (its archive item, the text
        it lent its neighbours, and every running summary that holds it: those leave the prompt and recall
        at once and are rebuilt from the remaining messages by the next after-turn work); otherwise recall
        and the summary may still hold what was said."""
        message = self.memory.messages.get(message_id)
        if forget:
            items = [
                r[0]
                for r in self.memory.db.execute(
                    "select id from items where source_id = ?", [message.source_id or f"msg:{message.id}"]
                ).fetchall()
            ]
            self.memory.forget(items)  # voids the summaries that held it (memory.summaries)
            self._summaries().sweep_forgotten(self.room)
        still_there = self.memory.db.execute("select 1 from messages where id = ?", [message.id]).fetchone()
        if still_there:  # forget() deletes the message with its memory; else it goes on its own
            self.memory.messages.delete(message.id)

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
        )
        context.summary = summary.text if summary is not None else ""
        return context

    # -- rolling compression and conversation ends ------------------------------------------------
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

    def internal_backend(self) -> ChatBackend:
        """The internal model, loaded when first needed; the chat model when it cannot be had."""
        if self._internal is None:
            source = self._internal_source
            if callable(source) and not isinstance(source, ChatBackend):
                try:
                    self._internal = source()
                except NexusArkError as exc:
                    log.warning("the internal model is unavailable, the chat model does its work: %s", exc)
                    self._internal = self.backend
            else:
                self._internal = self.backend
        return self._internal

    def interrupt_background(self) -> None:
        """Have a compression in progress give way (the window calls this when the person sends while
        after-turn work still holds the model); it is redone after the next reply."""
        self._background_cancel.set()

    def compress_if_due(self, *, force: bool = False) -> CompressionResult | None:
        """Rolling compression when the turns after the running summary pass `compress_at` of the
        conversation's room, when turns older than the message window were never summarised, or when a
        summary voided by forgetting waits to be rebuilt (agent.compression): steps, each one call of the
        internal model over a bounded chunk, until none is due; interrupt_background() stops it between
        steps (and inside one). Returns the last step's result (None when none ran). Never raises: a
        failure is logged and recorded in the timeline, and the conversation stays as it was (every
        message is still in memory.db; the steps already done are kept)."""
        if not self._background.acquire(blocking=False):
            return None  # one is running already
        result: CompressionResult | None = None
        try:
            if self._background_cancel.is_set():  # the person is already waiting: after their turn
                return None
            self._summaries().sweep_forgotten(self.room)  # a forget from the memory window, say
            for step in range(MAX_COMPRESSION_STEPS):
                if self._background_cancel.is_set():
                    log.info("compression gives way to the person after %d step(s)", step)
                    break
                done = self._compression_step(force=force and step == 0)
                if done is None:
                    break
                result = done
            return result
        except InterruptedError as exc:  # the person came first: not a failure
            log.info("%s", exc)
            return result
        except Exception as exc:  # whatever failed, the conversation must stay as it is
            log.warning("compression failed; the conversation is unchanged: %s", exc)
            self.memory.activity.error(notice("compression failed: {error}", error=str(exc)))
            return result
        finally:
            self._background.release()

    def _compression_step(self, *, force: bool) -> CompressionResult | None:
        settings = self.persona.settings
        summaries = self._summaries()
        summary = summaries.current(self.room)
        done_to = summary.last_id if summary is not None else 0
        line = [
            m
            for m in self.memory.messages.recent(self.room, settings.conversation.history_messages)
            if m.id > done_to
        ]
        # Older turns after the summary that the window no longer holds (never summarised): the oldest few.
        backlog: list[StoredMessage] = []
        if line:
            rows = self.memory.db.query(
                "select * from messages where room = ? and hidden = 0 and id > ? and id < ? "
                "order by id limit ?",
                [self.room, done_to, line[0].id, CATCHUP_READ],
            )
            backlog = [MessageStore._to_model(r) for r in rows]
        room = self._conversation_room
        if room is None:  # no prompt built yet in this session: half the window is a fair guess
            context_size = context_window(self.backend, settings.model.context_size)
            room = (context_size - settings.model.max_tokens - MESSAGE_OVERHEAD) // 2
        return compress(
            self.memory,
            self.persona,
            self.internal_backend(),
            line,
            room,
            channel=self.room,
            count=self.backend.count_tokens,
            force=force,
            cancel=self._background_cancel,
            backlog=backlog,
            rebuild_to=summaries.rebuild_to(self.room),
        )

    def end_conversation(self) -> ResolutionReport | None:
        """The conversation ended (the window closed, or it was idle for `idle_minutes_end`): the internal
        model marks the open questions that what was said since the last end answered, each with its
        evidence message. None when there was nothing new, or it failed (logged; the next end reads the
        same messages again)."""
        if not self._background.acquire(blocking=False):
            return None
        try:
            components = self.memory.components
            key = CONVERSATION_END_KEY.format(room=self.room)
            since = int(components.reflection_meta().get(key, "0") or 0)
            rows = self.memory.messages.recent(self.room, END_READS)
            messages = [m for m in rows if m.id > since]
            if not messages:
                return None
            if not components.open_questions():  # nothing to resolve: no model is loaded for it
                components.set_reflection_meta(key, str(messages[-1].id))
                return ResolutionReport()
            try:
                report = resolve_open_questions(self.memory, self.persona, self.internal_backend(), messages)
            except Exception as exc:  # the questions stay open; the next end tries again
                log.warning("open questions could not be checked at the conversation's end: %s", exc)
                self.memory.activity.error(notice("open questions not checked: {error}", error=str(exc)))
                return None
            components.set_reflection_meta(key, str(messages[-1].id))
            return report
        finally:
            self._background.release()

    def end_if_idle(self, now: datetime) -> ResolutionReport | None:
        """End the conversation when its newest message is `idle_minutes_end` old at `now` and it has not
        ended since (the runtime's scheduler calls this with its clock)."""
        newest = self.memory.messages.recent(self.room, 1)
        if not newest:
            return None
        said = datetime.fromisoformat(newest[0].created_at)
        idle = timedelta(minutes=self.persona.settings.conversation.idle_minutes_end)
        key = CONVERSATION_END_KEY.format(room=self.room)
        ended_at = int(self.memory.components.reflection_meta().get(key, "0") or 0)
        if now - said < idle or newest[0].id <= ended_at:
            return None
        return self.end_conversation()

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

    def _tools(self) -> ToolBox | None:
        """The persona's memory tools, unless the persona turned them off."""
        if not self.persona.settings.conversation.tools:
            return None
        return MemoryTools(self.memory, self.embedder).toolbox()

    def _text_tools(self) -> bool:
        """Whether a model without native tool calls gets the text protocol (its markup is hidden from the
        reply as it streams)."""
        setting = self.persona.settings.conversation.text_tools
        return setting == "on" or (setting == "auto" and self.backend.capabilities().text_tools)

    def _index(self, message_id: int, speaker: str, text: str) -> None:
        created = self.memory.messages.get(message_id).created_at
        index_turns(
            self.memory.archive,
            [
                Turn(
                    speaker=speaker,
                    text=text,
                    created_at=created,
                    source_id=f"msg:{message_id}",
                    room=self.room,
                )
            ],
        )

    def embed_new_memories(self) -> int:
        """Vectors for what this conversation added (a few items a turn); call it off the UI thread."""
        if self.embedder is None or time.monotonic() < self._embedder_retry_at:
            return 0
        try:
            # The newest few (what this turn said): an import's backlog is the background pass's work.
            return self.memory.archive.embed_pending(self.embedder, limit=AFTER_TURN_EMBED_LIMIT)
        except NexusArkError as exc:  # they stay pending and are embedded when the embedder works again
            log.warning("embedding new memories failed: %s", exc)
            self._embedder_retry_at = time.monotonic() + EMBEDDER_RETRY_S
            return 0

    def confirm_emotion(self) -> EmotionReading | None:
        """The internal model's second opinion on the last message's emotion, when it is a better reader
        than the bundled model (mind.emotion_confirm): a changed reading replaces the first in the emotion
        log, and the timeline says so. Gives way to the person's next turn; never raises."""
        pending, self._unconfirmed = self._unconfirmed, None
        if pending is None or self._background_cancel.is_set():
            return None
        message_id, text, first = pending
        try:
            internal = self.internal_backend()
            if not is_better_than_bundled(internal):
                return None
            reading = confirm_emotion(internal, text, first, timeout_s=8.0, give_way=self._background_cancel)
            if reading.label != first.label:
                with self.memory.db.atomic():
                    self.memory.components.revise_emotion(message_id, reading.label, reading.value)
                    self.memory.activity.append(
                        "emotion",
                        notice(
                            "{label} ({value:+.2f}), not {first}: the internal model's reading of {text}",
                            label=label_word(reading.label),
                            value=reading.value,
                            first=label_word(first.label),
                            text=text[:80],
                        ),
                        message_id=message_id,
                        data={
                            "label": reading.label,
                            "value": reading.value,
                            "confidence": reading.confidence,
                            "revised_from": first.label,
                            "by": internal.model_id,
                        },
                    )
            return reading
        except Exception as exc:  # the head's reading stands
            log.warning("emotion confirmation skipped: %s", exc)
            return None

    def after_turn(self) -> None:
        """Work that follows a reply and must not delay it: vectors for the new messages, the owner's hook
        (the drives recomputed, a backup after the first turn of a day), then compression when due, last
        because it is the long one and gives way to the next send. Call it after the reply is shown, off
        the UI thread."""
        self.embed_new_memories()
        self.confirm_emotion()
        if self._after_turn is not None:
            try:
                self._after_turn()
            except Exception as exc:  # a backup on a full disk must not fail the turn that was shown
                log.warning("after-turn work failed: %s", exc)
        self.compress_if_due()

    def _turn(
        self, text: str, cancel: threading.Event | None, *, version_of: int | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        store = self.memory.messages
        try:
            history = store.recent(self.room, self.persona.settings.conversation.history_messages)
            # Built before the message is stored: a prompt that cannot fit is refused with nothing sent.
            prompt = self.preview_prompt(text, history)
            # Where the turn's time goes before the reply streams (bench.turn_latency reports it).
            timings = dict(self._prompt_timings)
            emotion_started = time.perf_counter()
            feeling = self._read_emotion(text)
            timings["emotion_s"] = round(time.perf_counter() - emotion_started, 4)
            with self.memory.db.atomic():  # the message, how it felt, and its timeline entries together
                user_id = store.add(
                    speaker=USER_SPEAKER, role="user", content=text, room=self.room, version_of=version_of
                )
                self.memory.activity.message(user_id, _USER_WORD, text, role="user")
                if feeling is not None:
                    self._log_emotion(feeling, user_id, text)
            self._unconfirmed = (user_id, text, feeling) if feeling is not None else None
            self._index(user_id, USER_SPEAKER, text)
        except sqlite.Error as exc:
            # Nothing was sent to the model: the caller still holds the text and can offer it again.
            problem = database_error(exc, self.memory.path)
            raise DatabaseError(
                notice("Your message was not saved and not sent. {problem}", problem=problem.message),
                hint=problem.hint,
            ) from exc
        warnings: list[str] = []
        if self.recall_problem:
            warnings.append(keywords_only(self.recall_problem))
        messages = prompt.messages
        reply = _Reply(started=time.perf_counter())
        reply.meta["timings"] = timings
        yield from self._generate(messages, self._shape(), cancel, reply, self._tools())
        if reply.first_at is not None:
            timings["first_token_s"] = round(reply.first_at - reply.started, 4)
        yield self._commit(reply, user_id, warnings)

    def _shape(self) -> ReplyShape:
        """The persona's generation settings shaped to what the chat model can do (agent.reply_shape)."""
        # Called after the prompt was built: counting its tokens loaded a local model, so the capability
        # record is known (read from the GGUF); a server's is asked once and kept.
        params: GenerationParams = self.persona.settings.model.generation_params()
        return shape_reply(params, self.backend.capabilities(), self.persona.settings.name)

    def _generate(
        self,
        messages: list[ChatMessage],
        shape: ReplyShape,
        cancel: threading.Event | None,
        reply: _Reply,
        tools: ToolBox | None,
    ) -> Iterator[ReplyDelta]:
        """Stream the model's answer (tool rounds included) into `reply`, journaling it as it comes. A small
        model's reply streams whole sentences and ends at one (agent.reply_shape); `reply.final` is then
        what is stored."""
        store = self.memory.messages
        last_journal = reply.started
        gate = (
            SentenceGate(shape, earlier_sentences(m.content for m in messages if m.role == "assistant"))
            if shape.small
            else None
        )
        loop = None
        try:
            loop = stream_tool_loop(
                self.backend,
                messages,
                tools,
                params=shape.params,
                cancel=cancel,
                max_turns=MAX_TOOL_ROUNDS,
                answer_after_limit=True,
                text_protocol=self._text_tools(),
            )
            for event in loop:
                if isinstance(event, ToolUse):
                    call, output = event.call, event.output
                    reply.tool_log.append(
                        {"name": call.name, "arguments": call.arguments, "result": output[:500]}
                    )
                    continue
                if isinstance(event, ToolLoopResult):
                    reply.finish = event.finish_reason
                    if event.finish_reason == "cancelled":
                        reply.status = "stopped"
                    continue
                if not event.text:
                    continue
                now = time.perf_counter()
                if reply.first_at is None:
                    reply.first_at = now
                    if reply.reply_id is None:
                        reply.reply_id = store.add(
                            speaker=self.persona.slug,
                            role="assistant",
                            content=event.text,  # a crash from here on leaves at least the first words
                            room=self.room,
                            status="streaming",
                            version_of=reply.version_of,
                            # a message written first says so from its first word: a draft of one cut
                            # off by a crash is removed at the next start (messages.recover_interrupted)
                            meta={"autonomous": reply.meta["autonomous"]}
                            if "autonomous" in reply.meta
                            else None,
                        )
                    else:  # a continuation streams into the message it continues
                        store.update_content(reply.reply_id, reply.text(), status="streaming")
                reply.last_at = now
                reply.tokens += 1
                reply.parts.append(event.text)
                shown = gate.feed(event.text) if gate is not None else event.text
                if shown:
                    yield ReplyDelta(shown)
                if now - last_journal >= self.journal_interval_s:
                    store.update_content(reply.reply_id, reply.text())
                    last_journal = now
                if gate is not None and gate.done:  # long enough, at a sentence end: the reply ends here
                    reply.finish = "stop"
                    reply.meta["ended_at_sentence"] = True
                    break
        except NexusArkError as exc:
            reply.status, reply.error = "error", str(exc)
        except Exception as exc:  # a backend bug must not lose the turn
            reply.status, reply.error = "error", f"{type(exc).__name__}: {exc}"
        finally:
            if loop is not None:
                loop.close()  # an early end stops the model's request (its stream cancels)
        if gate is not None:
            rest, reply.final, reply.tail = gate.finish(reply.finish if reply.status == "complete" else None)
            if rest:
                yield ReplyDelta(rest)
            if gate.dropped:
                reply.meta["dropped_repeats"] = len(gate.dropped)
            if gate.renamed:
                reply.meta["persona_name_removed"] = gate.renamed

    def _commit(self, reply: _Reply, user_id: int, warnings: list[str]) -> TurnResult:
        """Store the final reply with its status and meta, and index it for recall."""
        store = self.memory.messages
        cut = reply.finish == "length" and reply.status == "complete"
        text = reply.final if reply.final is not None else reply.text().strip()
        if cut and reply.final is None:  # any model: what the limit cut mid-sentence is not kept as said
            text, reply.tail = trim_to_sentence(text)
        first_at, last_at, tokens = reply.first_at, reply.last_at, reply.tokens
        tps = (tokens - 1) / (last_at - first_at) if first_at and last_at and last_at > first_at else None
        meta: dict[str, Any] = {**reply.meta, "model": self.backend.model_id, "tokens": tokens}
        if first_at is not None:
            meta["first_token_s"] = round(first_at - reply.started, 4)
        if tps:
            meta["tokens_per_s"] = round(tps, 2)
        if reply.error:
            meta["error"] = reply.error
        if reply.tool_log:
            meta["tool_calls"] = [*meta.get("tool_calls", []), *reply.tool_log]
        # The token limit ended it: said in the reply's meta, and Continue can pick it up. What it cut
        # mid-sentence is kept beside the reply, not in it.
        meta["cut_by_limit"] = cut
        meta.pop("cut_tail", None)
        if cut and reply.tail.strip():
            meta["cut_tail"] = reply.tail.strip()
        meta.pop("trails_off", None)
        if cut and text.endswith("…") and not reply.text().strip().endswith("…"):
            meta["trails_off"] = True  # no whole sentence came: cut at a word, and "…" says so
        status, error = reply.status, reply.error
        if reply.reply_id is not None:
            try:
                with self.memory.db.atomic():  # the final reply and what the timeline says of it
                    store.update_content(reply.reply_id, text, status=status, meta=meta)
                    self._record(reply, text, status)
                if text:
                    self._index(reply.reply_id, self.persona.settings.name, text)
            except sqlite.Error as exc:  # e.g. the disk filled while it streamed: say so, in words
                problem = database_error(exc, self.memory.path)
                raise DatabaseError(
                    notice("The reply could not be saved completely. {problem}", problem=problem.message),
                    hint=problem.hint,
                ) from exc
        else:
            if status == "complete":
                # The model ended without a word: record that honestly rather than an empty bubble.
                status = "error"
                error = error or notice("The model returned an empty reply.")
            if error:
                self.memory.activity.error(error, message_id=user_id)
        return TurnResult(
            user_message_id=user_id,
            reply_id=reply.reply_id,
            text=text,
            status=status,
            tokens=tokens,
            first_token_s=meta.get("first_token_s"),
            tokens_per_s=meta.get("tokens_per_s"),
            error=error,
            meta=meta,
            warnings=warnings,
            cut_by_limit=meta["cut_by_limit"],
        )

    def _read_emotion(self, text: str) -> EmotionReading | None:
        """The emotion in the person's message (tens of milliseconds: it runs inside the turn). A detector
        that cannot run costs the turn nothing but this reading."""
        if self.emotions is None:
            return None
        try:
            return self.emotions.classify(text)
        except NexusArkError as exc:
            log.warning("emotion detection unavailable: %s", exc)
            return None

    def _log_emotion(self, feeling: EmotionReading, message_id: int, text: str) -> None:
        self.memory.components.log_emotion(
            EmotionEntry(
                timestamp=iso(self.memory.messages.clock.now()),
                emotion=feeling.label,
                value=feeling.value,
                snippet=text[:200],
                message_id=message_id,
            )
        )
        self.memory.activity.emotion(
            label_word(feeling.label), feeling.value, feeling.confidence, message_id=message_id, snippet=text
        )

    def _record(self, reply: _Reply, text: str, status: MessageStatus) -> None:
        """The turn in the persona's activity timeline: its tool calls, the reply, what went wrong."""
        activity = self.memory.activity
        for call in reply.tool_log:
            activity.tool_call(call["name"], call["arguments"], call["result"], message_id=reply.reply_id)
        if text:
            activity.message(reply.reply_id, self.persona.settings.name, text, role="assistant")
        if status == "error" and reply.error:
            activity.error(reply.error, message_id=reply.reply_id)

    def continue_reply(
        self, reply_id: int, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """Go on with a reply the token limit cut short: the next part is appended to the same message."""
        with self._persons_turn():
            message = self.memory.messages.get(reply_id)
            if message.role != "assistant" or not message.meta.get("cut_by_limit"):
                raise NexusArkError(notice("Only a reply that the token limit cut short can be continued."))
            history = self.memory.messages.recent(
                self.room, self.persona.settings.conversation.history_messages
            )
            history = self._after_summary([m for m in history if m.id <= reply_id])
            # It goes on from where the limit stopped it: the words cut off after its last whole sentence
            # (kept in meta, reply_shape) come back first, in the prompt too.
            shown = message.content.removesuffix("…") if message.meta.get("trails_off") else message.content
            tail = str(message.meta.get("cut_tail", "")).strip()
            restored = (" " if tail and not shown.endswith((" ", "\n")) else "") + tail
            base = shown + restored
            history = [m.model_copy(update={"content": base}) if m.id == reply_id else m for m in history]
            user = next((m for m in reversed(history) if m.role == "user"), None)
            memory = self._memory_context(user.content if user else message.content, history)
            messages = build_prompt(
                self.persona,
                history,
                CONTINUE_PROMPT,
                memory,
                count=self.backend.count_tokens,
                context_size=context_window(self.backend, self.persona.settings.model.context_size),
                max_tokens=self.persona.settings.model.max_tokens,
            ).messages
            reply = _Reply(started=time.perf_counter(), reply_id=reply_id, parts=[base])
            reply.meta = {k: v for k, v in message.meta.items() if k == "tool_calls"}
            reply.meta["continued"] = int(message.meta.get("continued", 0)) + 1
            gap = "" if base.endswith((" ", "\n")) else " "
            deltas = self._generate(messages, self._shape(), cancel, reply, None)
            for i, delta in enumerate(deltas):
                yield ReplyDelta(restored + gap + delta.text.lstrip()) if i == 0 else delta
                if i == 0 and len(reply.parts) > 1:
                    reply.parts[1] = gap + reply.parts[1].lstrip()
            if reply.final is not None:  # a small model's sentences: after what was there
                reply.final = (base + gap + reply.final.lstrip()) if reply.final else base
            yield self._commit(reply, user.id if user else reply_id, [])

    def write_first(
        self,
        instruction: str,
        state: str,
        reason: dict[str, Any],
        cancel: threading.Event | None = None,
        *,
        text: str | None = None,
    ) -> TurnResult:
        """A message the persona writes on its own (the runtime decided it may): no message from the person
        precedes it. `state` is the persona's full internal state (mind.narrative.internal_state), put where
        a turn's feelings go; `instruction` says what moves it to write (a drive, a routine's task, an event
        it planned); `reason` is stored with the message as meta["autonomous"] and shown beside it.
        `text`: the message as it is to be sent (a template for a model too small to write it well,
        runtime.first_words); nothing is generated then."""
        with self._persons_turn():
            reply = _Reply(started=time.perf_counter())
            reply.meta["autonomous"] = reason
            if text is not None:
                reply.meta["template"] = True
                reply.reply_id = self.memory.messages.add(
                    speaker=self.persona.slug,
                    role="assistant",
                    content=text,
                    room=self.room,
                    status="streaming",
                    meta={"autonomous": reason},
                )
                reply.parts, reply.finish = [text], "stop"
                return self._commit(reply, 0, [])
            built = self.preview_prompt(instruction, feelings=state)
            for _ in self._generate(built.messages, self._shape(), cancel, reply, None):
                pass
            return self._commit(reply, 0, [])
