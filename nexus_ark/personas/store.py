"""Finding, creating and seeding persona folders in the user's data directory."""

from __future__ import annotations

import builtins  # `list` in the class is PersonaStore.list: annotations there say builtins.list
import os
import re
import shutil
import tempfile
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nexus_ark.config import (
    cannot_read,
    edit_toml_file,
    load_toml_model,
    problem_list,
    save_toml_model,
    toml_loads,
)
from nexus_ark.errors import ConfigError, NexusArkError, PersonaError
from nexus_ark.model_config import ModelConfig
from nexus_ark.notices import Notice, clipped, notice
from nexus_ark.paths import WINDOWS_RESERVED, is_folder_name
from nexus_ark.personas.model import (
    MEMORY_FILE,
    NAME_MAX,
    SETTINGS_FILE,
    SOUL_FILE,
    ModelSettings,
    PersonaInfo,
    PersonaSettings,
)

_SOUL_TEMPLATES = {
    "en": (
        "# {name}\n\n"
        "You are {name}, a companion who lives on this person's own computer.\n\n"
        "## Who you are\n- Warm, curious and honest.\n"
        "- You remember what matters to the person you talk with.\n\n"
        "## How you speak\n- Short, natural replies in English.\n"
    ),
    "ja": (
        "# {name}\n\n"
        "あなたは{name}。この人のパソコンの中で暮らす話し相手です。\n\n"
        "## あなたについて\n- 温かく、好奇心があり、正直です。\n- 相手にとって大切なことを覚えています。\n\n"
        "## 話し方\n- 自然で短い日本語で答えます。\n"
    ),
}


@dataclass
class Persona:
    slug: str
    folder: Path
    settings: PersonaSettings
    soul: str
    # What the persona calls the person: its own user_name, else the app's; "" when nobody said.
    user_name: str = ""

    @property
    def memory_path(self) -> Path:
        return self.folder / MEMORY_FILE


SLUG_MAX = 64  # deep data dirs on Windows still stay within MAX_PATH
AVATAR_FILE = "avatar.png"
AVATAR_MAX_BYTES = 4 * 1024 * 1024  # a scaled avatar is far smaller; this refuses what was not scaled
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def slugify(name: str, taken: set[str]) -> str:
    """A folder name that every OS can create: lowercase ASCII letters, digits and single dashes."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower())[:SLUG_MAX].strip("-") or "persona"
    if base in WINDOWS_RESERVED:
        base = f"{base}-persona"
    taken_folded = {t.casefold() for t in taken}  # Windows and macOS folders ignore case
    slug, n = base, 2
    while slug in taken_folded:
        slug, n = f"{base}-{n}", n + 1
    return slug


def soul_problem(folder: Path) -> str:
    """What is wrong with a persona's soul file, in words; "" when it is there and says something."""
    soul_file = folder / SOUL_FILE
    if not soul_file.is_file():
        return notice(
            "{name} is missing: the persona runs without its identity. Restore {path}.",
            name=SOUL_FILE,
            path=str(soul_file),
        )
    try:
        if not soul_file.read_text(encoding="utf-8").strip():
            return notice(
                "{name} is empty: the persona runs without its identity. Describe it in {path}.",
                name=SOUL_FILE,
                path=str(soul_file),
            )
    except (OSError, UnicodeDecodeError):
        return ""  # load() reports an unreadable soul as an error
    return ""


def _name_hint() -> Notice:
    return notice("A name is one line of 1 to {limit} characters. Nothing was created.", limit=NAME_MAX)


