"""Work after a turn that must not delay it: vectors for the new messages, the internal model's second
opinion on the message's emotion, the owner's hook, rolling compression; and the conversation's end
(open questions it answered)."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from nexus_ark.agent.compression import CompressionResult, compress
from nexus_ark.agent.open_questions import ResolutionReport, resolve_open_questions
from nexus_ark.agent.prompt import MESSAGE_OVERHEAD
from nexus_ark.agent.recall import EMBEDDER_RETRY_S
from nexus_ark.clock import stored_time
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import MessageStore, StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionReading
from nexus_ark.mind.emotion_confirm import confirm_emotion, is_better_than_bundled
from nexus_ark.mind.labels import label_word
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend, context_window
from nexus_ark.providers.embedders import Embedder

log = logging.getLogger(__name__)

AFTER_TURN_EMBED_LIMIT = 8
# Where the last conversation end was (the newest message it read), per room, in reflection_meta.
CONVERSATION_END_KEY = "conversation_end:{room}"
# The most messages one conversation end reads (the newest; open_questions bounds them in tokens too).
END_READS = 200
# Catching up on turns no summary covers: the most of them read for one step (the step is bounded in
# tokens too), and the most steps one after-turn pass runs (each is one internal-model call).
CATCHUP_READ = 200
MAX_COMPRESSION_STEPS = 1000


class SessionUpkeep:
    """ChatSession's after-turn work and conversation ends (agent.session composes it)."""

    persona: Persona
    memory: MemoryStore
    backend: ChatBackend
    embedder: Embedder | None
    room: str

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
        if self._in_upkeep:
            return None  # one is running already
        self._in_upkeep = True
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
            self._in_upkeep = False

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
        if self._in_upkeep:
            return None
        self._in_upkeep = True
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
            self._in_upkeep = False

    def end_if_idle(self, now: datetime) -> ResolutionReport | None:
        """End the conversation when its newest message is `idle_minutes_end` old at `now` and it has not
        ended since (the runtime's scheduler calls this with its clock)."""
        newest = self.memory.messages.recent(self.room, 1)
        if not newest:
            return None
        said = stored_time(newest[0].created_at)
        if said is None:  # no usable time stored (an older version's import): nothing to judge it by
            return None
        idle = timedelta(minutes=self.persona.settings.conversation.idle_minutes_end)
        key = CONVERSATION_END_KEY.format(room=self.room)
        ended_at = int(self.memory.components.reflection_meta().get(key, "0") or 0)
        if now - said < idle or newest[0].id <= ended_at:
            return None
        return self.end_conversation()

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
