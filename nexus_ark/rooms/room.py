"""A room: the person and two to six personas talking together (issue 24). Its settings live in
rooms/<slug>/room.toml beside its journal (rooms/journal.py); each member's memory stays the member's own."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from nexus_ark.config import describe_validation_error, load_toml_model, save_toml_model
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.room_keys import RoomKey
from nexus_ark.notices import clipped, notice
from nexus_ark.paths import is_folder_name
from nexus_ark.personas.store import slugify
from nexus_ark.rooms.turn_taking import Strategy

ROOM_FILE = "room.toml"
MIN_MEMBERS, MAX_MEMBERS = 2, 6


class RoomMemberSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    persona: str = Field(min_length=1, description="the member persona's folder name (slug)")
    talkativeness: float = Field(0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    muted: bool = False


class RoomSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=80)
    members: list[RoomMemberSettings] = Field(min_length=MIN_MEMBERS, max_length=MAX_MEMBERS)
    strategy: Strategy = "natural"
    # At most this many persona messages after each of the person's (answers and their exchanges).
    cap: int = Field(3, ge=1, le=20)
    pause_s: float = Field(2.0, ge=0.0, le=60.0, allow_inf_nan=False)  # between replies in auto mode
    created_at: str = ""

    @field_validator("name")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("the name is empty")
        return value

    @model_validator(mode="after")
    def _distinct(self) -> RoomSettings:
        slugs = [m.persona for m in self.members]
        if len(set(slugs)) != len(slugs):
            raise ValueError("a persona is listed twice among the members")
        return self

    @property
    def slugs(self) -> list[str]:
        return [m.persona for m in self.members]


class RoomStore:
    """The rooms in the data folder: rooms/<slug>/room.toml, created, read, changed and deleted whole."""

    def __init__(self, rooms_dir: Path) -> None:
        self.dir = rooms_dir

    def folder(self, slug: str) -> Path:
        return self.dir / slug

    def list(self) -> list[tuple[str, RoomSettings | NexusArkError]]:
        """Every room, by slug: its settings, or why its file cannot be read (the others still list)."""
        found: list[tuple[str, RoomSettings | NexusArkError]] = []
        if not self.dir.is_dir():
            return found
        for folder in sorted(p for p in self.dir.iterdir() if (p / ROOM_FILE).is_file()):
            try:
                found.append((folder.name, self.load(folder.name)))
            except NexusArkError as exc:
                found.append((folder.name, exc))
        return found

    def load(self, slug: str) -> RoomSettings:
        path = self.folder(slug) / ROOM_FILE
        if not is_folder_name(slug) or not path.is_file():  # a name no folder can have names no room
            raise NexusArkError(
                notice("There is no room {room}.", room=clipped(slug)),
                hint=notice("`nexus-ark room list` shows the rooms there are."),
            )
        return load_toml_model(path, RoomSettings)

    def create(self, settings: RoomSettings, now: datetime) -> str:
        taken = {p.name for p in self.dir.iterdir()} if self.dir.is_dir() else set()
        slug = slugify(settings.name, taken)
        if slug == "persona":
            slug = slugify("room", taken)
        self.folder(slug).mkdir(parents=True, exist_ok=False)
        self.save(slug, settings.model_copy(update={"created_at": now.isoformat(timespec="seconds")}))
        return slug

    def save(self, slug: str, settings: RoomSettings) -> None:
        """Validated whole first: settings a room cannot have are refused, naming the file, and nothing is
        written."""
        path = self.folder(slug) / ROOM_FILE
        save_toml_model(path, checked_settings(settings, path))

    def title(self, key: str) -> str | None:
        """The title of the room a member knows as `key` ("room:<slug>"); None when it is not there."""
        room = RoomKey.parse(key)
        if room is None:
            return None
        try:
            return self.load(room.slug).name
        except NexusArkError:
            return None

    def delete(self, slug: str) -> None:
        """The room and its journal go; every member keeps what it heard and said there."""
        self.load(slug)  # a clear error for a room that is not there
        shutil.rmtree(self.folder(slug))


def checked_settings(settings: RoomSettings | dict, path: Path) -> RoomSettings:
    """Settings a room can have, validated whole (a model_copy(update=...) is not validated; a dict may hold
    anything): else NexusArkError naming the room's file (path) and each problem."""
    try:
        data = settings.model_dump() if isinstance(settings, BaseModel) else settings
        return RoomSettings.model_validate(data)
    except ValidationError as exc:
        raise NexusArkError(describe_validation_error(path, exc)) from None
