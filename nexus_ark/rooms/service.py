"""app.rooms: the person with several personas at once. The rooms in the data folder (their settings,
`.store`), the conversations open here, and the one way a line enters a room: `deliver` writes it into the
room's journal and hands it to every other member. Both routes in use it: a conversation's lines (the
person's message, a member's answer) and a message a member wrote first in a room (runtime/life.py
publishes it as the core event "autonomous_message"; the service hears it here, on the writer's queue
thread). Each room's journal is opened once and shared by both routes (RoomJournal serializes its use)."""

from __future__ import annotations

import logging
import random
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from nexus_ark.agent.room_turn import HeardLine
from nexus_ark.clock import Clock, iso
from nexus_ark.config import problem_list
from nexus_ark.errors import NexusArkError
from nexus_ark.events import EventHub
from nexus_ark.memory.room_keys import RoomKey, room_key
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona
from nexus_ark.rooms.conversation import RoomConversation
from nexus_ark.rooms.journal import RoomJournal
from nexus_ark.rooms.room import (
    MAX_MEMBERS,
    MIN_MEMBERS,
    ROOM_FILE,
    RoomMemberSettings,
    RoomSettings,
    RoomStore,
    checked_settings,
)
from nexus_ark.rooms.turn_taking import Strategy
from nexus_ark.runtime.persona_runtime import PersonaRuntime

log = logging.getLogger(__name__)


class RoomMembers(Protocol):
    """What the rooms ask of the personas (app.personas satisfies it)."""

    def runtime(self, slug: str) -> PersonaRuntime: ...

    def load(self, slug: str) -> Persona: ...


