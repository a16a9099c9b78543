"""A persona's part in a room (nexus_ark/rooms): hearing what the others said, and answering when the room
gives it the floor. Each member keeps its own record: what another persona said is stored in this persona's
memory as a line it heard (role "user", the speaker's slug and name), never that persona's prompt, tools or
feelings; what this persona says is its own reply, as in a conversation with the person alone."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel

from nexus_ark.agent.prompt import speaker_line
from nexus_ark.agent.recall import Recall, keywords_only
from nexus_ark.agent.reply import Reply, ReplyDelta, TurnResult
from nexus_ark.agent.reply_repeats import may_become_copy, repeated_line
from nexus_ark.agent.session_state import SessionState
from nexus_ark.agent.turn import PERSON_WORD, USER_SPEAKER, Turns
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.notices import notice
from nexus_ark.prompts.rooms import PASS_NOTE, PASS_NOTE_RESULTS, ROOM_NOTE, ROOM_PERSON
from nexus_ark.providers.base import ToolSpec
from nexus_ark.providers.tools import ToolBox

log = logging.getLogger(__name__)

ROOM_SOURCE = "room:{room}:{key}"  # a heard line's source_id: one copy per room message per member
NOTE_SOURCE = "note:{room}:{key}"
NOTE_MAX_CHARS = 500


class HeardLine(BaseModel):
    """One message of a room as a member hears it (the room's journal holds them all)."""

    key: str  # unique in the room
    author: str | None  # the persona's slug; None: the person
    name: str  # who said it, as shown; "" for the person
    text: str
    created_at: str
    reply_id: int | None = None  # a member's answer: its message in the author's own memory


def strip_leading_name(text: str, names: Sequence[str]) -> str:
    """A reply that opens with a member's name and a colon ("Aria: …") is a small model writing a line of
    the room's transcript: the name is not part of what it says."""
    stripped = text.lstrip()
    for name in names:
        for colon in (":", "："):
            if stripped.startswith(f"{name}{colon}"):
                return stripped[len(name) + 1 :].lstrip()
    return text


def _without_leading_name(deltas: Iterator[ReplyDelta], names: Sequence[str]) -> Iterator[ReplyDelta]:
    """The streamed reply without such a name: its first characters are held until they show one or not."""
    head, started = "", False
    longest = max((len(n) for n in names), default=0) + 2
    for delta in deltas:
        if started:
            yield delta
            continue
        head += delta.text
        if len(head.lstrip()) <= longest and not any(c in head for c in ":："):
            continue
        started = True
        if shown := strip_leading_name(head, names):
            yield ReplyDelta(shown)
    if not started and (shown := strip_leading_name(head, names)):
        yield ReplyDelta(shown)


@dataclass
class _CopyHold:
    """The streamed reply, held back while its words so far are the start of another member's line: a
    copy is never shown (respond drops it), and a reply that goes its own way is let out at once. What is
    still held when the reply ends is `held`: respond lets it out once it is known to be no copy."""

    lines: Sequence[str]
    held: str = ""
    released: bool = False

    def __call__(self, deltas: Iterator[ReplyDelta]) -> Iterator[ReplyDelta]:
        self.released = not self.lines
        for delta in deltas:
            if self.released:
                yield delta
                continue
            self.held += delta.text
            if not may_become_copy(self.held, self.lines):
                self.released, held, self.held = True, self.held, ""
                yield ReplyDelta(held)


def _person_last(lines: list[StoredMessage], person_index: int | None) -> list[StoredMessage]:
    """The lines with the person's newest one moved last: the member answers the person first (a line a
    member wrote first meanwhile, or a small model's follower, would otherwise be what it answers)."""
    if person_index is None or person_index == len(lines) - 1:
        return lines
    return [*lines[:person_index], *lines[person_index + 1 :], lines[person_index]]


class RoomTurns:
    """A conversation's part in a room: a part of ChatSession (agent.session), given the session's state,
    its turns and its recall."""

    def __init__(self, state: SessionState, turns: Turns, recall: Recall) -> None:
        self.state = state
        self.turns = turns
        self.recall = recall

    def _heard_already(self, source: str) -> bool:
        return self.state.memory.messages.has_source(source)

    def keep_note(self, key: str, sender: str, text: str) -> bool:
        """A note another member passed this persona (its words only): a line only this persona hears,
        read on its next turn in the room. False when it was kept already (delivered again)."""
        source = NOTE_SOURCE.format(room=self.state.room, key=key)
        if self._heard_already(source):
            return False
        self.turns.store_incoming(
            text, speaker="note", name=sender, source_id=source, meta={"note_from": sender}, index=False
        )
        return True

    def _room_tools(self, others: Sequence[str], notes: list[dict[str, str]]) -> ToolBox | None:
        """The persona's tools, and in a room the note it may pass another member (collected in `notes`;
        the room delivers them after the reply)."""
        box = self.turns.tools(person_present=False)  # a room's turns never stop to ask the person
        if box is None or not others:
            return box

        def pass_note(args: dict[str, object]) -> str:
            to, text = str(args.get("to", "")).strip(), " ".join(str(args.get("text", "")).split())
            if not text:
                return PASS_NOTE_RESULTS["empty"]
            match = next((n for n in others if n.casefold() == to.casefold()), None)
            if match is None:
                return PASS_NOTE_RESULTS["unknown"].format(name=to, names=", ".join(others))
            notes.append({"to": match, "text": text[:NOTE_MAX_CHARS]})
            return PASS_NOTE_RESULTS["passed"].format(name=match)

        spec = ToolSpec(
            name=PASS_NOTE["name"],
            description=PASS_NOTE["description"],
            parameters={
                "type": "object",
                "properties": {
                    "to": {"type": "string", "description": PASS_NOTE["to"], "enum": list(others)},
                    "text": {"type": "string", "description": PASS_NOTE["text"]},
                },
                "required": ["to", "text"],
            },
        )
        box.add(spec, pass_note)
        return box

    def hear(self, lines: Sequence[HeardLine]) -> int:
        """Record lines said by others in the room, each once (a line already heard is skipped, so a room
        can deliver again after a crash); returns how many were new. The person's lines are read for
        feelings as a turn reads them."""
        added = 0
        for line in lines:
            if line.author == self.state.persona.slug:
                continue  # its own answer: in its memory already, as what it said
            source = ROOM_SOURCE.format(room=self.state.room, key=line.key)
            if self._heard_already(source):
                continue
            person = line.author is None
            self.turns.store_incoming(
                line.text,
                speaker=line.author or USER_SPEAKER,
                name=line.name or PERSON_WORD,
                feeling=self.turns.read_emotion(line.text) if person else None,
                source_id=source,
                meta=None if person else {"name": line.name},
                created_at=line.created_at,
            )
            added += 1
        return added

    def respond(
        self,
        others: Sequence[str],
        cancel: threading.Event | None = None,
        *,
        answering_person: bool = False,
        not_again: Sequence[str] = (),
    ) -> Iterator[ReplyDelta | TurnResult]:
        """Answer what was said in the room since this persona last spoke (`others`: the other members'
        names, for the note that tells the model where it is). Stores nothing new but the reply.

        answering_person: this member is the first to speak after the person (turn-taking): its prompt
        ends with the person's newest words, whatever came after them, so the person's question is
        answered before members react to each other. A small model's prompt always ends with them: given
        another member's line last, the 135M model repeated it.
        not_again: the other members' lines since the person last spoke. A reply that repeats one (by
        words, or by meaning with the persona's embedder: agent.reply_repeats) is not stored: the
        TurnResult has no reply and meta["repeat_of"] says whose line it repeated; while it streams it
        is held back as long as it may still turn out such a copy."""
        state = self.state
        with state.persons_turn():
            history = state.memory.messages.recent(
                state.room, state.persona.settings.conversation.history_messages
            )
            cut = len(history)
            while cut and history[cut - 1].role == "user":
                cut -= 1
            unanswered = [m for m in history[cut:] if m.content.strip()]
            if not unanswered:
                raise NexusArkError(
                    notice("{name} has nothing to answer in this room yet.", name=state.persona.settings.name)
                )
            shape = self.turns.shape()
            unanswered, text = self._what_was_said(
                unanswered, others, answering_person or shape.small, shape.small
            )
            # The lines answered are in the prompt already: recalled too, the 135M model said them again
            # ("Ken: Hello, both of you!…") and the reply was left empty once its copy was taken out.
            exclude = {f"msg:{m.id}" for m in unanswered}
            prompt = self.recall.preview_prompt(text, history[:cut], exclude=exclude)
            reply = Reply(started=time.perf_counter())
            reply.meta["room"] = state.room
            # A model that goes on writing the others' lines (or the person's) is stopped at the first.
            person = state.persona.user_name
            speakers = [*others, *([person] if person else [])]
            stops = [*shape.params.stop, *(f"\n{name}:" for name in speakers)]
            shape = replace(shape, params=shape.params.model_copy(update={"stop": stops}))
            warnings: list[str] = [keywords_only(state.recall_problem)] if state.recall_problem else []
            names = [*speakers, state.persona.settings.name]
            notes: list[dict[str, str]] = []
            deltas = self.turns.generate(
                prompt.messages, shape, cancel, reply, self._room_tools(others, notes)
            )
            hold = _CopyHold(not_again)
            yield from hold(_without_leading_name(deltas, names))
            if notes:
                reply.meta["notes"] = notes
            said_text = reply.final if reply.final is not None else reply.text()
            if strip_leading_name(said_text, names) != said_text:
                reply.final = strip_leading_name(said_text, names)
            said_text = reply.final if reply.final is not None else reply.text().strip()
            if not_again and reply.status == "complete" and said_text.strip():
                copied = self._repeats(said_text, not_again)
                if copied is not None:
                    yield self._drop_repeat(reply, unanswered[-1].id, copied, warnings)
                    return
            if hold.held:  # held in case it was a copy, and it was not
                yield ReplyDelta(hold.held)
            yield self.turns.commit(reply, unanswered[-1].id, warnings)

    def _what_was_said(
        self, unanswered: list[StoredMessage], others: Sequence[str], person_last: bool, small: bool
    ) -> tuple[list[StoredMessage], str]:
        """The lines to answer (the person's newest last when `person_last`) and the text the prompt ends
        with: the lines by name, after a note that says where the persona is (none for a small model)."""
        settings = self.state.persona.settings
        language = "ja" if settings.language == "ja" else "en"
        person = self.state.persona.user_name
        persons = [i for i, m in enumerate(unanswered) if m.speaker == "user" and "note_from" not in m.meta]
        if person_last:
            unanswered = _person_last(unanswered, persons[-1] if persons else None)
        said = "\n".join(speaker_line(m, language, person) for m in unanswered)
        if small:  # a small model repeats a note like this one back: the names must do
            return unanswered, said
        note = ROOM_NOTE[language].format(others=", ".join(others), person=person or ROOM_PERSON[language])
        return unanswered, f"{note}\n\n{said}"

    def _repeats(self, text: str, lines: Sequence[str]) -> int | None:
        """Which of the others' lines the reply repeats (by words; by meaning where the embedder works)."""
        try:
            return repeated_line(text, lines, self.state.embedder)
        except Exception as exc:  # an embedder that fails costs the check its meaning test, not the turn
            log.warning("the room's repeat check by meaning failed: %s", exc)
            return repeated_line(text, lines, None)

    def _drop_repeat(self, reply: Reply, user_id: int, copied: int, warnings: list[str]) -> TurnResult:
        """A reply that says another member's line again: its draft is removed from this persona's
        memory (it is not what it said), and the room is told whose line it repeated."""
        state = self.state
        if reply.reply_id is not None:
            state.memory.messages.delete(reply.reply_id)
        log.info("%s repeated another member's line in %s: left out", state.persona.settings.name, state.room)
        return TurnResult(
            user_message_id=user_id,
            reply_id=None,
            text="",
            status="complete",
            tokens=reply.tokens,
            meta={"repeat_of": copied, "repeated": reply.final or reply.text()},
            warnings=warnings,
        )
