"""A turn: the person's message stored with how it felt, the reply generated (agent.reply_stream: tool
rounds included, journaled as it streams) and committed with its meta, its timeline entries and its
recall index. Also a message the persona writes first, and the one way an incoming message is stored
(the person's, a line heard in a room, a note passed there)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

from nexus_ark.agent.memory_tools import MemoryTools
from nexus_ark.agent.recall import PERSON_SPEAKER, Recall, keywords_only
from nexus_ark.agent.reply import Reply, ReplyDelta, TurnResult
from nexus_ark.agent.reply_shape import ReplyShape, example_names, shape_reply
from nexus_ark.agent.reply_stream import ReplyStream
from nexus_ark.agent.session_state import SessionState
from nexus_ark.agent.soul_tool import SPEC as SOUL_SPEC
from nexus_ark.agent.soul_tool import SoulTool
from nexus_ark.clock import iso
from nexus_ark.errors import DatabaseError, NexusArkError
from nexus_ark.mcp_tools.offer import model_name
from nexus_ark.memory.components import EmotionEntry
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.db import database_error, sqlite
from nexus_ark.memory.messages import MessageStatus
from nexus_ark.mind.emotion import EmotionReading
from nexus_ark.mind.labels import label_word
from nexus_ark.notices import notice
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.tools import ToolBox
from nexus_ark.sentences import trim_to_sentence

log = logging.getLogger(__name__)

USER_SPEAKER = PERSON_SPEAKER  # how the person's messages are stored
TOOL_SPEAKER = "tool {tool}"  # an MCP tool's result as recall names it: what the tool said, not the persona
PERSON_WORD = notice("user")  # the person as the timeline names them (USER_SPEAKER; translated where shown)


class Turns:
    """A conversation's turns: a part of ChatSession (agent.session), given the session's state and its
    recall. What the room and the versions parts build on (shape, generate, commit, tools,
    store_incoming) is public here."""

    def __init__(self, state: SessionState, recall: Recall) -> None:
        self.state = state
        self.recall = recall

    def send(self, text: str, cancel: threading.Event | None = None) -> Iterator[ReplyDelta | TurnResult]:
        """Yield ReplyDelta pieces as the reply streams, then exactly one TurnResult.

        Whatever happens (stop, model error), the user's message and any partial reply are kept.
        """
        text = text.strip()
        if not text:
            raise ValueError("empty message")
        with self.state.persons_turn():
            yield from self.turn(text, cancel)

    def turn(
        self, text: str, cancel: threading.Event | None, *, version_of: int | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """The person's message stored and answered (inside a person's turn: send, edit)."""
        state = self.state
        try:
            history = state.memory.messages.recent(
                state.room, state.persona.settings.conversation.history_messages
            )
            # Built before the message is stored: a prompt that cannot fit is refused with nothing sent.
            prompt = self.recall.preview_prompt(text, history)
            # Where the turn's time goes before the reply streams (bench.turn_latency reports it).
            timings = dict(self.recall.timings)
            emotion_started = time.perf_counter()
            feeling = self.read_emotion(text)
            timings["emotion_s"] = round(time.perf_counter() - emotion_started, 4)
            user_id = self.store_incoming(text, feeling=feeling, version_of=version_of)
            state.unconfirmed = (user_id, text, feeling) if feeling is not None else None
        except sqlite.Error as exc:
            # Nothing was sent to the model: the caller still holds the text and can offer it again.
            problem = database_error(exc, state.memory.path)
            raise DatabaseError(
                notice("Your message was not saved and not sent. {problem}", problem=problem.message),
                hint=problem.hint,
            ) from exc
        warnings: list[str] = []
        if state.recall_problem:
            warnings.append(keywords_only(state.recall_problem))
        reply = Reply(started=time.perf_counter())
        reply.meta["timings"] = timings
        yield from self.generate(prompt.messages, self.shape(), cancel, reply, self.tools(cancel=cancel))
        if reply.first_at is not None:
            timings["first_token_s"] = round(reply.first_at - reply.started, 4)
        yield self.commit(reply, user_id, warnings)

    def store_incoming(
        self,
        text: str,
        *,
        speaker: str = USER_SPEAKER,
        name: str = PERSON_WORD,
        feeling: EmotionReading | None = None,
        source_id: str | None = None,
        meta: dict[str, Any] | None = None,
        created_at: str | None = None,
        version_of: int | None = None,
        index: bool = True,
    ) -> int:
        """Store a message this persona receives (the person's, another member's line in a room, a note
        passed to it): the message, its timeline entry and how it felt in one transaction, then its
        recall index (unless `index` is False: a note is read once, on the next turn). `name`: who said
        it, as the timeline and recall name them. Returns the message's id."""
        memory = self.state.memory
        if speaker == USER_SPEAKER:
            self.state.latest_text = text  # what the turn's MCP tools are chosen by
        with memory.db.atomic():
            message_id = memory.messages.add(
                speaker=speaker,
                role="user",
                content=text,
                room=self.state.room,
                source_id=source_id,
                meta=meta,
                created_at=created_at,
                version_of=version_of,
            )
            memory.activity.message(message_id, name, text, role="user")
            if feeling is not None:
                self._log_emotion(feeling, message_id, text)
        if index:
            self._index(message_id, name, text)
        return message_id

    def shape(self) -> ReplyShape:
        """The persona's generation settings shaped to what the chat model can do (agent.reply_shape)."""
        # Called after the prompt was built: counting its tokens loaded a local model, so the capability
        # record is known (read from the GGUF); a server's is asked once and kept.
        persona = self.state.persona
        params: GenerationParams = persona.settings.model.generation_params()
        name = persona.settings.name
        return shape_reply(
            params,
            self.state.backend.capabilities(),
            name,
            other_names=example_names(persona.soul, name),
            person_name=persona.user_name,
        )

    def generate(
        self,
        messages: list[ChatMessage],
        shape: ReplyShape,
        cancel: threading.Event | None,
        reply: Reply,
        tools: ToolBox | None,
    ) -> Iterator[ReplyDelta]:
        """Stream the model's answer into `reply` (agent.reply_stream); `reply.final` is then what is
        stored when it differs from what streamed."""
        stream = ReplyStream(self.state, messages, shape, reply)
        yield from stream.stream(tools, cancel, text_protocol=self._text_tools())

    def commit(self, reply: Reply, user_id: int, warnings: list[str]) -> TurnResult:
        """Store the final reply with its status and meta, and index it for recall."""
        state = self.state
        store = state.memory.messages
        cut = reply.finish == "length" and reply.status == "complete"
        text = reply.final if reply.final is not None else reply.text().strip()
        if cut and reply.final is None:  # any model: what the limit cut mid-sentence is not kept as said
            text, reply.tail = trim_to_sentence(text)
        first_at, last_at, tokens = reply.first_at, reply.last_at, reply.tokens
        tps = (tokens - 1) / (last_at - first_at) if first_at and last_at and last_at > first_at else None
        meta: dict[str, Any] = {**reply.meta, "model": state.backend.model_id, "tokens": tokens}
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
                with state.memory.db.atomic():  # the final reply and what the timeline says of it
                    store.update_content(reply.reply_id, text, status=status, meta=meta)
                    self._record(reply.reply_id, reply, text, status)
                if text:
                    self._index(reply.reply_id, state.persona.settings.name, text)
                self._tool_results(reply.reply_id, warnings)
            except sqlite.Error as exc:  # e.g. the disk filled while it streamed: say so, in words
                problem = database_error(exc, state.memory.path)
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
                state.memory.activity.error(error, message_id=user_id)
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

    def read_emotion(self, text: str) -> EmotionReading | None:
        """The emotion in the person's message (tens of milliseconds: it runs inside the turn). A detector
        that cannot run costs the turn nothing but this reading."""
        if self.state.emotions is None:
            return None
        try:
            return self.state.emotions.classify(text)
        except NexusArkError as exc:
            log.warning("emotion detection unavailable: %s", exc)
            return None

    def _log_emotion(self, feeling: EmotionReading, message_id: int, text: str) -> None:
        memory = self.state.memory
        memory.components.log_emotion(
            EmotionEntry(
                timestamp=iso(memory.messages.clock.now()),
                emotion=feeling.label,
                value=feeling.value,
                snippet=text[:200],
                message_id=message_id,
            )
        )
        memory.activity.emotion(
            label_word(feeling.label), feeling.value, feeling.confidence, message_id=message_id, snippet=text
        )

    def _record(self, reply_id: int, reply: Reply, text: str, status: MessageStatus) -> None:
        """The turn in the persona's activity timeline: its tool calls, the reply, what went wrong."""
        activity = self.state.memory.activity
        decisions = {model_name(run.tool): run.decision for run in self.state.tool_runs}
        for call in reply.tool_log:
            why = decisions.get(call["name"], "")
            activity.tool_call(call["name"], call["arguments"], call["result"], message_id=reply_id, why=why)
        if text:
            activity.message(reply_id, self.state.persona.settings.name, text, role="assistant")
        if status == "error" and reply.error:
            activity.error(reply.error, message_id=reply_id)

    def tools(self, *, person_present: bool = True, cancel: threading.Event | None = None) -> ToolBox | None:
        """The persona's memory tools, and the MCP tools its model can use (app.tools chooses them; a tool
        set to "ask" runs only with the person's yes, and never when `person_present` is False), unless
        the persona turned tools off."""
        state = self.state
        persona = state.persona
        if not persona.settings.conversation.tools:
            return None
        box = MemoryTools(state.memory, state.embedder).toolbox()
        # A model that can reflect may ask to change its soul (the person reviews it); a small one would
        # invent the request.
        capabilities = state.backend.capabilities()
        if persona.settings.soul.proposals and capabilities.reflects:
            box.add(SOUL_SPEC, SoulTool(persona, state.memory, state.memory.messages.clock, state.room))
        if state.tools is not None:
            state.tools.offer(
                persona.slug,
                capabilities,
                state.latest_text,
                state.embedder,
                person_present=person_present,
                record=state.tool_runs.append,
                box=box,
                cancel=cancel,
            )
        return box

    def _tool_results(self, reply_id: int, warnings: list[str]) -> None:
        """The MCP calls of this reply: each result indexed as what the tool said (never as the persona's
        words), so recall finds it; each fault said in the turn's warnings."""
        runs, self.state.tool_runs = self.state.tool_runs, []
        turns = []
        created_at = self.state.memory.messages.get(reply_id).created_at if runs else None
        for n, run in enumerate(runs):
            if run.fault is not None:
                warnings.append(str(run.fault.message))
            if run.outcome is not None and run.outcome.text.strip():
                turns.append(
                    Turn(
                        speaker=TOOL_SPEAKER.format(tool=run.tool.key),
                        text=run.outcome.text,
                        created_at=created_at,
                        source_id=f"tool:{reply_id}:{n}",
                        room=self.state.room,
                    )
                )
        if turns:
            index_turns(self.state.memory.archive, turns)

    def _text_tools(self) -> bool:
        """Whether a model without native tool calls gets the text protocol (its markup is hidden from the
        reply as it streams)."""
        setting = self.state.persona.settings.conversation.text_tools
        return setting == "on" or (setting == "auto" and self.state.backend.capabilities().text_tools)

    def _index(self, message_id: int, speaker: str, text: str) -> None:
        memory = self.state.memory
        created = memory.messages.get(message_id).created_at
        turn = Turn(
            speaker=speaker,
            text=text,
            created_at=created,
            source_id=f"msg:{message_id}",
            room=self.state.room,
        )
        index_turns(memory.archive, [turn])

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
        with self.state.persons_turn():
            reply = Reply(started=time.perf_counter())
            reply.meta["autonomous"] = reason
            if text is not None:
                reply.meta["template"] = True
                reply.reply_id = self.state.memory.messages.add(
                    speaker=self.state.persona.slug,
                    role="assistant",
                    content=text,
                    room=self.state.room,
                    status="streaming",
                    meta={"autonomous": reason},
                )
                reply.parts, reply.finish = [text], "stop"
                return self.commit(reply, 0, [])
            built = self.recall.preview_prompt(instruction, feelings=state)
            for _ in self.generate(built.messages, self.shape(), cancel, reply, None):
                pass
            return self.commit(reply, 0, [])