class RoomService:
    def __init__(self, store: RoomStore, members: RoomMembers, clock: Clock, events: EventHub) -> None:
        self.store = store
        self._members = members
        self._clock = clock
        # _lock guards the two collections only, never held across slow work.
        self._lock = threading.Lock()
        self._journals: dict[str, RoomJournal] = {}
        self._conversations: weakref.WeakSet[RoomConversation] = weakref.WeakSet()
        events.subscribe("autonomous_message", self._written_first)

    # -- the rooms' settings --------------------------------------------------------------------------
    def load(self, slug: str) -> RoomSettings:
        return self.store.load(slug)

    def all(self) -> list[tuple[str, RoomSettings | NexusArkError]]:
        return self.store.list()

    def folder(self, slug: str) -> Path:
        return self.store.folder(slug)

    def title(self, key: str) -> str | None:
        return self.store.title(key)

    def delete(self, slug: str) -> None:
        """The room and its journal go; every member keeps what it heard and said there."""
        with self._lock:
            journal = self._journals.pop(slug, None)
        if journal is not None:
            journal.close()
        self.store.delete(slug)

    def create(self, name: str, members: list[str], strategy: Strategy = "natural") -> str:
        """A new room of these personas (each must open); returns its slug."""
        for slug in members:
            self._members.load(slug)  # a clear error for a persona that is not there
        if not MIN_MEMBERS <= len(set(members)) <= MAX_MEMBERS:
            # In words: pydantic's own says "List should have at least 2 items" and quotes its objects.
            raise NexusArkError(
                notice(
                    "The room {name} cannot be made: a room needs {low} to {high} different personas, "
                    "not {count} ({members}).",
                    name=name,
                    low=MIN_MEMBERS,
                    high=MAX_MEMBERS,
                    count=len(set(members)),
                    members=", ".join(dict.fromkeys(members)) or notice("none"),
                )
            )
        try:
            settings = RoomSettings.model_validate(
                {
                    "name": name,
                    "members": [RoomMemberSettings.model_validate({"persona": s}) for s in members],
                    "strategy": strategy,
                }
            )
        except ValidationError as exc:
            raise NexusArkError(
                notice("The room {name} cannot be made: {problems}", name=name, problems=problem_list(exc)),
                hint=notice("A room has a name and two to six different personas."),
            ) from None
        return self.store.create(settings, self._clock.now())

    def room_for(self, members: list[str], strategy: Strategy | None = None) -> str:
        """The room of exactly these personas (the first one made), or a new one named after them."""
        wanted = sorted(members)
        for slug, settings in self.store.list():
            if isinstance(settings, RoomSettings) and sorted(settings.slugs) == wanted:
                if strategy is not None and settings.strategy != strategy:
                    self.update(slug, {"strategy": strategy})
                return slug
        names = [self._members.load(s).settings.name for s in members]
        return self.create(" & ".join(names), members, strategy or "natural")

    def update(self, slug: str, changes: dict[str, Any]) -> RoomSettings:
        """Change a room's settings (changes: RoomSettings' fields, members as RoomMemberSettings or dicts):
        validated whole, saved to its room.toml, and handed to each conversation of the room open here,
        which takes them between turns (RoomConversation.update_settings): the room goes on without
        reopening. Settings a room cannot have are refused naming room.toml, and nothing changes; so is a
        new member that is not a persona here. Returns the settings saved."""
        settings = self.store.load(slug)
        data = settings.model_dump()
        data.update({field: _plain(value) for field, value in changes.items()})
        checked = checked_settings(data, self.store.folder(slug) / ROOM_FILE)
        for member in checked.slugs:
            if member not in settings.slugs:
                self._members.load(member)  # a clear error for a persona that is not there
        with self._lock:
            open_here = [c for c in self._conversations if c.slug == slug and not c.closed]
        for conversation in open_here:  # refuses a newcomer whose memory cannot open, before the save
            conversation.update_settings(checked)
        self.store.save(slug, checked)
        return checked

    # -- conversations and delivery -------------------------------------------------------------------
    def open(self, slug: str, rng: random.Random | None = None) -> RoomConversation:
        """The room's conversation, its members' runtimes opened and what a crash kept from any member
        delivered (catch_up). Blocks while the members' memories open: off the UI thread."""
        settings = self.store.load(slug)
        conversation = RoomConversation(
            slug,
            settings,
            self.store.folder(slug),
            self.journal(slug),
            self.deliver,
            self._members.runtime,
            self._members.load,
            rng,
        )
        conversation.catch_up()
        with self._lock:
            self._conversations.add(conversation)
        return conversation

    def journal(self, slug: str) -> RoomJournal:
        """The room's journal, opened once here for every conversation and delivery of the room."""
        with self._lock:
            journal = self._journals.get(slug)
            if journal is None:
                journal = self._journals[slug] = RoomJournal(self.store.folder(slug))
            return journal

    def deliver(
        self,
        slug: str,
        author: str | None,
        name: str,
        text: str,
        reply_id: int | None = None,
        *,
        to: Sequence[str],
        wait: bool = True,
    ) -> HeardLine:
        """A line enters the room: into its journal (committed), then to each of `to` but the author (who
        said it already). wait=True: each member has heard it on return (a conversation's next answer
        must hear the line before it); wait=False: each hears it on its own queue, and nothing here waits
        on another member's queue (a member writing first is on its own queue thread, and two members
        writing at once must not wait on each other). A crash between the journal and a member is mended
        at the room's next open (RoomConversation.catch_up)."""
        line = self.journal(slug).add(author, name, text, iso(self._clock.now()), reply_id)
        key = room_key(slug)
        for member in to:
            if member == author:
                continue
            runtime = self._members.runtime(member)
            if wait:
                runtime.rooms.hear(key, [line])
            else:
                runtime.rooms.hear_later(key, [line])
        return line

    def _written_first(self, topic: str, payload: dict[str, Any]) -> None:
        """A member wrote first in a room (runtime/life.py): delivered to the others, without waiting."""
        room = RoomKey.parse(payload.get("room"))
        if room is None:
            return
        slug = room.slug
        author = payload["persona"]
        try:
            members = self.store.load(slug).slugs
            name = self._members.load(author).settings.name
            self.deliver(slug, author, name, payload["text"], payload["message_id"], to=members, wait=False)
        except NexusArkError as exc:  # the room went meanwhile: the message stays in its writer's memory
            log.warning("a message written first in %s did not reach the room: %s", room, exc)

    def close(self) -> None:
        """Close the journals (the app closes; conversations still open are closed by their owners)."""
        with self._lock:
            journals, self._journals = list(self._journals.values()), {}
        for journal in journals:
            journal.close()


def _plain(value: Any) -> Any:
    """A change as plain data (a model's fields validated again with the room's)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
