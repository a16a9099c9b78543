"""Versions of the conversation: regenerate a reply, edit a message of the person's (what followed
stays as its branch), continue a reply the token limit cut, delete a message (with what memory derived
from it, if asked)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from nexus_ark.agent.prompt import build_prompt
from nexus_ark.agent.recall import Recall
from nexus_ark.agent.reply import Reply, ReplyDelta, TurnResult
from nexus_ark.agent.session_state import SessionState
from nexus_ark.agent.turn import Turns
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.prompts.chat import CONTINUE_PROMPT
from nexus_ark.providers.base import context_window


class Versions:
    """A conversation's versions and branches: a part of ChatSession (agent.session), given the session's
    state, its turns and its recall."""

    def __init__(self, state: SessionState, turns: Turns, recall: Recall) -> None:
        self.state = state
        self.turns = turns
        self.recall = recall

    def regenerate(
        self, reply_id: int, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """A new version of a reply. Earlier versions are kept (messages.versions, choose_version); the
        new one is what the conversation shows and the next prompt sees."""
        state = self.state
        with state.persons_turn():
            store = state.memory.messages
            old = store.get(reply_id)
            if old.role != "assistant" or old.hidden or old.room != state.room:
                raise NexusArkError(
                    notice("Only a reply in the conversation as it stands can be regenerated.")
                )
            limit = state.persona.settings.conversation.history_messages
            history = [m for m in store.recent(state.room, limit + 1) if m.id < old.id]
            user = next((m for m in reversed(history) if m.role == "user"), None)
            if user is None:
                raise NexusArkError(
                    notice("This reply answers no message of yours, so there is nothing to redo.")
                )
            store.hide_from(old.id)  # with anything after it: kept as that version's branch
            earlier = [m for m in history if m.id < user.id]
            try:  # the message answered is in the prompt already: not recalled
                prompt = self.recall.preview_prompt(user.content, earlier, exclude={f"msg:{user.id}"})
            except NexusArkError:
                store.choose_version(old.id)
                raise
            reply = Reply(started=time.perf_counter(), version_of=old.version_group)
            turns = self.turns
            tools = turns.tools(cancel=cancel)
            yield from turns.generate(prompt.messages, turns.shape(), cancel, reply, tools)
            result = turns.commit(reply, user.id, [])
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
        with self.state.persons_turn():
            store = self.state.memory.messages
            old = store.get(message_id)
            if old.role != "user" or old.hidden or old.room != self.state.room:
                raise NexusArkError(
                    notice("Only a message of yours in the conversation as it stands can be edited.")
                )
            store.hide_from(old.id)
            try:
                yield from self.turns.turn(text, cancel, version_of=old.version_group)
            except NexusArkError:  # not sent (too long, a damaged file): the old wording stays
                store.choose_version(old.id)
                raise

    def delete(self, message_id: int, *, forget: bool = False) -> None:
        """Delete a message. With `forget`, also what memory derived from it (its archive item, the text
        it lent its neighbours, and every running summary that holds it: those leave the prompt and recall
        at once and are rebuilt from the remaining messages by the next after-turn work); otherwise recall
        and the summary may still hold what was said."""
        memory = self.state.memory
        message = memory.messages.get(message_id)
        if forget:
            items = memory.archive.ids_of_source(message.source_id or f"msg:{message.id}")
            memory.forget(items)  # voids the summaries that held it (memory.summaries)
            self.recall.summaries().sweep_forgotten(self.state.room)
        # forget() deletes the message with its memory; else it goes on its own
        if memory.messages.exists(message.id):
            memory.messages.delete(message.id)

    def continue_reply(
        self, reply_id: int, cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """Go on with a reply the token limit cut short: the next part is appended to the same message."""
        state = self.state
        settings = state.persona.settings
        with state.persons_turn():
            message = state.memory.messages.get(reply_id)
            if message.role != "assistant" or not message.meta.get("cut_by_limit"):
                raise NexusArkError(notice("Only a reply that the token limit cut short can be continued."))
            history = state.memory.messages.recent(state.room, settings.conversation.history_messages)
            history = self.recall.after_summary([m for m in history if m.id <= reply_id])
            # It goes on from where the limit stopped it: the words cut off after its last whole sentence
            # (kept in meta, reply_shape) come back first, in the prompt too.
            shown = message.content.removesuffix("…") if message.meta.get("trails_off") else message.content
            tail = str(message.meta.get("cut_tail", "")).strip()
            restored = (" " if tail and not shown.endswith((" ", "\n")) else "") + tail
            base = shown + restored
            history = [m.model_copy(update={"content": base}) if m.id == reply_id else m for m in history]
            user = next((m for m in reversed(history) if m.role == "user"), None)
            memory = self.recall.memory_context(user.content if user else message.content, history)
            messages = build_prompt(
                state.persona,
                history,
                CONTINUE_PROMPT,
                memory,
                count=state.backend.count_tokens,
                context_size=context_window(state.backend, settings.model.context_size),
                max_tokens=settings.model.max_tokens,
            ).messages
            reply = Reply(started=time.perf_counter(), reply_id=reply_id, parts=[base])
            reply.meta = {k: v for k, v in message.meta.items() if k == "tool_calls"}
            reply.meta["continued"] = int(message.meta.get("continued", 0)) + 1
            gap = "" if base.endswith((" ", "\n")) else " "
            deltas = self.turns.generate(messages, self.turns.shape(), cancel, reply, None)
            for i, delta in enumerate(deltas):
                yield ReplyDelta(restored + gap + delta.text.lstrip()) if i == 0 else delta
                if i == 0 and len(reply.parts) > 1:
                    reply.parts[1] = gap + reply.parts[1].lstrip()
            if reply.final is not None:  # a small model's sentences: after what was there
                reply.final = (base + gap + reply.final.lstrip()) if reply.final else base
            yield self.turns.commit(reply, user.id if user else reply_id, [])
