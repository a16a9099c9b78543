"""NexusApp's rooms (mixed into NexusApp): the person with several personas at once (nexus_ark/rooms)."""

from __future__ import annotations

import logging
import random
import weakref
from typing import Any

from pydantic import BaseModel, ValidationError

from nexus_ark.clock import iso
from nexus_ark.config import problem_list
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
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

log = logging.getLogger(__name__)


class RoomsMixin:
    @property
    def rooms(self) -> RoomStore:
        return RoomStore(self.layout.rooms_dir)

    def room_title(self, key: str) -> str | None:
        """The title of the room a member knows as `key` ("room:<slug>"); None when it is not there."""
        try:
            return self.rooms.load(key.removeprefix("room:")).name
        except NexusArkError:
            return None

    def _written_first_in_room(self, topic: str, payload: dict) -> None:
        """A member wrote first in a room (runtime/life.py): into the room's journal and to the other
        members, who hear it on their own queues. Called on the writer's queue thread: nothing here waits on
        another member's queue (two members writing at once must not wait on each other)."""
        room = payload.get("room") or ""
        if not room.startswith("room:"):
            return
        slug = room.removeprefix("room:")
        try:
            settings = self.rooms.load(slug)
            journal = RoomJournal(self.rooms.folder(slug))
            try:
                author = payload["persona"]
                line = journal.add(
                    author,
                    self.personas.load(author).settings.name,
                    payload["text"],
                    iso(self.clock.now()),
                    payload["message_id"],
                )
            finally:
                journal.close()
        except NexusArkError as exc:  # the room went meanwhile: the message stays in its writer's memory
            log.warning("a message written first in %s did not reach the room: %s", room, exc)
            return
        for member in settings.slugs:
            if member != author:
                runtime = self.runtime(member)
                runtime.queue.submit(
                    f"hear in {room}", lambda _stop, runtime=runtime: runtime.room_session(room).hear([line])
                )

    def create_room(self, name: str, members: list[str], strategy: Strategy = "natural") -> str:
        """A new room of these personas (each must open); returns its slug."""
        for slug in members:
            self.personas.load(slug)  # a clear error for a persona that is not there
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
            settings = RoomSettings(
                name=name, members=[RoomMemberSettings(persona=s) for s in members], strategy=strategy
            )
        except ValidationError as exc:
            raise NexusArkError(
                notice("The room {name} cannot be made: {problems}", name=name, problems=problem_list(exc)),
                hint=notice("A room has a name and two to six different personas."),
            ) from None
        return self.rooms.create(settings, self.clock.now())

    def room_for(self, members: list[str], strategy: Strategy | None = None) -> str:
        """The room of exactly these personas (the first one made), or a new one named after them."""
        wanted = sorted(members)
        for slug, settings in self.rooms.list():
            if isinstance(settings, RoomSettings) and sorted(settings.slugs) == wanted:
                if strategy is not None and settings.strategy != strategy:
                    self.update_room(slug, {"strategy": strategy})
                return slug
        names = [self.personas.load(s).settings.name for s in members]
        return self.create_room(" & ".join(names), members, strategy or "natural")

    def open_room(self, slug: str, rng: random.Random | None = None) -> RoomConversation:
        """The room's conversation, its members' runtimes opened and what a crash kept from any member
        delivered (catch_up). Blocks while the members' memories open: off the UI thread."""
        settings = self.rooms.load(slug)
        conversation = RoomConversation(
            slug,
            settings,
            self.rooms.folder(slug),
            self.runtime,
            self.personas.load,
            self.clock.now,
            rng,
        )
        conversation.catch_up()
        with self._state_lock:
            self._open_conversations().add(conversation)
        return conversation

    def _open_conversations(self) -> weakref.WeakSet[RoomConversation]:
        """The rooms' conversations opened here and not dropped (under _state_lock)."""
        return self.__dict__.setdefault("_room_conversations", weakref.WeakSet())

    def update_room(self, slug: str, changes: dict[str, Any]) -> RoomSettings:
        """Change a room's settings (changes: RoomSettings' fields, members as RoomMemberSettings or dicts):
        validated whole, saved to its room.toml, and handed to each conversation of the room open here,
        which takes them between turns (RoomConversation.update_settings): the room goes on without
        reopening. Settings a room cannot have are refused naming room.toml, and nothing changes; so is a
        new member that is not a persona here. Returns the settings saved."""
        settings = self.rooms.load(slug)
        data = settings.model_dump()
        data.update({field: _plain(value) for field, value in changes.items()})
        checked = checked_settings(data, self.rooms.folder(slug) / ROOM_FILE)
        for member in checked.slugs:
            if member not in settings.slugs:
                self.personas.load(member)  # a clear error for a persona that is not there
        with self._state_lock:
            open_here = [c for c in self._open_conversations() if c.slug == slug and not c.closed]
        for conversation in open_here:  # refuses a newcomer whose memory cannot open, before the save
            conversation.update_settings(checked)
        self.rooms.save(slug, checked)
        return checked


def _plain(value: Any) -> Any:
    """A change as plain data (a model's fields validated again with the room's)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
