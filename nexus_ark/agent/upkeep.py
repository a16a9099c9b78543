"""Work after a turn that must not delay it: vectors for the new messages, the internal model's second
opinion on the message's emotion, the owner's hook, rolling compression; and the conversation's end
(open questions it answered)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from nexus_ark.agent.compression import CompressionResult, compress
from nexus_ark.agent.open_questions import ResolutionReport, resolve_open_questions
from nexus_ark.agent.prompt import MESSAGE_OVERHEAD
from nexus_ark.agent.recall import Recall
from nexus_ark.agent.session_state import SessionState
from nexus_ark.clock import stored_time
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.mind.emotion import EmotionReading
from nexus_ark.mind.emotion_confirm import confirm_emotion, is_better_than_bundled
from nexus_ark.mind.labels import label_word
from nexus_ark.notices import notice
from nexus_ark.providers.base import ChatBackend, context_window

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


InternalSource = ChatBackend | Callable[[], ChatBackend] | None


class Upkeep:
    """A conversation's after-turn work and its ends: a part of ChatSession (agent.session), given the
    session's state and its recall. `internal`: the persona's internal model for compression, emotion
    confirmation and open questions (or a function that loads it when first needed); the chat model when
    None. `after_turn`: the owner's hook, run after each reply."""

    def __init__(
        self,
        state: SessionState,
        recall: Recall,
        *,
        internal: InternalSource = None,
        after_turn: Callable[[], None] | None = None,
    ) -> None:
        self.state = state
        self.recall = recall
        self._after_turn = after_turn
        self._internal_source = internal
        self._internal: ChatBackend | None = internal if isinstance(internal, ChatBackend) else None
        self._busy = False  # compression and conversation ends, one at a time (on the queue's thread)

    def internal_backend(self) -> ChatBackend:
        """The internal model, loaded when first needed; the chat model when it cannot be had."""
        if self._internal is None:
            source = self._internal_source
            if callable(source) and not isinstance(source, ChatBackend):
                try:
                    self._internal = source()
                except NexusArkError as exc:
                    log.warning("the internal model is unavailable, the chat model does its work: %s", exc)
                    self._internal = self.state.backend
            else:
                self._internal = self.state.backend
        return self._internal

    def interrupt_background(self) -> None:
        """Have a compression in progress give way (the window calls this when the person sends while
        after-turn work still holds the model); it is redone after the next reply."""
        self.state.gate.interrupt_background()

    def compress_if_due(self, *, force: bool = False) -> CompressionResult | None:
        """Rolling compression when the turns after the running summary pass `compress_at` of the
        conversation's room, when turns older than the message window were never summarised, or when a
        summary voided by forgetting waits to be rebuilt (agent.compression): steps, each one call of the
        internal model over a bounded chunk, until none is due; interrupt_background() stops it between
        steps (and inside one). Returns the last step's result (None when none ran). Never raises: a
        failure is logged and recorded in the timeline, and the conversation stays as it was (every
        message is still in memory.db; the steps already done are kept)."""
        if self._busy:
            return None  # one is running already
        self._busy = True
        result: CompressionResult | None = None
        try:
            if self.state.gate.background_cancel.is_set():  # the person is already waiting: after their turn
                return None
            self.recall.summaries().sweep_forgotten(self.state.room)  # a forget from the memory window, say
            for step in range(MAX_COMPRESSION_STEPS):
                if self.state.gate.background_cancel.is_set():
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
            self.state.memory.activity.error(notice("compression failed: {error}", error=str(exc)))
            return result
        finally:
            self._busy = False

    def _compression_step(self, *, force: bool) -> CompressionResult | None:
        state = self.state
        settings = state.persona.settings
        summaries = self.recall.summaries()
        summary = summaries.current(state.room)
        done_to = summary.last_id if summary is not None else 0
        recent = state.memory.messages.recent(state.room, settings.conversation.history_messages)
        line = [m for m in recent if m.id > done_to]
        # Older turns after the summary that the window no longer holds (never summarised): the oldest few.
        backlog: list[StoredMessage] = []
        if line:
            backlog = state.memory.messages.shown_between(state.room, done_to, line[0].id, CATCHUP_READ)
        room = self.recall.conversation_room
        if room is None:  # no prompt built yet in this session: half the window is a fair guess
            context_size = context_window(state.backend, settings.model.context_size)
            room = (context_size - settings.model.max_tokens - MESSAGE_OVERHEAD) // 2
        return compress(
            state.memory,
            state.persona,
            self.internal_backend(),
            line,
            room,
            channel=state.room,
            count=state.backend.count_tokens,
            force=force,
            cancel=state.gate.background_cancel,
            backlog=backlog,
            rebuild_to=summaries.rebuild_to(state.room),
        )

    def end_conversation(self) -> ResolutionReport | None:
        """The conversation ended (the window closed, or it was idle for `idle_minutes_end`): the internal
        model marks the open questions that what was said since the last end answered, each with its
        evidence message. None when there was nothing new, or it failed (logged; the next end reads the
        same messages again)."""
        if self._busy:
            return None
        self._busy = True
        try:
            components = self.state.memory.components
            key = CONVERSATION_END_KEY.format(room=self.state.room)
            since = int(components.reflection_meta().get(key, "0") or 0)
            rows = self.state.memory.messages.recent(self.state.room, END_READS)
            messages = [m for m in rows if m.id > since]
            if not messages:
                return None
            if not components.open_questions():  # nothing to resolve: no model is loaded for it
                components.set_reflection_meta(key, str(messages[-1].id))
                return ResolutionReport()
            try:
                report = resolve_open_questions(
                    self.state.memory, self.state.persona, self.internal_backend(), messages
                )
            except Exception as exc:  # the questions stay open; the next end tries again
                log.warning("open questions could not be checked at the conversation's end: %s", exc)
                self.state.memory.activity.error(
                    notice("open questions not checked: {error}", error=str(exc))
                )
                return None
            components.set_reflection_meta(key, str(messages[-1].id))
            return report
        finally:
            self._busy = False

    def end_if_idle(self, now: datetime) -> ResolutionReport | None:
        """End the conversation when its newest message is `idle_minutes_end` old at `now` and it has not
        ended since (the runtime's scheduler calls this with its clock)."""
        newest = self.state.memory.messages.recent(self.state.room, 1)
        if not newest:
            return None
        said = stored_time(newest[0].created_at)
        if said is None:  # no usable time stored (an older version's import): nothing to judge it by
            return None
        idle = timedelta(minutes=self.state.persona.settings.conversation.idle_minutes_end)
        key = CONVERSATION_END_KEY.format(room=self.state.room)
        ended_at = int(self.state.memory.components.reflection_meta().get(key, "0") or 0)
        if now - said < idle or newest[0].id <= ended_at:
            return None
        return self.end_conversation()

    def embed_new_memories(self) -> int:
        """Vectors for what this conversation added (a few items a turn); call it off the UI thread."""
        embedder = self.state.embedder
        if embedder is None or not self.state.embedder_ready():
            return 0
        try:
            # The newest few (what this turn said): an import's backlog is the background pass's work.
            return self.state.memory.archive.embed_pending(embedder, limit=AFTER_TURN_EMBED_LIMIT)
        except NexusArkError as exc:  # they stay pending and are embedded when the embedder works again
            log.warning("embedding new memories failed: %s", exc)
            self.state.embedder_failed()
            return 0

    def confirm_emotion(self) -> EmotionReading | None:
        """The internal model's second opinion on the last message's emotion, when it is a better reader
        than the bundled model (mind.emotion_confirm): a changed reading replaces the first in the emotion
        log, and the timeline says so. Gives way to the person's next turn; never raises."""
        pending, self.state.unconfirmed = self.state.unconfirmed, None
        if pending is None or self.state.gate.background_cancel.is_set():
            return None
        message_id, text, first = pending
        try:
            internal = self.internal_backend()
            if not is_better_than_bundled(internal):
                return None
            reading = confirm_emotion(
                internal, text, first, timeout_s=8.0, give_way=self.state.gate.background_cancel
            )
            if reading.label != first.label:
                with self.state.memory.db.atomic():
                    self.state.memory.components.revise_emotion(message_id, reading.label, reading.value)
                    self.state.memory.activity.append(
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
