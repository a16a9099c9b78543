"""A turn: the person's message stored with how it felt, the reply generated (tool rounds included,
journaled as it streams) and committed with its meta, its timeline entries and its recall index. Also a
message the persona writes first."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from nexus_ark.agent.memory_tools import MemoryTools
from nexus_ark.agent.prompt import for_template, late_system_accepted
from nexus_ark.agent.recall import PERSON_SPEAKER, keywords_only
from nexus_ark.agent.reply import Reply, ReplyDelta, TurnResult
from nexus_ark.agent.reply_scaffold import ScaffoldCutter, note_lines
from nexus_ark.agent.reply_shape import (
    ReplyShape,
    SentenceGate,
    earlier_sentences,
    example_names,
    shape_reply,
)
from nexus_ark.agent.soul_tool import SPEC as SOUL_SPEC
from nexus_ark.agent.soul_tool import SoulTool
from nexus_ark.clock import iso
from nexus_ark.errors import DatabaseError, NexusArkError
from nexus_ark.memory.components import EmotionEntry
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.db import database_error, sqlite
from nexus_ark.memory.messages import MessageStatus
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector, EmotionReading
from nexus_ark.mind.labels import label_word
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams
from nexus_ark.providers.tools import ToolBox, ToolLoopResult, ToolUse, stream_tool_loop
from nexus_ark.sentences import trim_to_sentence

log = logging.getLogger(__name__)

USER_SPEAKER = PERSON_SPEAKER  # how the person's messages are stored
_USER_WORD = notice("user")  # the person as the timeline names them (USER_SPEAKER; translated where shown)
MAX_TOOL_ROUNDS = 3


class SessionTurns:
    """ChatSession's turns (agent.session composes it)."""

    persona: Persona
    memory: MemoryStore
    backend: ChatBackend
    room: str
    emotions: EmotionDetector | None

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
        if self._in_turn:
            raise NexusArkError(
                notice("{name} is still answering the previous message.", name=self.persona.settings.name)
            )
        self._in_turn = True
        self._background_cancel.clear()
        try:
            yield
        finally:
            self._in_turn = False

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
        reply = Reply(started=time.perf_counter())
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
        name = self.persona.settings.name
        return shape_reply(
            params,
            self.backend.capabilities(),
            name,
            other_names=example_names(self.persona.soul, name),
            person_name=self.persona.user_name,
        )

    def _generate(
        self,
        messages: list[ChatMessage],
        shape: ReplyShape,
        cancel: threading.Event | None,
        reply: Reply,
        tools: ToolBox | None,
    ) -> Iterator[ReplyDelta]:
        """Stream the model's answer (tool rounds included) into `reply`, journaling it as it comes. A small
        model's reply streams whole sentences and ends at one (agent.reply_shape); `reply.final` is then
        what is stored."""
        store = self.memory.messages
        last_journal = reply.started
        caps = self.backend.capabilities()
        messages = for_template(messages, late_system_accepted(caps.chat_template, self.backend.model_id))
        # A reply that starts to copy the prompt's scaffolding ends there (agent.reply_scaffold): what
        # is shown, journaled and stored is what the cutter lets out.
        late = [m.content for m in messages[1:] if m.role == "system"]  # the notes (agent.prompt)
        cutter = ScaffoldCutter(notes=note_lines("\n".join(late)))
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
                text = cutter.feed(event.text)
                now = time.perf_counter()
                if reply.first_at is None:
                    reply.first_at = now
                    if reply.reply_id is None:
                        reply.reply_id = store.add(
                            speaker=self.persona.slug,
                            role="assistant",
                            content=text,  # a crash from here on leaves at least the first words
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
                reply.parts.append(text)
                shown = gate.feed(text) if gate is not None else text
                if shown:
                    yield ReplyDelta(shown)
                if now - last_journal >= self.journal_interval_s:
                    store.update_content(reply.reply_id, reply.text())
                    last_journal = now
                if cutter.cut:  # it began to write the prompt's notes: the reply ends before them
                    reply.finish = "stop"
                    reply.meta["scaffolding_cut"] = True
                    break
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
        held = cutter.finish()  # what was held back in case it became a label, and did not
        if held and not (gate is not None and gate.done):
            reply.parts.append(held)
            shown = gate.feed(held) if gate is not None else held
            if shown:
                yield ReplyDelta(shown)
        if cutter.skipped:
            reply.meta["scaffolding_skipped"] = cutter.skipped
        if gate is not None:
            rest, reply.final, reply.tail = gate.finish(reply.finish if reply.status == "complete" else None)
            if rest:
                yield ReplyDelta(rest)
            if gate.dropped:
                reply.meta["dropped_repeats"] = len(gate.dropped)
            if gate.renamed:
                reply.meta["persona_name_removed"] = gate.renamed

    def _commit(self, reply: Reply, user_id: int, warnings: list[str]) -> TurnResult:
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

    def _record(self, reply: Reply, text: str, status: MessageStatus) -> None:
        """The turn in the persona's activity timeline: its tool calls, the reply, what went wrong."""
        activity = self.memory.activity
        for call in reply.tool_log:
            activity.tool_call(call["name"], call["arguments"], call["result"], message_id=reply.reply_id)
        if text:
            activity.message(reply.reply_id, self.persona.settings.name, text, role="assistant")
        if status == "error" and reply.error:
            activity.error(reply.error, message_id=reply.reply_id)

    def _tools(self) -> ToolBox | None:
        """The persona's memory tools, unless the persona turned them off."""
        if not self.persona.settings.conversation.tools:
            return None
        box = MemoryTools(self.memory, self.embedder).toolbox()
        # A model that can reflect may ask to change its soul (the person reviews it); a small one would
        # invent the request.
        if self.persona.settings.soul.proposals and self.backend.capabilities().reflects:
            box.add(SOUL_SPEC, SoulTool(self.persona, self.memory, self.memory.messages.clock, self.room))
        return box

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
            reply = Reply(started=time.perf_counter())
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
