"""A persona's part in a room (nexus_ark/rooms): hearing what the others said, and answering when the room
gives it the floor. Each member keeps its own record: what another persona said is stored in this persona's
memory as a line it heard (role "user", the speaker's slug and name), never that persona's prompt, tools or
feelings; what this persona says is its own reply, as in a conversation with the person alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace

from pydantic import BaseModel

from nexus_ark.agent.prompt import speaker_line
from nexus_ark.agent.recall import keywords_only
from nexus_ark.agent.reply import Reply, ReplyDelta, TurnResult
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.prompts.rooms import PASS_NOTE, PASS_NOTE_RESULTS, ROOM_NOTE
from nexus_ark.providers.base import ToolSpec
from nexus_ark.providers.tools import ToolBox

_PERSON = notice("user")  # the person, as the timeline names them (as in a turn)
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


class SessionRoom:
    def keep_note(self, key: str, sender: str, text: str) -> bool:
        """A note another member passed this persona (its words only): a line only this persona hears,
        read on its next turn in the room. False when it was kept already (delivered again)."""
        source = NOTE_SOURCE.format(room=self.room, key=key)
        if self.memory.db.execute("select 1 from messages where source_id = ?", [source]).fetchone():
            return False
        with self.memory.db.atomic():
            message_id = self.memory.messages.add(
                speaker="note",
                role="user",
                content=text,
                room=self.room,
                source_id=source,
                meta={"note_from": sender},
            )
            self.memory.activity.message(message_id, sender, text, role="user")
        return True

    def _room_tools(self, others: Sequence[str], notes: list[dict[str, str]]) -> ToolBox | None:
        """The persona's tools, and in a room the note it may pass another member (collected in `notes`;
        the room delivers them after the reply)."""
        box = self._tools()
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
        store = self.memory.messages
        added = 0
        for line in lines:
            if line.author == self.persona.slug:
                continue  # its own answer: in its memory already, as what it said
            source = ROOM_SOURCE.format(room=self.room, key=line.key)
            if self.memory.db.execute("select 1 from messages where source_id = ?", [source]).fetchone():
                continue
            person = line.author is None
            feeling = self._read_emotion(line.text) if person else None
            with self.memory.db.atomic():
                message_id = store.add(
                    speaker=line.author or "user",
                    role="user",
                    content=line.text,
                    room=self.room,
                    source_id=source,
                    meta=None if person else {"name": line.name},
                    created_at=line.created_at,
                )
                self.memory.activity.message(message_id, line.name or _PERSON, line.text, role="user")
                if feeling is not None:
                    self._log_emotion(feeling, message_id, line.text)
            self._index(message_id, line.name or _PERSON, line.text)
            added += 1
        return added

    def respond(
        self, others: Sequence[str], cancel: threading.Event | None = None
    ) -> Iterator[ReplyDelta | TurnResult]:
        """Answer what was said in the room since this persona last spoke (`others`: the other members'
        names, for the note that tells the model where it is). Stores nothing new but the reply."""
        with self._persons_turn():
            limit = self.persona.settings.conversation.history_messages
            history = self.memory.messages.recent(self.room, limit)
            cut = len(history)
            while cut and history[cut - 1].role == "user":
                cut -= 1
            unanswered = [m for m in history[cut:] if m.content.strip()]
            if not unanswered:
                raise NexusArkError(
                    notice("{name} has nothing to answer in this room yet.", name=self.persona.settings.name)
                )
            language = self.persona.settings.language
            said = "\n".join(speaker_line(m, language) for m in unanswered)
            shape = self._shape()
            if shape.small:  # a small model repeats a note like this one back: the names must do
                text = said
            else:
                note = ROOM_NOTE["ja" if self.persona.settings.language == "ja" else "en"]
                text = f"{note.format(others=', '.join(others))}\n\n{said}"
            prompt = self.preview_prompt(text, history[:cut])
            reply = Reply(started=time.perf_counter())
            reply.meta["room"] = self.room
            # A model that goes on writing the others' lines is stopped at the first of them.
            stops = [*shape.params.stop, *(f"\n{name}:" for name in others)]
            shape = replace(shape, params=shape.params.model_copy(update={"stop": stops}))
            warnings = [keywords_only(self.recall_problem)] if self.recall_problem else []
            names = [*others, self.persona.settings.name]
            notes: list[dict[str, str]] = []
            deltas = self._generate(prompt.messages, shape, cancel, reply, self._room_tools(others, notes))
            yield from _without_leading_name(deltas, names)
            if notes:
                reply.meta["notes"] = notes
            said_text = reply.final if reply.final is not None else reply.text()
            if strip_leading_name(said_text, names) != said_text:
                reply.final = strip_leading_name(said_text, names)
            yield self._commit(reply, unanswered[-1].id, warnings)
