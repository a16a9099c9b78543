"""A room's conversation (issue 24): the person's message goes into the room's journal and to every
member, the members chosen by turn-taking answer one after another on their own runtimes (each on its own
model and memory), and each answer reaches the others as a line they heard. Nothing of a member's prompt,
tools, drives or notes is passed on: only what it said.

Driven from one thread (the terminal's, or the window's room lane); the members' work runs on their queues.
Opened by the rooms service (rooms/service.py), which gives it the room's journal and the one way a line
enters the room (RoomService.deliver). Its settings change while it is open (update_settings, through
app.rooms.update): between turns, so an answer under way finishes on the settings it began with, and no
reopening.
"""

from __future__ import annotations

import logging
import random
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from nexus_ark.agent.reply import ReplyDelta, TurnResult
from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.config import load_toml_model
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.room_keys import room_key
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona
from nexus_ark.rooms.journal import RoomJournal
from nexus_ark.rooms.room import ROOM_FILE, RoomSettings, checked_settings
from nexus_ark.rooms.turn_taking import Member, mentioned, pick_next, plan_replies
from nexus_ark.runtime.persona_runtime import PersonaRuntime

log = logging.getLogger(__name__)

ABOUT_CHARS = 400  # of a member's soul, for turn-taking's relevance
CATCH_UP_LINES = 200  # what a member may have missed at a crash is at the journal's end


@dataclass(frozen=True)
class Said:
    """A line entered the room: the person's message, or a member's finished answer."""

    line: HeardLine


@dataclass(frozen=True)
class Speaking:
    slug: str
    name: str


@dataclass(frozen=True)
class Streamed:
    slug: str
    text: str


@dataclass(frozen=True)
class Answered:
    slug: str
    result: TurnResult


@dataclass(frozen=True)
class Withdrawn:
    """A member's reply repeated another member's line (agent.reply_repeats): it is not stored and does
    not enter the room; what of it streamed (a paraphrase; a copy never streams) is taken off the view."""

    slug: str
    name: str
    repeated: str  # the name of the member whose line it repeated


RoomEvent = Said | Speaking | Streamed | Answered | Withdrawn

# How many of the journal's last lines a reply is checked against for repeating another member's.
REPEAT_WINDOW = 12


class Deliver(Protocol):
    """How a line enters the room (RoomService.deliver): into the journal, then to each of `to` but the
    author; returned once each has heard it."""

    def __call__(
        self,
        slug: str,
        author: str | None,
        name: str,
        text: str,
        reply_id: int | None = None,
        *,
        to: Sequence[str],
        wait: bool = True,
    ) -> HeardLine: ...