class PersonaStore:
    def __init__(self, root: Path, default_user_name: str = "") -> None:
        self.root = root
        # The app's name for the person (config.toml user_name); a persona's own user_name wins over it.
        self.default_user_name = default_user_name

    def slugs(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def list(self) -> list[PersonaInfo]:
        infos = []
        for slug in self.slugs():
            folder = self.root / slug
            try:
                persona = self.load(slug)
            except NexusArkError as exc:
                infos.append(PersonaInfo(slug=slug, folder=folder, name=slug, error=exc.message))
                continue
            s = persona.settings
            infos.append(
                PersonaInfo(
                    slug=slug,
                    folder=folder,
                    name=s.name,
                    language=s.language,
                    description=s.description,
                    warning=soul_problem(folder),
                )
            )
        return infos

    def slug_for(self, name: str) -> str:
        """The persona a person's word for it means: its folder's name as given, that name in another case
        ("Aria" for aria), or its display name when one persona alone has it ("ひかり" for hikari); else
        the word as given, which load() then says is no persona."""
        if is_folder_name(name) and (self.root / name).is_dir():
            return name
        wanted = _folded(name)
        infos = [p for p in self.list() if p.ok]
        for said in (lambda p: p.slug, lambda p: p.name):
            matches = [p.slug for p in infos if _folded(said(p)) == wanted]
            if len(matches) == 1:
                return matches[0]
        return name

    def _known(self) -> builtins.list[str]:
        """Each persona as a refusal names it: its folder's name, and the name the window shows when that
        differs ("hikari (ひかり)"), so a person who typed either sees which to use."""
        known = []
        for info in self.list():
            shown = _folded(info.name) != _folded(info.slug) and info.ok
            known.append(f"{info.slug} ({info.name})" if shown else info.slug)
        return known

    def load(self, slug: str) -> Persona:
        folder = self.root / slug
        if not is_folder_name(slug) or not folder.is_dir():
            known = ", ".join(self._known()) or notice("none")
            raise PersonaError(
                self._no_persona(slug),
                hint=notice("Known personas: {known}. `nexus-ark persona list` shows them.", known=known),
            )
        settings_file = folder / SETTINGS_FILE
        if not settings_file.exists():
            raise PersonaError(
                notice("The persona folder {folder} has no {name}.", folder=str(folder), name=SETTINGS_FILE)
            )
        settings = load_toml_model(settings_file, PersonaSettings)
        soul_file = folder / SOUL_FILE
        try:
            soul = soul_file.read_text(encoding="utf-8") if soul_file.exists() else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise PersonaError(
                notice("Cannot read the soul file {path}: {problem}.", path=str(soul_file), problem=str(exc)),
                hint=notice("Save it as UTF-8 text."),
            ) from exc
        user_name = settings.user_name or self.default_user_name
        return Persona(slug=slug, folder=folder, settings=settings, soul=soul, user_name=user_name)

    def create(self, name: str, language: str = "en", description: str = "") -> Persona:
        name = name.strip()
        if not name:
            raise PersonaError(notice("A persona needs a name."))
        try:
            settings = PersonaSettings(name=name, language=language, description=description)
        except ValidationError as exc:
            raise ConfigError(
                notice("Cannot create the persona: {problems}.", problems=problem_list(exc)),
                hint=_name_hint(),
            ) from exc
        slug = slugify(name, set(self.slugs()))
        folder = self.root / slug
        folder.mkdir(parents=True)
        (folder / SOUL_FILE).write_text(
            _SOUL_TEMPLATES[settings.language].format(name=name), encoding="utf-8"
        )
        save_toml_model(folder / SETTINGS_FILE, settings)
        return self.load(slug)

    def save_models(self, slug: str, chat: Mapping[str, object], internal: ModelConfig | None) -> Persona:
        """Set a persona's chat model (the keys given) and internal model (None: same as chat) in its
        persona.toml, editing the file in place so the person's comments and order survive."""
        persona = self.load(slug)  # refuses a file that is already broken, before we touch it
        path = persona.folder / SETTINGS_FILE
        raw = toml_loads(path.read_text(encoding="utf-8"))
        # exclude_unset: what the file already says plus what changed, not every default spelled out.
        chat_table = ModelSettings.model_validate({**raw.get("model", {}), **chat})
        changes: dict[str, object] = {"model": chat_table.model_dump(mode="json", exclude_unset=True)}
        if internal is None:
            changes["internal_model"] = None
        else:
            merged = {**raw.get("internal_model", {}), **internal.model_dump(mode="json", exclude_unset=True)}
            changes["internal_model"] = ModelConfig.model_validate(merged).model_dump(
                mode="json", exclude_unset=True
            )
        edit_toml_file(path, changes, PersonaSettings)
        return self.load(slug)

    def save_settings(self, slug: str, changes: Mapping[str, Any]) -> Persona:
        """Change some of a persona's settings, editing persona.toml in place: the person's comments, key
        order and untouched values stay as written.

        `changes` is nested like the file: a mapping changes the keys it names inside that table (the
        others stay), None removes a key (a table too: `internal_model = None` goes back to the chat
        model), a list or any other value replaces it. The result is validated as a whole first: a bad
        value raises ConfigError naming the field, and nothing is written."""
        persona = self.load(slug)  # refuses a file that is already broken, before we touch it
        path = persona.folder / SETTINGS_FILE
        try:
            raw = toml_loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(cannot_read(path, exc)) from exc
        merged = _merged(raw, changes)
        try:
            PersonaSettings.model_validate(merged)
        except ValidationError as exc:
            raise ConfigError(
                notice(
                    "{name}'s settings were not saved: {problems}",
                    name=persona.settings.name,
                    problems=problem_list(exc),
                ),
                hint=notice("Fix the field named above. Nothing was written."),
            ) from exc
        edit_toml_file(path, {key: merged.get(key) for key in changes}, PersonaSettings)
        return self.load(slug)

    def avatar_file(self, slug: str) -> Path:
        """Where the persona's picture is kept; it may not exist (no stat: read it off the UI thread)."""
        return self.root / slug / AVATAR_FILE

    def avatar_path(self, slug: str) -> Path | None:
        path = self.avatar_file(slug)
        return path if path.is_file() else None

    def set_avatar(self, slug: str, png: bytes) -> Path:
        """Store an avatar (PNG bytes, already scaled by the caller) as avatar.png in the persona's folder."""
        folder = self._folder(slug)
        if not png.startswith(PNG_SIGNATURE):
            raise PersonaError(
                notice("The avatar is not a PNG image."), hint=notice("Choose a PNG or JPEG picture.")
            )
        if len(png) > AVATAR_MAX_BYTES:
            raise PersonaError(
                notice(
                    "The avatar is too large ({size} KB; at most {limit} KB).",
                    size=len(png) // 1024,
                    limit=AVATAR_MAX_BYTES // 1024,
                )
            )
        target = folder / AVATAR_FILE
        fd, name = tempfile.mkstemp(dir=folder, prefix=AVATAR_FILE + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(png)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(name, target)
        except OSError as exc:
            Path(name).unlink(missing_ok=True)
            raise PersonaError(
                notice(
                    "Cannot save the avatar in {folder}: {problem}.", folder=str(folder), problem=exc.strerror
                )
            ) from exc
        return target

    def copy_files(self, slug: str, dest: Path) -> None:
        """Copy a persona's folder except its memory database (copy that with the database's own backup,
        which is consistent while the persona runs)."""
        shutil.copytree(
            self._folder(slug), dest, ignore=shutil.ignore_patterns(MEMORY_FILE + "*", "*.tmp", "__pycache__")
        )

    def duplicate(self, slug: str, name: str) -> Persona:
        """A copy of a persona's folder under a new name and slug, without its memory database (the app
        copies that). The copy's persona.toml keeps the original's comments; only its name changes."""
        original = self.load(slug)
        name = name.strip()
        try:
            PersonaSettings.model_validate({**original.settings.model_dump(), "name": name})
        except ValidationError as exc:
            raise ConfigError(
                notice("Cannot duplicate the persona: {problems}.", problems=problem_list(exc)),
                hint=_name_hint(),
            ) from exc
        new_slug = slugify(name, set(self.slugs()))
        self.copy_files(slug, self.root / new_slug)
        try:
            edit_toml_file(self.root / new_slug / SETTINGS_FILE, {"name": name}, PersonaSettings)
        except NexusArkError:
            self.remove(new_slug)
            raise
        return self.load(new_slug)

    def remove(self, slug: str) -> None:
        """Delete a persona's folder (the caller keeps a backup first)."""
        folder = self._folder(slug)
        try:
            shutil.rmtree(folder)
        except OSError as exc:
            raise PersonaError(
                notice(
                    "Could not delete all of {folder}: {problem}.", folder=str(folder), problem=exc.strerror
                ),
                hint=notice("Close programs using files in it and delete the folder by hand."),
            ) from exc

    def _folder(self, slug: str) -> Path:
        folder = self.root / slug
        if not is_folder_name(slug) or slug.startswith(".") or not folder.is_dir():
            raise PersonaError(self._no_persona(slug))
        return folder

    def _no_persona(self, slug: str) -> Notice:
        return notice("There is no persona {slug!r} in {root}.", slug=clipped(slug), root=str(self.root))

    def seed_from(self, shipped: Path, already_seeded: builtins.list[str]) -> builtins.list[str]:
        """Copy shipped personas that this data dir has never had. Returns the slugs now seeded.

        A persona is copied once: an existing folder is never overwritten, and one the user deleted
        (its slug is in already_seeded) does not come back.
        """
        copied: list[str] = []
        if not shipped.is_dir():
            return copied
        self.root.mkdir(parents=True, exist_ok=True)
        for src in sorted(shipped.iterdir()):
            if not (src / SETTINGS_FILE).is_file() or src.name in already_seeded:
                continue
            dest = self.root / src.name
            if not dest.exists():
                shutil.copytree(src, dest, ignore=shutil.ignore_patterns(MEMORY_FILE + "*", "__pycache__"))
            copied.append(src.name)
        return copied


def _merged(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`current` with `changes` applied the way save_settings describes (mappings merge, None removes)."""
    result = dict(current)
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = _merged(result[key], value)
        elif isinstance(value, Mapping):
            result[key] = _merged({}, value)
        else:
            result[key] = value
    return result


def _folded(name: str) -> str:
    """A name as compared: width and case folded (ＡＲＩＡ, aria and Aria are one)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()
