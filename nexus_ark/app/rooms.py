"""NexusApp's rooms (mixed into NexusApp): the person with several personas at once (nexus_ark/rooms)."""

from __future__ import annotations

import random

from pydantic import ValidationError

from nexus_ark.config import problem_list
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.rooms.conversation import RoomConversation
from nexus_ark.rooms.room import RoomMemberSettings, RoomSettings, RoomStore
from nexus_ark.rooms.turn_taking import Strategy


class RoomsMixin:
    @property
    def rooms(self) -> RoomStore:
        return RoomStore(self.layout.rooms_dir)

    def create_room(self, name: str, members: list[str], strategy: Strategy = "natural") -> str:
        """A new room of these personas (each must open); returns its slug."""
        for slug in members:
            self.personas.load(slug)  # a clear error for a persona that is not there
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
                    self.rooms.save(slug, settings.model_copy(update={"strategy": strategy}))
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
        return conversation