class RoomConversation:
    def __init__(
        self,
        slug: str,
        settings: RoomSettings,
        folder: Path,
        journal: RoomJournal,
        deliver: Deliver,
        runtime: Callable[[str], PersonaRuntime],
        persona: Callable[[str], Persona],
        rng: random.Random | None = None,
    ) -> None:
        self.slug = slug
        self.key = room_key(slug)
        self.folder = folder
        self.settings = settings
        self._deliver = deliver
        self._runtime = runtime
        self._persona = persona
        self.rng = rng or random.Random()
        self.members = [_member(persona(m.persona), m.talkativeness, m.muted) for m in settings.members]
        self.names = {m.slug: m.name for m in self.members}
        self.closed = False
        # New settings wait here while a part of a turn runs (update_settings); _busy counts those parts.
        self._lock = threading.Lock()
        self._pending: tuple[RoomSettings, list[Member]] | None = None
        self._busy = 0
        # room.toml as last seen: a change made outside the app is taken between turns (_changed_outside).
        self._file_seen = _stamp(folder / ROOM_FILE)
        self.journal = journal  # the rooms service's, shared with the lines members write first
        # Members' lines since the person last spoke, as the journal ends (the cap holds across a reopen).
        tail = self.journal.lines(settings.cap + 1)
        self.spoken_since_person = 0
        for line in reversed(tail):
            if line.author is None:
                break
            self.spoken_since_person += 1

    # -- what the room shows ------------------------------------------------------------------------
    def lines(self, limit: int = 200) -> list[HeardLine]:
        return self.journal.lines(limit)

    def catch_up(self) -> int:
        """Every member hears the journal's lines it missed (a crash between the journal and a member);
        returns how many lines were delivered in all."""
        self._journal_cut_replies()
        lines = self.journal.lines(CATCH_UP_LINES)
        return sum(self._runtime(m.slug).rooms.hear(self.key, lines) for m in self.members) if lines else 0

    def _journal_cut_replies(self) -> None:
        """A member's answer a kill cut off stayed in its own memory only (interrupted): it enters the
        journal as far as it was said, after the journal's last line, so the room shows it and the others
        hear it, once. (Older cut answers, from before the room's last line, are left where they are.)"""
        last = self.journal.lines(1)
        since = last[0].created_at if last else ""
        for member in self.members:
            journaled = self.journal.reply_ids(member.slug)
            for message in self._runtime(member.slug).rooms.cut_replies(self.key, since):
                if message.id not in journaled:
                    said = (message.content, message.created_at, message.id)
                    self.journal.add(member.slug, member.name, *said)

    # -- the room's settings, changed while it is open -----------------------------------------------
    def update_settings(self, settings: RoomSettings) -> bool:
        """New settings without closing the room (members muted, their talkativeness, the reply order, the
        cap, the pause, the name, members added or removed). Validated whole first: settings a room cannot
        have, or a new member that cannot be opened, raise NexusArkError (naming room.toml) and nothing
        changes. Taken at once when no part of a turn runs, else as soon as the part under way ends: the
        answer being written finishes; an answer planned before the change is not asked of a member muted
        or removed since, nor past the new cap. A member added hears what was said before it came.
        Saving them is the caller's (app.rooms.update). Returns whether they were taken at once."""
        prepared = self._prepared(checked_settings(settings, self.folder / ROOM_FILE))
        with self._lock:
            self._pending = prepared
            if self._busy:
                return False
            self._take_settings()
        return True

    def _prepared(self, checked: RoomSettings) -> tuple[RoomSettings, list[Member]]:
        known = {m.slug: m for m in self.members}
        members = [
            known[m.persona].model_copy(update={"talkativeness": m.talkativeness, "muted": m.muted})
            if m.persona in known
            else self._newcomer(m.persona, m.talkativeness, m.muted)
            for m in checked.members
        ]
        return checked, members

    def _changed_outside(self) -> None:
        """room.toml changed outside the app (a text editor; `nexus-ark room set` is refused while the app
        holds the data folder) since it was last seen: its settings wait to be taken as update_settings' do
        (under _lock). A file that cannot be read, or a newcomer that cannot open, keeps the settings the
        room has (and says why in the log)."""
        path = self.folder / ROOM_FILE
        stamp = _stamp(path)
        if stamp is None or stamp == self._file_seen:
            return
        self._file_seen = stamp
        try:
            settings = load_toml_model(path, RoomSettings)
            if settings == (self._pending[0] if self._pending is not None else self.settings):
                return  # this room's own change, saved by app.rooms.update
            self._pending = self._prepared(settings)
        except NexusArkError as exc:
            log.warning("%s changed, and the open room keeps its settings: %s", path, exc)

    def _newcomer(self, slug: str, talkativeness: float, muted: bool) -> Member:
        member = _member(self._persona(slug), talkativeness, muted)
        self._runtime(slug)  # its memory opens now: a member that cannot open is refused before any change
        return member

    def _take_settings(self) -> None:
        """The settings waiting, if any (under _lock, between parts of turns)."""
        if self._pending is None:
            return
        (self.settings, members), self._pending = self._pending, None
        newcomers = [m.slug for m in members if m.slug not in self.names]
        self.members, self.names = members, {m.slug: m.name for m in members}
        if newcomers:
            lines = self.journal.lines(CATCH_UP_LINES)
            for slug in newcomers:
                self._runtime(slug).rooms.hear(self.key, lines)

    @contextmanager
    def _part(self) -> Iterator[None]:
        """A part of a turn (the person's line entered and the answers planned; one answer): it begins on
        the settings waiting, and settings that come meanwhile wait for its end."""
        with self._lock:
            self._changed_outside()
            self._take_settings()
            self._busy += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1
                if not self._busy:
                    self._take_settings()

    def _still_asked(self, slug: str) -> bool:
        """An answer planned before a change of settings: still a member, not muted, under the cap."""
        member = next((m for m in self.members if m.slug == slug), None)
        return member is not None and not member.muted and self.spoken_since_person < self.settings.cap

    # -- the person's turn -----------------------------------------------------------------------
    def say(self, text: str, cancel: threading.Event | None = None) -> Iterator[RoomEvent]:
        """The person's message, then the answers turn-taking chose (at most the room's cap)."""
        text = text.strip()
        if not text:
            raise NexusArkError(notice("The message is empty."))
        with self._part():
            line = self._enter(None, text)
            self.spoken_since_person = 0
            planned = plan_replies(
                text, None, self.members, self.settings.strategy, self.rng, cap=self.settings.cap
            )
        yield Said(line)
        for slug in planned:
            if cancel is not None and cancel.is_set():
                return
            with self._part():
                if self._still_asked(slug):
                    # The first to speak answers the person; the others may follow on what was said.
                    yield from self._answer(slug, cancel, answering_person=self.spoken_since_person == 0)

    def next(self, who: str, cancel: threading.Event | None = None) -> Iterator[RoomEvent]:
        """The person chose who speaks now (manual order, /next NAME): a member's slug or name."""
        with self._part():
            slug = self.member_slug(who)
            last = self.journal.lines(1)
            yield from self._answer(slug, cancel, answering_person=bool(last) and last[0].author is None)

    def go_on(self, cancel: threading.Event | None = None) -> Iterator[RoomEvent]:
        """Auto mode's one step: after the last line, who goes on (nothing when the cap is reached or
        the order is manual; the caller pauses between steps and stops when the person types)."""
        with self._part():
            last = self.journal.lines(1)
            if not last:
                return
            line = last[0]
            if line.author is None:
                chosen = plan_replies(line.text, None, self.members, self.settings.strategy, self.rng, cap=1)
                slug = chosen[0] if chosen else None
            else:
                slug = pick_next(
                    line.text,
                    line.author,
                    self.members,
                    self.settings.strategy,
                    self.rng,
                    spoken_since_person=self.spoken_since_person,
                    cap=self.settings.cap,
                )
            if slug is not None:
                yield from self._answer(slug, cancel, answering_person=line.author is None)

    def member_slug(self, who: str) -> str:
        for member in self.members:
            if who in (member.slug, member.name):
                return member.slug
        named = mentioned(who, self.members)
        if named:
            return named[0]
        raise NexusArkError(
            notice("{who} is not in this room: {members}.", who=who, members=", ".join(self.names.values()))
        )

    def close(self) -> None:
        """The conversation ends here; the journal stays the rooms service's (it closes it with the app)."""
        self.closed = True

    # -- inside -------------------------------------------------------------------------------------
    def _enter(self, author: str | None, text: str, reply_id: int | None = None) -> HeardLine:
        """Into the journal (committed), then to every member but the author (who said it already), each
        having heard it before the next answer begins."""
        name = self.names[author] if author is not None else ""
        return self._deliver(self.slug, author, name, text, reply_id, to=[m.slug for m in self.members])

    def _answer(
        self, slug: str, cancel: threading.Event | None, *, answering_person: bool = False
    ) -> Iterator[RoomEvent]:
        name = self.names[slug]
        others = [m.name for m in self.members if m.slug != slug]
        # The other members' latest lines: a reply that says one of them again is left out.
        recent = [ln for ln in self.journal.lines(REPEAT_WINDOW) if ln.author not in (None, slug)]
        yield Speaking(slug, name)
        result: TurnResult | None = None
        answers = self._runtime(slug).rooms.respond(
            self.key,
            others,
            cancel,
            answering_person=answering_person,
            not_again=[ln.text for ln in recent],
        )
        for item in answers:
            if isinstance(item, ReplyDelta):
                yield Streamed(slug, item.text)
            elif isinstance(item, TurnResult):
                result = item
        if result is None:
            return
        if (copied := result.meta.get("repeat_of")) is not None:
            yield Withdrawn(slug, name, recent[int(copied)].name)
            return
        yield Answered(slug, result)
        for note in result.meta.get("notes", []):  # private: to the one member named, in its words
            recipient = self.member_slug(note["to"])
            self._runtime(recipient).rooms.receive_note(self.key, uuid.uuid4().hex, name, note["text"])
        if result.text.strip() and result.status in ("complete", "stopped"):
            self.spoken_since_person += 1
            yield Said(self._enter(slug, result.text, result.reply_id))


def _stamp(path: Path) -> tuple[int, int] | None:
    """When and how long the file was last written (None: it is not there now)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _member(persona: Persona, talkativeness: float, muted: bool) -> Member:
    settings = persona.settings
    nicknames = [persona.slug] if persona.slug.casefold() != settings.name.casefold() else []
    return Member(
        slug=persona.slug,
        name=settings.name,
        nicknames=nicknames,
        talkativeness=talkativeness,
        muted=muted,
        about=persona.soul.strip()[:ABOUT_CHARS],
    )
