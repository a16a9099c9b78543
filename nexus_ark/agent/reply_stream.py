"""A reply as the model streams it: tool rounds included, journaled to the messages table as it comes,
cut where it starts to copy the prompt's scaffolding (agent.reply_scaffold), and for a small model let
out a whole sentence at a time and ended at one (agent.reply_shape). `Reply.final` is then what is
stored; the turn (agent.turn) commits it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from nexus_ark.agent.chat_template import for_template, late_system_accepted
from nexus_ark.agent.reply import Reply, ReplyDelta
from nexus_ark.agent.reply_scaffold import ScaffoldCutter, note_lines
from nexus_ark.agent.reply_shape import ReplyShape, SentenceGate, earlier_sentences
from nexus_ark.agent.session_state import SessionState
from nexus_ark.errors import NexusArkError
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.tools import ToolBox, ToolLoopResult, ToolUse, stream_tool_loop

MAX_TOOL_ROUNDS = 3


class ReplyStream:
    """One reply's generation into `reply`; iterate stream() for what the person sees."""

    def __init__(
        self, state: SessionState, messages: list[ChatMessage], shape: ReplyShape, reply: Reply
    ) -> None:
        self.state, self.shape, self.reply = state, shape, reply
        caps = state.backend.capabilities()
        self.messages = for_template(
            messages, late_system_accepted(caps.chat_template, state.backend.model_id)
        )
        # A reply that starts to copy the prompt's scaffolding ends there: what is shown, journaled and
        # stored is what the cutter lets out.
        late = [m.content for m in self.messages[1:] if m.role == "system"]  # the notes (agent.prompt)
        self.cutter = ScaffoldCutter(notes=note_lines("\n".join(late)))
        self.gate = (
            SentenceGate(shape, earlier_sentences(m.content for m in self.messages if m.role == "assistant"))
            if shape.small
            else None
        )
        self.last_journal = reply.started

    def stream(
        self, tools: ToolBox | None, cancel: threading.Event | None, *, text_protocol: bool
    ) -> Iterator[ReplyDelta]:
        """The model's answer as the person sees it. Whatever fails, the reply keeps what came (its status
        and error say what happened)."""
        reply, loop = self.reply, None
        try:
            loop = stream_tool_loop(
                self.state.backend,
                self.messages,
                tools,
                params=self.shape.params,
                cancel=cancel,
                max_turns=MAX_TOOL_ROUNDS,
                answer_after_limit=True,
                text_protocol=text_protocol,
            )
            for event in loop:
                if isinstance(event, ToolUse):
                    call, output = event.call, event.output
                    reply.tool_log.append(
                        {"name": call.name, "arguments": call.arguments, "result": output[:500]}
                    )
                elif isinstance(event, ToolLoopResult):
                    reply.finish = event.finish_reason
                    if event.finish_reason == "cancelled":
                        reply.status = "stopped"
                elif event.text:
                    yield from self._piece(event.text)
                    if self._ended():
                        break
        except NexusArkError as exc:
            reply.status, reply.error = "error", str(exc)
        except Exception as exc:  # a backend bug must not lose the turn
            reply.status, reply.error = "error", f"{type(exc).__name__}: {exc}"
        finally:
            if loop is not None:
                loop.close()  # an early end stops the model's request (its stream cancels)
        yield from self._finish()

    def _piece(self, streamed: str) -> Iterator[ReplyDelta]:
        """A streamed piece: stored from the first one on (a crash leaves at least the first words),
        journaled every journal_interval_s, shown as the gate lets it out."""
        reply, store = self.reply, self.state.memory.messages
        text = self.cutter.feed(streamed)
        now = time.perf_counter()
        if reply.first_at is None:
            reply.first_at = now
            if reply.reply_id is None:
                reply.reply_id = store.add(
                    speaker=self.state.persona.slug,
                    role="assistant",
                    content=text,
                    room=self.state.room,
                    status="streaming",
                    version_of=reply.version_of,
                    # a message written first says so from its first word: a draft of one cut off by a
                    # crash is removed at the next start (messages.recover_interrupted)
                    meta={"autonomous": reply.meta["autonomous"]} if "autonomous" in reply.meta else None,
                )
            else:  # a continuation streams into the message it continues
                store.update_content(reply.reply_id, reply.text(), status="streaming")
        reply.last_at = now
        reply.tokens += 1
        reply.parts.append(text)
        shown = self.gate.feed(text) if self.gate is not None else text
        if shown:
            yield ReplyDelta(shown)
        if now - self.last_journal >= self.state.journal_interval_s and reply.reply_id is not None:
            store.update_content(reply.reply_id, reply.text())
            self.last_journal = now

    def _ended(self) -> bool:
        """Whether the reply ends here, before the model does."""
        if self.cutter.cut:  # it began to write the prompt's notes: the reply ends before them
            self.reply.finish = "stop"
            self.reply.meta["scaffolding_cut"] = True
            return True
        if self.gate is not None and self.gate.done:  # long enough, at a sentence end: it ends here
            self.reply.finish = "stop"
            self.reply.meta["ended_at_sentence"] = True
            return True
        return False

    def _finish(self) -> Iterator[ReplyDelta]:
        """What the cutter and the gate still held, let out; what they changed, said in the meta."""
        reply, cutter, gate = self.reply, self.cutter, self.gate
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
